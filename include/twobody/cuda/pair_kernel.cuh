#pragma once
// The CUDA agent for reductions (type I), histograms (type II) and pair lists (type III).
//
// A persistent grid claims work items from a global counter. An item is a tile of kAnchors anchor
// points (kThreads threads × kPerThread anchors each, held in registers) against a chunk of
// kChunk partner points, staged through shared memory kThreads at a time (seed 000's Reg-SHM
// tiling, with several anchors per thread so each partner read from shared memory feeds
// kPerThread pairs). Auto traversal skips items entirely at or below the diagonal and checks
// j > i only in items that cross it.
//
// Each pair's proxy is computed in float32 and classified against the guard bands; pairs inside a
// band are settled with the float64 pair function and the float64 edges (fast_path.hpp).
//   Reduce and PairList: one range, its four band thresholds in registers.
//   Histogram: the float-bits table of fast_path.hpp in shared memory (two or three shared loads
//   per pair, whatever the number of bins). Counts go to `copies` privatised sub-histograms (lane
//   % copies, seed 000 Algorithm 4) laid out with an odd stride, so that lanes adding to the same
//   bin of their own copies hit different banks; they are summed into the global 64-bit histogram
//   after every item, so 32-bit shared counters never overflow.
#include <cstdint>

#include "twobody/cuda/kernel_shape.hpp"
#include "twobody/fast_path.hpp"

