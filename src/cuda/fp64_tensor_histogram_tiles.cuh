#pragma once
// Counting tiles on FP64 tensor cores: histograms of equal-width bins in r over all pairs
// (Euclidean, unweighted, up to three dimensions) whose d² comes from mma.m8n8k4.f64, so that a
// pair costs its binning alone. The counting tiles (counting_tiles.cuh) spend six instructions a
// pair on d² from differences, of about thirteen; here one DMMA yields 64 pairs' d², and a pair
// costs nine: the funnel shift, sqrt.approx, the clamp, the slot's FMA and IMAD, the shared add,
// and the guard's two FMAs and LOP3 (the counting tiles' own, counting_bounds.hpp).
//
// Why float64 and not the FP16/TF32 forms of the tensor-core counts: a histogram has an edge near
// every pair, so its guard must be as narrow as float32's differences. The half-precision Gram
// form keeps ~2^-18 of the largest addend (the MMA's accumulation) and, even about item centres,
// would leave ~0.2% of the pairs in the guard at 256 bins (a revisit in most blocks of a warp);
// in float64 the products of float32 coordinates are exact and the sum keeps 2^-50 of the extent,
// so the guard is the counting tiles' (counting_bounds.hpp, fp64_tensor_bound) and no recentring,
// Morton order or per-item guard is needed. The H100's FP64 tensor rate (128 FMA a clock an SM:
// 32 pairs' d² a clock, K = 4) is twice what the square roots (16 a clock) can use.
//
// The MMA: A (8 anchors × K) = [−2x, −2y, −2z, |a|²], B (K × 8 partners) = [x, y, z, 1], and the
// accumulator C = |b|² of the lane's two partners (the same for every 8-row tile of the warp), all
// in float64 from the float32 coordinates scaled by σ (a power of two: every d² of a pair below
// 1/4). Its float64 d² becomes float32 in one funnel shift of its two words: the exponent's low 8
// bits and the top 23 bits of the mantissa, s·2^128 (truncated) for every s in [2^-246, 1) (scaled
// coordinates below 2^-100 are flushed to zero so that no non-zero d² lies below; the error is in
// the bound; the float's sign bit, the exponent's ninth, is dropped), so d' = sqrt.approx = σ·d·2^64, and 1/w, lo and the clamp are scaled to match.
//
// A block of 8 warps takes items of kTensorAnchors = 512 anchors (64 a warp: eight 8-row tiles,
// their A fragments one double a lane each) × kChunk partners, staged 256 at a time in shared
// memory already in the fragments' layout. Each lane bins 16 pairs of a warp's block of 64 × 8
// and ORs their guards into four words; when a lane's word says one lies within δ of an edge (one
// block in ten or fewer at 256 bins), the warp recomputes the block's MMAs (deterministic), the
// lanes take those pairs out of their counted slots and queue them, and the queue is settled in
// float64 64 at a time. Blocks straddling the diagonal of an auto-correlation go pair by pair.
#include <cstdint>

#include "twobody/detail/cuda/agent_choice.hpp"
#include "twobody/detail/cuda/counting_tiles.cuh"
#include "twobody/detail/cuda/kernel_shape.hpp"
#include "twobody/detail/cuda/pair_output.cuh"
#include "twobody/detail/cuda/tensor_count_tiles.cuh"
#include "twobody/detail/exact/fast_path.hpp"

