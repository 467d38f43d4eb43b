#pragma once
// The agents' shapes, shared by the kernels and the host code that chooses among them
// (agent_choice.hpp): tile sizes, the shared memory each layout takes, and the parameters each
// agent's kernel receives. Host-compilable (no CUDA headers), so that the dispatch can be tested
// without a GPU.
#include <cstddef>
#include <cstdint>

#include "twobody/config.hpp"
#include "twobody/detail/exact/counting_bounds.hpp"
#include "twobody/detail/exact/fast_path.hpp"

namespace twobody::cuda {
constexpr int kThreads = 256;                   // threads per block
constexpr int kPerThread = 8;                   // anchor points held in registers per thread
constexpr int kAnchors = kThreads * kPerThread;  // anchors per work item
constexpr int kChunk = 4096;                    // partners per work item

// Auto: where an item's walk over sub-tiles of kThreads partners from j0 starts: past those whose
// every partner is at or below every anchor of the item (anchors from i0), which hold no wanted
// pair (an item straddling the diagonal starts up to its anchors' count of partners below it).
// (`width`: the sub-tiles' partners, the block's threads.)
TWOBODY_HD std::uint32_t first_wanted_subtile(bool is_auto, std::uint32_t i0, std::uint32_t j0,
                                              std::uint32_t width = kThreads) {
  return is_auto && i0 + 1 > j0 ? j0 + (i0 + 1 - j0) / width * width : j0;
}

// Histogram pairs near an edge that a warp settles together, at most (counting_tiles.cuh).
constexpr int kSettleQueue = 64;

// Shared memory of the counting tiles (counting_tiles.cuh): the partner tile (a float4 a thread)
// and, for a histogram, `copies` interleaved copies of nbins + 2 slots and each warp's queue of
// pairs to settle (two 32-bit indices an entry, on an 8-byte boundary: the copies' words rounded
// up to even).
constexpr std::size_t counting_tiles_smem(bool histogram, int nbins, int copies) {
  const std::size_t words = static_cast<std::size_t>(nbins + 2) * static_cast<std::size_t>(copies);
  return sizeof(float) * 4 * kThreads +
         (histogram ? sizeof(unsigned) * ((words + 1) & ~std::size_t(1)) + sizeof(unsigned) * 2 * kSettleQueue * (kThreads / 32)
                    : 0);
}

constexpr int kGridThreads = 256;  // the grid agent's block
constexpr int kGridWarps = kGridThreads / 32;
constexpr int kTensorAnchors = 512;  // anchors of a tensor-core item: 8 warps × 64

// What a pair produces (pair_output.cuh): seed 000's types I (Reduce), II (Histogram), III
// (PairList), per-point reductions, and per-point vector sums (forces: reduce::PointSums).
enum class OutputMode { Reduce, Histogram, PairList, PerPoint, PointSums };

// Shared memory the output needs beyond a traversal's own tiles (laid out first); `copies` counts
// every sub-histogram of the block (all slots); `regions` the jackknife regions: block-wide
// arrays for the histogram (64-bit), the anchors' regions (64-bit), the partners' regions (32-bit)
// and, weighted, their sums (see HistogramOutput::end_unit). `key_table`: the bin table of 1-D keys
// (binned pair functions have none); `sums`: the mean separation sums, last.
constexpr std::size_t pair_output_smem(OutputMode mode, bool weighted, int nbins, int ncells, int copies, int stride,
                                       int regions = 0, bool key_table = true, bool sums = false) {
  std::size_t b = 0;
  if (mode == OutputMode::Histogram) {
    if (key_table) b += sizeof(BandPair) * (nbins + 1);
    // Exact sums (output/exact_sum_atomics.cuh): 16 bytes a bin.
    if (weighted) b += 2 * sizeof(unsigned long long) * nbins;
    b += sizeof(unsigned) * stride * copies;
    if (key_table) b += sizeof(std::uint16_t) * ncells;
    if (regions > 0)
      b = (b + 7) / 8 * 8 + sizeof(unsigned long long) * nbins +
          (sizeof(unsigned long long) + sizeof(unsigned) + (weighted ? 2 * sizeof(unsigned long long) : 0)) * regions * nbins;
    if (sums) b = (b + 7) / 8 * 8 + 2 * 2 * sizeof(unsigned long long) * nbins;
  }
  return b;
}

// Shared memory of the partner tile (and its weights) of a block of `threads`, laid out first.
constexpr std::size_t pair_tile_smem(int dim, bool weighted, int threads = kThreads) {
  return (sizeof(float) * static_cast<std::size_t>(dim) + (weighted ? sizeof(double) : 0)) * static_cast<std::size_t>(threads);
}
template <int D>
constexpr std::size_t pair_tile_smem(bool weighted, int threads = kThreads) {
  return pair_tile_smem(D, weighted, threads);
}

// Shared memory the brute-force agent needs for a given shape: the partner tile, then the output's
// (`key_table`, `sums`: pair_output_smem's).
constexpr std::size_t pair_kernel_smem(int dim, OutputMode mode, bool weighted, int nbins, int ncells, int copies, int stride,
                                       bool key_table = true, bool sums = false, int threads = kThreads) {
  return pair_tile_smem(dim, weighted, threads) +
         pair_output_smem(mode, weighted, nbins, ncells, copies, stride, 0, key_table, sums);
}
template <int D>
constexpr std::size_t pair_kernel_smem(OutputMode mode, bool weighted, int nbins, int ncells, int copies, int stride,
                                       bool key_table = true, bool sums = false, int threads = kThreads) {
  return pair_kernel_smem(D, mode, weighted, nbins, ncells, copies, stride, key_table, sums, threads);
}

// The counting tiles' parameters (counting_tiles.cuh).
struct CountingTilesShape {
  // Count: thresholds in key space (r²); has_lo when the range starts above zero.
  double t_hi = 0, t_lo = 0;
  float band_hi = 0, band_lo = 0;  // |s'| <= band: settle
  float t_diff = 0;                // t_hi − t_lo as float (s'_lo = s'_hi + t_diff)
  bool has_lo = false;
  // Histogram: q = d'·inv_width with d' = d − lo clamped to [d_min, d_max] (when `clamp`; else
  // lo = 0); the guard f± = fma(d', guard_scale, guard_lo | guard_hi), near an edge when
  // bits(f−) ^ bits(f+) >= guard_limit (counting_bounds.hpp, equal_width_guard).
  float inv_width = 0, lo = 0, d_min = 0, d_max = 0;
  float guard_scale = 0, guard_lo = 0, guard_hi = 0;
  unsigned guard_limit = 0;
  bool clamp = false;
  double lo64 = 0, inv_width64 = 0;  // the float64 settlement's first guess of the bin
  int copies = 32;
};

// The tensor-core counts' parameters (tensor_count_tiles.cuh).
struct TensorCountShape {
  // Half precision (HalfGram): every value below in units scaled by scale² (coordinates by scale,
  // a power of two); TF32: scale 1.
  float scale = 1.f;
  double t_hi = 0;                 // r₁² (key space)
  float band_hi = 0, band_lo = 0;  // |s'| <= band: settle
  float t_diff = 0;                // r₁² − r₀² as float (s'_lo = s'_hi + t_diff)
  bool has_lo = false;             // the range starts above zero
};

// The tensor-core histograms' parameters (tensor_histogram_tiles.cuh).
struct TensorHistogramShape {
  TensorHistogramGuard guard;
  float inv_width = 0;  // fl(1/w)
  float magic = 0;      // 1.5·2^(23−F) + offset (F fractional bits); the item adds h·2^-F
  float s_below = 0;    // Clamp, lo > 0: (lo − w/4)², slot 0 (below the first edge, certain)
  float s_above = 0;    // Clamp: (hi + w/4)², slot nbins + 1 (beyond the last edge, certain)
  int copies = 1;
  double lo64 = 0, inv_width64 = 0;  // the float64 settlement's first guess of the bin
};

// Shared memory of the tensor-core histograms beyond their static arrays: the interleaved copies
// and the warps' queues.
constexpr std::size_t tensor_histogram_smem(int nbins, int copies) {
  const std::size_t words = static_cast<std::size_t>(nbins + 2) * static_cast<std::size_t>(copies);
  return sizeof(unsigned) * ((words + 1) & ~std::size_t(1)) + sizeof(unsigned) * 2 * kSettleQueue * (kThreads / 32);
}
// Their static shared memory (the partners' float4 staging, the reductions).
constexpr std::size_t kTensorHistogramStaticSmem = sizeof(float) * 4 * kThreads * 4 + 256;

// The same for the FP64 tensor-core histogram (fp64_tensor_histogram_tiles.cuh).
constexpr std::size_t fp64_tensor_histogram_smem(int nbins, int copies) {
  const std::size_t words = static_cast<std::size_t>(nbins + 2) * static_cast<std::size_t>(copies);
  return sizeof(unsigned) * ((words + 1) & ~std::size_t(1)) + sizeof(unsigned) * 2 * kSettleQueue * (kThreads / 32);
}
// Its static shared memory (the staged fragments and |b|², the item counter).
constexpr std::size_t kFp64TensorStaticSmem = sizeof(double) * kThreads * 5 + 16;

// How the FP64 histogram's d' meets the bins: kNoClamp where no pair can leave slots 0 .. nbins + 1
// (the first edge at 0, no sentinels, every d' below the last edge plus a quarter bin: q < nbins +
// 1/4, slot nbins + 1 at most and within the guard's fixed-point range), kTop (first edge at 0) or
// kBoth (a first edge above 0).
enum Fp64Clamp : int { kNoClamp = 0, kTop = 1, kBoth = 2 };
}  // namespace twobody::cuda