namespace twobody::cuda {


enum class OutputMode { Reduce, Histogram, PairList };

struct DeviceSet {
  const float* x[kMaxDim];
  const double* x64[kMaxDim];
  const double* w;
  std::uint32_t n;
};

template <class Proxy, class Exact>
struct PairKernelArgs {
  DeviceSet A, B;
  bool is_auto;
  Proxy proxy;
  Exact exact;
  // Range classification (Reduce, PairList): bands of the two edges.
  float range_lo0, range_hi0, range_lo1, range_hi1;
  // Table classification (Histogram).
  const BandPair* bands;  // nbins + 1
  const std::uint16_t* cells;
  int ncells;
  float lo0;
  std::uint32_t base_bits;
  int shift;
  const double* edges64;  // nbins + 1 key edges, for settling
  int nbins, steps, copies, hist_stride;
  unsigned long long* counts;   // nbins (Reduce: 1)
  double* wsums;                // nbins, when weighted
  unsigned long long* settled;  // pairs re-evaluated in float64
  unsigned long long* next_item;
  unsigned long long n_items;
  std::uint32_t chunks_per_row;
  // Pair lists
  unsigned long long* list_count;
  unsigned long long list_capacity;
  std::uint32_t* list_i;
  std::uint32_t* list_j;
  double* list_value;
};

// Shared memory the kernel needs for a given shape, in the order the kernel lays it out.
template <int D>
constexpr std::size_t pair_kernel_smem(OutputMode mode, bool weighted, int nbins, int ncells, int copies, int stride) {
  std::size_t b = sizeof(float) * D * kThreads;
  if (weighted) b += sizeof(double) * kThreads;
  if (mode == OutputMode::Histogram) {
    b += sizeof(BandPair) * (nbins + 1);
    if (weighted) b += sizeof(double) * nbins;
    b += sizeof(unsigned) * stride * copies;
    b += sizeof(std::uint16_t) * ncells;
  }
  return b;
}

template <int D, OutputMode Mode, bool Weighted, class Proxy, class Exact>
// Histograms are latency-bound on shared atomics and want warps (four blocks: at most 64
// registers, no spills for the unweighted kernel); the count and pair list want registers for
// their eight anchors (two blocks: up to 128).
__global__ void __launch_bounds__(kThreads, Mode == OutputMode::Histogram ? 4 : 2) pair_kernel(const PairKernelArgs<Proxy, Exact> args) {
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr bool kHist = Mode == OutputMode::Histogram;
  const int nb = args.nbins;
  float* s_b = reinterpret_cast<float*>(smem);                   // [D][kThreads]
  double* s_bw = reinterpret_cast<double*>(s_b + D * kThreads);  // [kThreads] if Weighted
  BandPair* s_bands = reinterpret_cast<BandPair*>(s_bw + (Weighted ? kThreads : 0));
  double* s_wh = reinterpret_cast<double*>(s_bands + (kHist ? nb + 1 : 0));
  unsigned* s_hist = reinterpret_cast<unsigned*>(s_wh + (kHist && Weighted ? nb : 0));
  std::uint16_t* s_cells = reinterpret_cast<std::uint16_t*>(s_hist + (kHist ? args.hist_stride * args.copies : 0));
  __shared__ unsigned long long s_item;

  const int tid = threadIdx.x;
  if constexpr (kHist) {
    for (int k = tid; k <= nb; k += kThreads) s_bands[k] = args.bands[k];
    for (int k = tid; k < args.ncells; k += kThreads) s_cells[k] = args.cells[k];
    for (int k = tid; k < args.hist_stride * args.copies; k += kThreads) s_hist[k] = 0;
    if constexpr (Weighted)
      for (int k = tid; k < nb; k += kThreads) s_wh[k] = 0.0;
  }
  unsigned* my_hist = s_hist + (tid % 32 % args.copies) * args.hist_stride;
  const float lo0 = kHist ? args.lo0 : args.range_lo0;
  const float hi0 = args.range_hi0, lo1 = args.range_lo1, hi1 = args.range_hi1;
  unsigned long long n_settled = 0, r_count = 0;
  double r_wsum = 0.0;

  // The float32 verdict on a proxy: bin >= 0, -1 outside, -2 to be settled in float64.
  auto classify = [&](float s) -> int {
    if constexpr (kHist) {
      return classify_table(s_bands, s_cells, args.ncells, lo0, args.base_bits, args.shift, nb, s);
    } else {
      const bool in = (s >= hi0) & (s < lo1);
      const bool near = (s >= lo0) & (s < hi1);
      return in ? 0 : (near ? -2 : -1);
    }
  };
  // One accepted pair (bin k, anchor i, partner j).
  auto accept = [&](int k, std::uint32_t i, std::uint32_t j, double wprod) {
    if constexpr (kHist) {
      atomicAdd(&my_hist[k], 1u);
      if constexpr (Weighted) atomicAdd(&s_wh[k], wprod);
    } else if constexpr (Mode == OutputMode::Reduce) {
      ++r_count;
      if constexpr (Weighted) r_wsum += wprod;
    } else {
      double a64[D], b64[D];
#pragma unroll
      for (int d = 0; d < D; ++d) {
        a64[d] = args.A.x64[d][i];
        b64[d] = args.B.x64[d][j];
      }
      const unsigned long long slot = atomicAdd(args.list_count, 1ull);
      if (slot < args.list_capacity) {
        args.list_i[slot] = i;
        args.list_j[slot] = j;
        args.list_value[slot] = args.exact.natural_of(args.exact.key(a64, b64));
      }
    }
  };
  // The float64 rule, for pairs inside a guard band.
  auto settle = [&](std::uint32_t i, std::uint32_t j) {
    double a64[D], b64[D];
#pragma unroll
    for (int d = 0; d < D; ++d) {
      a64[d] = args.A.x64[d][i];
      b64[d] = args.B.x64[d][j];
    }
    ++n_settled;
    return find_bin_unpadded(args.edges64, nb, args.steps, args.exact.key(a64, b64));
  };

  for (;;) {
    __syncthreads();
    if (tid == 0) s_item = atomicAdd(args.next_item, 1ull);
    __syncthreads();
    const unsigned long long item = s_item;
    if (item >= args.n_items) break;
    const std::uint32_t I = static_cast<std::uint32_t>(item / args.chunks_per_row);
    const std::uint32_t J = static_cast<std::uint32_t>(item % args.chunks_per_row);
    const std::uint32_t i0 = I * kAnchors;
    const std::uint32_t j0 = J * kChunk;
    const std::uint32_t j1 = min(j0 + kChunk, args.B.n);
    if (args.is_auto && j1 <= i0 + 1) continue;  // every partner at or below every anchor

    float a[kPerThread][D];
    double wa[kPerThread];
    std::uint32_t ia[kPerThread];
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
      ia[r] = i0 + r * kThreads + tid;
      const bool ok = ia[r] < args.A.n;
#pragma unroll
      for (int d = 0; d < D; ++d) a[r][d] = ok ? args.A.x[d][ia[r]] : 0.f;
      if constexpr (Weighted) wa[r] = ok ? args.A.w[ia[r]] : 0.0;
    }
    const bool anchors_full = i0 + kAnchors <= args.A.n;
    unsigned item_count = 0;  // Reduce: pairs certainly inside, this item (< 2^32 by the tile shape)

    for (std::uint32_t jt = j0; jt < j1; jt += kThreads) {
      __syncthreads();
      const std::uint32_t jl = jt + tid;
      if (jl < j1) {
#pragma unroll
        for (int d = 0; d < D; ++d) s_b[d * kThreads + tid] = args.B.x[d][jl];
        if constexpr (Weighted) s_bw[tid] = args.B.w[jl];
      }
      __syncthreads();
      const int nj = min(static_cast<std::uint32_t>(kThreads), j1 - jt);
      const bool full = anchors_full && nj == kThreads && (!args.is_auto || jt >= i0 + kAnchors);
      if (full) {
        // Every pair of this sub-tile is wanted: no index checks in the hot loop, and pairs to be
        // settled in float64 are only marked (one bit per partner) and handled after each group of
        // 32 partners, so the hot loop has no rarely-taken branch in it.
        for (int g = 0; g < kThreads; g += 32) {
          unsigned unsure[kPerThread];
#pragma unroll
          for (int r = 0; r < kPerThread; ++r) unsure[r] = 0u;
#pragma unroll 2
          for (int t = 0; t < 32; ++t) {
            const int jj = g + t;
            const unsigned bit = 1u << t;
            float b[D];
#pragma unroll
            for (int d = 0; d < D; ++d) b[d] = s_b[d * kThreads + jj];
#pragma unroll
            for (int r = 0; r < kPerThread; ++r) {
              const float s = args.proxy(a[r], b);
              if constexpr (kHist) {
                const int k = classify(s);
                if (k >= 0) accept(k, ia[r], jt + jj, Weighted ? wa[r] * s_bw[jj] : 0.0);
                unsure[r] |= (k == -2) ? bit : 0u;
              } else {
                // Range: certainly inside between the bands, to be settled inside a band.
                const bool in = (s >= hi0) & (s < lo1);
                const bool near = (s >= lo0) & (s < hi1) & !in;
                if constexpr (Mode == OutputMode::Reduce) {
                  item_count += in;
                  if constexpr (Weighted) r_wsum += in ? wa[r] * s_bw[jj] : 0.0;
                } else {
                  if (in) accept(0, ia[r], jt + jj, 0.0);
                }
                unsure[r] |= near ? bit : 0u;
              }
            }
          }
#pragma unroll
          for (int r = 0; r < kPerThread; ++r) {
            while (unsure[r]) {
              const int t = __ffs(unsure[r]) - 1;
              unsure[r] &= unsure[r] - 1;
              const std::uint32_t j = jt + g + t;
              const int k = settle(ia[r], j);
              if (k >= 0) accept(k, ia[r], j, Weighted ? wa[r] * s_bw[g + t] : 0.0);
            }
          }
        }
      } else {
        for (int jj = 0; jj < nj; ++jj) {
          float b[D];
#pragma unroll
          for (int d = 0; d < D; ++d) b[d] = s_b[d * kThreads + jj];
          const std::uint32_t j = jt + jj;
#pragma unroll
          for (int r = 0; r < kPerThread; ++r) {
            if (ia[r] >= args.A.n || (args.is_auto && j <= ia[r])) continue;
            int k = classify(args.proxy(a[r], b));
            if (k == -2) k = settle(ia[r], j);
            if (k >= 0) accept(k, ia[r], j, Weighted ? wa[r] * s_bw[jj] : 0.0);
          }
        }
      }
    }

    r_count += item_count;
    if constexpr (kHist) {
      __syncthreads();
      for (int k = tid; k < nb; k += kThreads) {
        unsigned long long c = 0;
        for (int h = 0; h < args.copies; ++h) {
          c += s_hist[h * args.hist_stride + k];
          s_hist[h * args.hist_stride + k] = 0;
        }
        if (c) atomicAdd(&args.counts[k], c);
        if constexpr (Weighted) {
          if (s_wh[k] != 0.0) atomicAdd(&args.wsums[k], s_wh[k]);
          s_wh[k] = 0.0;
        }
      }
    }
  }

  // Per-thread totals: warp sums, then one atomic per warp.
  for (int off = 16; off > 0; off >>= 1) {
    n_settled += __shfl_down_sync(0xffffffffu, n_settled, off);
    if constexpr (Mode == OutputMode::Reduce) {
      r_count += __shfl_down_sync(0xffffffffu, r_count, off);
      if constexpr (Weighted) r_wsum += __shfl_down_sync(0xffffffffu, r_wsum, off);
    }
  }
  if (tid % 32 == 0) {
    if (n_settled) atomicAdd(args.settled, n_settled);
    if constexpr (Mode == OutputMode::Reduce) {
      if (r_count) atomicAdd(&args.counts[0], r_count);
      if constexpr (Weighted) atomicAdd(&args.wsums[0], r_wsum);
    }
  }
}

}  // namespace twobody::cuda