namespace twobody::cuda {

// Sentinels (points beyond a ragged end): |a|² or |b|² of 3/8 (scaled) with coordinates 0, so a
// pair holding one has σ²d² ≥ 3/8, beyond every edge (σ·(hi + w/2) < 1/2), and two of them 3/4,
// still below 1 (the funnel shift's range).
constexpr double kFp64Sentinel = 0.375;
constexpr float kFlushBelow = 0x1p-100f;  // scaled coordinates below this are taken as 0

namespace fp64_tensor_detail {
__device__ __forceinline__ void mma_f64(double (&d)[2], double a, double b, double2 c) {
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%4,%5};"
      : "=d"(d[0]), "=d"(d[1])
      : "d"(a), "d"(b), "d"(c.x), "d"(c.y));
}
// s·2^128 as float32, truncated, for s = 0 or s in [2^-246, 1): bits 60..29 of the double (the
// exponent's low nine bits, 23 bits of mantissa), whose top bit (the exponent's bit 8, set for
// every such s) lands on the float's sign and is dropped by the square root's |x| operand. For
// s < 1 the exponent e + 1023 lies in [777, 1022], whose low eight bits are e + 128: the float's
// exponent.
__device__ __forceinline__ float funnel(double s) {
  unsigned r;
  asm("shf.l.wrap.b32 %0, %1, %2, 3;" : "=r"(r) : "r"(__double2loint(s)), "r"(__double2hiint(s)));
  return fabsf(__uint_as_float(r));
}
// A scaled coordinate (flushed to zero below 2^-100: every non-zero d² then lies above 2^-246).
__device__ __forceinline__ double scaled(float x, float scale) {
  const float y = __fmul_rn(x, scale);
  return fabsf(y) < kFlushBelow ? 0.0 : static_cast<double>(y);
}
// d' = σ·d·2^64 from the funnel value, clamped: kBoth: d' − lo into [d_min, d_max]; kTop (d' ≥ 0):
// into [0, d_max].
template <int Clamp>
__device__ __forceinline__ float bin_distance(float f, const CountingTilesShape& g) {
  const float d = counting_detail::sqrt_approx(f);
  if constexpr (Clamp == kBoth)
    return fminf(fmaxf(__fadd_rn(d, -g.lo), g.d_min), g.d_max);
  else if constexpr (Clamp == kTop)
    return fminf(d, g.d_max);
  else
    return d;
}
}  // namespace fp64_tensor_detail

// Blocks a multiprocessor (launch bounds): 3 leave 80 registers, with a few spills outside the
// hot loop, and ran 6–9% faster than 2 with 128 registers and none (bench/RESULTS.md, session 12):
// the kernel needs the warps to hide its DMMA and MUFU latencies more than it needs the registers.
// (-DTWOBODY_FP64_BLOCKS=n builds another, for measurements.)
#ifndef TWOBODY_FP64_BLOCKS
#define TWOBODY_FP64_BLOCKS 3
#endif
constexpr int kFp64Blocks = TWOBODY_FP64_BLOCKS;

namespace fp64_tensor_detail {
// A fragments of anchors w0 .. w0 + 63: anchor w0 + 8m + g, column t4 (−2x, −2y, −2z, |a|²).
template <int D, class Proxy, class Exact>
__device__ __forceinline__ void load_anchor_fragments(const PairKernelArgs<Proxy, Exact>& args, std::uint32_t w0, int g,
                                                      int t4, float scale, double (&a)[8]) {
#pragma unroll
  for (int m = 0; m < 8; ++m) {
    const std::uint32_t i = w0 + m * 8 + g;
    double x[3] = {0.0, 0.0, 0.0}, n2 = kFp64Sentinel;
    if (i < args.A.n) {
      n2 = 0.0;
#pragma unroll
      for (int d = 0; d < D; ++d) {
        x[d] = scaled(args.A.x[d][i], scale);
        n2 = fma(x[d], x[d], n2);
      }
    }
    a[m] = t4 == 0 ? -2.0 * x[0] : t4 == 1 ? -2.0 * x[1] : t4 == 2 ? -2.0 * x[2] : n2;
  }
}

// The sub-tile's partners as B fragments and |b|²: partner jt + tid (a sentinel from j1 on) is
// column tid % 8 of block tid / 8.
template <int D, class Proxy, class Exact>
__device__ __forceinline__ void stage_partner_fragments(const PairKernelArgs<Proxy, Exact>& args, std::uint32_t jt,
                                                        std::uint32_t j1, float scale, double* s_bf, double* s_cb) {
  const int tid = threadIdx.x;
  const std::uint32_t jl = jt + tid;
  double y[3] = {0.0, 0.0, 0.0}, n2 = kFp64Sentinel;
  if (jl < j1) {
    n2 = 0.0;
#pragma unroll
    for (int d = 0; d < D; ++d) {
      y[d] = scaled(args.B.x[d][jl], scale);
      n2 = fma(y[d], y[d], n2);
    }
  }
  double2* f = reinterpret_cast<double2*>(s_bf + (tid / 8) * 32 + (tid % 8) * 4);
  f[0] = make_double2(y[0], y[1]);
  f[1] = make_double2(y[2], 1.0);
  s_cb[tid] = n2;
}

// A warp's part of an item: its anchors w0 .. w0 + 63 (A fragments) against the staged sub-tile,
// a block of 8 partners at a time (B fragments at nt), binned by the lane's counters, with the
// warp's queue of pairs near an edge.
template <int D, int Clamp, bool PairFlags, class Proxy, class Exact>
struct Fp64WarpItem {
  const PairKernelArgs<Proxy, Exact>& args;
  const CountingTilesShape& shape;
  const LaneCounters& hist;
  const double* s_bf;
  const double* s_cb;
  uint2* s_queue;
  const double (&a)[8];
  std::uint32_t w0, j1;
  int lane, g, t4;
  unsigned& queued;  // entries in this warp's queue (the same in every lane)
  unsigned long long& n_settled;

  // The warp's queued pairs go to their float64 bins, one a lane, in the lane's copy.
  __device__ __forceinline__ void drain() {
    settle_warp_queue<D, false>(args, shape, hist.s_hist, hist.copies, hist.lane_copy, lane, s_queue, queued, n_settled);
  }
  __device__ __forceinline__ float distance(double s) const {
    return bin_distance<Clamp>(funnel(s), shape);
  }
  __device__ __forceinline__ bool near_edge(float d) const {
    return counting_detail::guard_bits(d, shape) >= shape.guard_limit;
  }
  __device__ __forceinline__ unsigned* counter(float d) const { return hist.counter(counting_detail::slot_bits(d, shape)); }

  // One block of 8 partners (its fragments at nt): the lane's 16 d², eight MMAs.
  __device__ __forceinline__ void gram(int nt, double (&s)[8][2]) const {
    const double b = s_bf[nt * 32 + lane];
    const double2 c = reinterpret_cast<const double2*>(s_cb)[nt * 4 + t4];
#pragma unroll
    for (int m = 0; m < 8; ++m) mma_f64(s[m], a[m], b, c);
  }

  // The lane's flagged pairs (bit 2m + q: tile m, partner pb + 2·t4 + q) join the warp's queue, a
  // round per pair of the busiest lane.
  __device__ __forceinline__ void queue_flagged(unsigned flags, std::uint32_t pb) {
    while (__any_sync(0xffffffffu, flags != 0u)) {
      if (queued + 32 > kSettleQueue) drain();
      const unsigned active = __ballot_sync(0xffffffffu, flags != 0u);
      if (flags) {
        const int bit = __ffs(flags) - 1;
        flags &= flags - 1;
        const unsigned below = __popc(active & ((1u << lane) - 1u));
        s_queue[queued + below] = make_uint2(w0 + (bit >> 1) * 8 + g, pb + 2 * t4 + (bit & 1));
      }
      queued += __popc(active);
    }
  }

  // The hot loop: the block's 16 pairs of the lane counted in their rounded slots, their guards
  // ORed into `marked` (a word per pair of 8-row tiles) or, PairFlags, a pair near an edge not
  // counted (an add of 0) but flagged (bit 2m + q).
  __device__ __forceinline__ void count_block(int nt, unsigned (&marked)[4], unsigned& flagged) const {
    // In two halves of four MMAs: eight results of two registers each, live together, made ptxas
    // spill the loop's own counters.
    const double b = s_bf[nt * 32 + lane];
    const double2 c = reinterpret_cast<const double2*>(s_cb)[nt * 4 + t4];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      double s[4][2];
#pragma unroll
      for (int m = 0; m < 4; ++m) mma_f64(s[m], a[4 * h + m], b, c);
#pragma unroll
      for (int m = 0; m < 4; ++m)
#pragma unroll
        for (int q = 0; q < 2; ++q) {
          const float d = distance(s[m][q]);
          if constexpr (PairFlags) {
            const bool near = near_edge(d);
            atomicAdd(counter(d), near ? 0u : 1u);
            flagged |= near ? 1u << (2 * (4 * h + m) + q) : 0u;
          } else {
            atomicAdd(counter(d), 1u);
            marked[(4 * h + m) >> 1] |= counting_detail::guard_bits(d, shape);
          }
        }
    }
  }

  // Rare: the 8-row tiles whose words a lane marked, again (the MMAs give the same values); the
  // lanes' pairs within δ leave their counted slot (an add of 0 or −1, without branches) and join
  // the warp's queue, a round per pair of the busiest lane. (Revisiting all sixteen pairs with a
  // branch around each subtraction cost a quarter of the time at 256 bins, where one block in six
  // has a pair near an edge.)
  __device__ __forceinline__ void requeue_marked_tiles(int nt, std::uint32_t pb, const unsigned (&marked)[4]) {
    unsigned fired = 0;
#pragma unroll
    for (int w = 0; w < 4; ++w) fired |= marked[w] >= shape.guard_limit ? 1u << w : 0u;
    fired = __reduce_or_sync(0xffffffffu, fired);
    const double b = s_bf[nt * 32 + lane];
    const double2 c = reinterpret_cast<const double2*>(s_cb)[nt * 4 + t4];
    unsigned flags = 0;  // bit 2m + q
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      if (!(fired & 1u << w)) continue;
      double s[2][2];
      mma_f64(s[0], a[2 * w], b, c);
      mma_f64(s[1], a[2 * w + 1], b, c);
#pragma unroll
      for (int mm = 0; mm < 2; ++mm)
#pragma unroll
        for (int q = 0; q < 2; ++q) {
          const int m = 2 * w + mm;
          const float d = distance(s[mm][q]);
          const std::uint32_t i = w0 + m * 8 + g, j = pb + 2 * t4 + q;
          const bool near = near_edge(d) && i < args.A.n && j < j1;
          atomicAdd(counter(d), near ? ~0u : 0u);
          flags |= near ? 1u << (2 * m + q) : 0u;
        }
    }
    queue_flagged(flags, pb);
  }

  // A block off the diagonal: every pair counted in its rounded slot; when a lane's pair lies
  // within δ of an edge, the warp goes back over the block (rare).
  __device__ __forceinline__ void bin_block(int nt, std::uint32_t pb) {
    unsigned marked[4] = {0u, 0u, 0u, 0u};  // four short chains of LOP3s instead of one 16 deep
    unsigned flagged = 0;                   // PairFlags: bit 2m + q
    count_block(nt, marked, flagged);
    if constexpr (PairFlags) {
      // Sentinels are never near an edge (clamped a quarter bin beyond the last, or absent).
      queue_flagged(flagged, pb);
      return;
    }
    const unsigned mk = (marked[0] | marked[1]) | (marked[2] | marked[3]);
    if (!__any_sync(0xffffffffu, mk >= shape.guard_limit)) return;
    requeue_marked_tiles(nt, pb, marked);
  }

  // A block on the diagonal: pairs j > i of real points only, each settled at once when near.
  __device__ __forceinline__ void diagonal_block(int nt, std::uint32_t pb) {
    double s[8][2];
    gram(nt, s);
#pragma unroll
    for (int m = 0; m < 8; ++m)
#pragma unroll
      for (int q = 0; q < 2; ++q) {
        const std::uint32_t i = w0 + m * 8 + g, j = pb + 2 * t4 + q;
        if (i >= args.A.n || j >= j1 || j <= i) continue;
        const float d = distance(s[m][q]);
        if (near_edge(d)) {
          const int k = equal_width_float64_bin<D>(args, shape.lo64, shape.inv_width64, i, j);
          if (k >= 0) atomicAdd(&hist.s_hist[(k + 1) * hist.copies + hist.lane_copy], 1u);
          ++n_settled;
        } else {
          atomicAdd(counter(d), 1u);
        }
      }
  }

  // The staged sub-tile (partners jt .. jt + kThreads − 1), a block of 8 partners at a time.
  __device__ __forceinline__ void bin_subtile(std::uint32_t jt) {
    if (!(args.is_auto && jt <= w0 + 63)) {
      // Every block of this sub-tile above the warp's anchors (almost all of them): no tests.
#pragma unroll 2
      for (int nt = 0; nt < kThreads / 8; ++nt) bin_block(nt, jt + nt * 8);
      return;
    }
#pragma unroll 1
    for (int nt = 0; nt < kThreads / 8; ++nt) {
      const std::uint32_t pb = jt + nt * 8;  // partners pb .. pb + 7
      // Warp-uniform: every partner at or below every anchor of the warp; some of them.
      if (pb + 8 <= w0 + 1) continue;
      if (pb > w0 + 63)
        bin_block(nt, pb);
      else
        diagonal_block(nt, pb);
    }
  }
};
}  // namespace fp64_tensor_detail

// Clamp: an Fp64Clamp. PairFlags: for thousands of bins (more than ~0.4% of the pairs in the
// guard, where most blocks would be revisited): each pair's verdict in a bit (two instructions
// more), a pair in the guard not counted at all (an add of 0) but queued at once.
template <int D, int Clamp, bool PairFlags, class Proxy, class Exact>
__global__ void __launch_bounds__(kThreads, kFp64Blocks)
    fp64_tensor_histogram_kernel(__grid_constant__ const PairKernelArgs<Proxy, Exact> args, const CountingTilesShape shape,
                                 const float scale) {
  static_assert(D >= 1 && D <= 3, "FP64 tensor-core histograms take up to three coordinates");
  using namespace fp64_tensor_detail;
  __shared__ double s_bf[kThreads * 4];  // 32 blocks of 8 partners × 32 lanes: B fragments
  __shared__ double s_cb[kThreads];      // |b|² of each partner (C fragments)
  __shared__ unsigned long long s_item;
  extern __shared__ __align__(16) unsigned char smem[];
  unsigned* s_hist = reinterpret_cast<unsigned*>(smem);  // (nbins + 2) × copies, bin-major
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int g = lane / 4, t4 = lane % 4;
  const int nslots = args.nbins + 2;
  const int copies = shape.copies;
  uint2* s_queue = reinterpret_cast<uint2*>(s_hist + ((nslots * copies + 1) & ~1)) + warp * kSettleQueue;
  for (int k = tid; k < nslots * copies; k += kThreads) s_hist[k] = 0;
  const LaneCounters hist = lane_counters(s_hist, copies);  // the counter of slot_bits v (counting_tiles.cuh)
  unsigned long long n_settled = 0;
  unsigned queued = 0;

  for (TileItem item; claim_tile_item(args, s_item, kTensorAnchors, item);) {
    const std::uint32_t i0 = item.i0, j0 = item.j0, j1 = item.j1;
    if (args.is_auto && j1 <= i0 + 1) continue;
    const std::uint32_t w0 = i0 + warp * 64;  // this warp's anchors: w0 .. w0 + 63
    double a[8];
    load_anchor_fragments<D>(args, w0, g, t4, scale, a);
    Fp64WarpItem<D, Clamp, PairFlags, Proxy, Exact> warp_item{args, shape, hist, s_bf, s_cb, s_queue, a, w0, j1,
                                                              lane, g,    t4,   queued, n_settled};
    for (std::uint32_t jt = first_wanted_subtile(args.is_auto, i0, j0); jt < j1; jt += kThreads) {
      __syncthreads();
      stage_partner_fragments<D>(args, jt, j1, scale, s_bf, s_cb);
      __syncthreads();
      warp_item.bin_subtile(jt);
    }
    if (queued) warp_item.drain();

    // 32-bit shared counters hold at most kTensorAnchors × kChunk = 2^21 pairs: flushed every item.
    // A copy may have wrapped below zero (a pair taken out by its lane after another lane's
    // settlement added): the copies are summed modulo 2^32, exact since the item's count is below.
    flush_histogram_copies(args, s_hist, nslots, copies);
  }

  for (int off = 16; off > 0; off >>= 1) n_settled += __shfl_down_sync(0xffffffffu, n_settled, off);
  if (lane == 0 && n_settled) atomicAdd(args.settled, n_settled);
}

// The FP64 tensor-core histogram (launch: agent_launch.cuh's AgentLaunch), clamped as the dispatch
// chose, with flag bits a pair or marked words.
template <int D, bool PairFlags, class P, class F>
auto fp64_tensor_histogram_variant(Fp64Clamp clamp) {
  return clamp == kBoth  ? fp64_tensor_histogram_kernel<D, kBoth, PairFlags, P, F>
         : clamp == kTop ? fp64_tensor_histogram_kernel<D, kTop, PairFlags, P, F>
                         : fp64_tensor_histogram_kernel<D, kNoClamp, PairFlags, P, F>;
}

template <int D, class P, class F, class Launch>
void launch_fp64_tensor_histogram(const AgentChoice& c, Launch& launch) {
  const auto kernel = c.pair_flags ? fp64_tensor_histogram_variant<D, true, P, F>(c.fp64_clamp)
                                   : fp64_tensor_histogram_variant<D, false, P, F>(c.fp64_clamp);
  launch(kernel, kThreads, c.smem, "fp64_tensor_histogram_kernel", c.tiles, static_cast<float>(c.fp64_scale));
}

}  // namespace twobody::cuda
