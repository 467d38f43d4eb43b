#pragma once
// The brute-force traversal agent for reductions (type I), histograms (type II) and pair lists
// (type III); what a pair produces is PairOutput's business (pair_output.cuh).
//
// A persistent grid claims work items from a global counter. An item is a tile of kAnchors anchor
// points (kThreads threads × kPerThread anchors each, held in registers) against a chunk of
// kChunk partner points, staged through shared memory kThreads at a time (seed 000's Reg-SHM
// tiling, with several anchors per thread so each partner read from shared memory feeds
// kPerThread pairs). Auto traversal skips items entirely at or below the diagonal and checks
// j > i only in items that cross it. For pair lists an item is the unit the output buffer
// resumes when its pool runs out (pair_pool.hpp): each warp writes its anchors' pairs per 32
// partners, and a stopped item is recorded with the pairs each warp wrote.
#include <cstdint>

#include "twobody/detail/cuda/agent_choice.hpp"
#include "twobody/detail/cuda/kernel_shape.hpp"
#include "twobody/detail/cuda/pair_output.cuh"
#include "twobody/detail/exact/fast_path.hpp"

namespace twobody::cuda {

// Means: mean separation sums beside a histogram (PairOutput).
// Threads: the block's threads, which is also the partner sub-tile's width (an item: Threads ×
// kPerThread anchors); histograms may take 512 where seed 000's occupancy model prefers it
// (launch_generic in run_on_device.cuh), everything else runs 256.
template <int D, OutputMode Mode, bool Weighted, class Proxy, class Exact, bool Means = false, int Threads = kThreads>
// Histograms are latency-bound on shared atomics and want warps (1 024 threads a multiprocessor:
// at most 64 registers, no spills for the unweighted kernel); the count and pair list want
// registers for their eight anchors (512 threads: up to 128).
__global__ void __launch_bounds__(Threads, (Mode == OutputMode::Histogram ? 4 : 2) * kThreads / Threads)
    pair_kernel(__grid_constant__ const PairKernelArgs<Proxy, Exact> args) {
  static_assert(Threads % 32 == 0 && Threads <= 512 && (Mode == OutputMode::Histogram || Threads == kThreads),
                "blocks of other than 256 threads are built for histograms only");
  constexpr int kBlock = Threads;                    // threads, and partners a sub-tile
  constexpr int kItemAnchors = Threads * kPerThread;  // anchors an item
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr bool kHist = Mode == OutputMode::Histogram;
  constexpr bool kList = Mode == OutputMode::PairList;
  float* s_b = reinterpret_cast<float*>(smem);                 // [D][kBlock]
  double* s_bw = reinterpret_cast<double*>(s_b + D * kBlock);  // [kBlock] if Weighted
  __shared__ unsigned long long s_item;
  const int tid = threadIdx.x;
  using Output = PairOutput<D, Mode, Weighted, Proxy, Exact, false, kPerThread, Means>;
  Output out(args, reinterpret_cast<unsigned char*>(s_bw + (Weighted ? kBlock : 0)), tid, kBlock);
  const float lo0 = out.lo0, hi0 = out.hi0, lo1 = out.lo1, hi1 = out.hi1;
  auto classify = [&](float s) { return out.classify(s); };
  auto accept = [&](int k, std::uint32_t i, std::uint32_t j, double wprod) { out.accept(k, i, j, wprod); };
  auto settle = [&](std::uint32_t i, std::uint32_t j) { return out.settle(i, j); };
  // PairList: every anchor slot's pairs among 32 partners from `jfirst` (bits), written warp-wide.
  // Slot r's bits and anchor are picked by compares, so the arrays stay in registers while
  // emit_hits is expanded once.
  auto emit_rows = [&](const unsigned(&hits)[kPerThread], const std::uint32_t(&ia)[kPerThread], std::uint32_t jfirst) {
    unsigned any = 0;
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) any |= hits[r];
    if (!__any_sync(0xffffffffu, any != 0)) return;  // short ranges: most groups have no pair
#pragma unroll 1
    for (int r = 0; r < kPerThread; ++r) {
      unsigned h = 0;
      std::uint32_t i = 0;
#pragma unroll
      for (int q = 0; q < kPerThread; ++q) {
        h = q == r ? hits[q] : h;
        i = q == r ? ia[q] : i;
      }
      out.emit_hits(h, i, jfirst);
    }
  };
  __shared__ unsigned long long s_written[kList ? kBlock / 32 : 1];  // PairList: per warp, its pairs of the tile written

  for (;;) {
    __syncthreads();
    if (tid == 0) s_item = atomicAdd(args.next_item, 1ull);
    __syncthreads();
    if (s_item >= args.n_items) break;
    // Pair lists: the task's tile (resumed ones first) and where this warp resumes it.
    const unsigned long long item = out.begin_task(s_item, tid / 32);
    const std::uint32_t I = static_cast<std::uint32_t>(item / args.chunks_per_row);
    const std::uint32_t J = static_cast<std::uint32_t>(item % args.chunks_per_row);
    const std::uint32_t i0 = I * kItemAnchors;
    const std::uint32_t j0 = J * kChunk;
    const std::uint32_t j1 = min(j0 + kChunk, args.B.n);
    if (args.is_auto && j1 <= i0 + 1) continue;  // every partner at or below every anchor

    float a[kPerThread][D];
    double wa[kPerThread];
    std::uint32_t ia[kPerThread];
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
      ia[r] = i0 + r * kBlock + tid;
      const bool ok = ia[r] < args.A.n;
#pragma unroll
      for (int d = 0; d < D; ++d) a[r][d] = ok ? args.A.x[d][ia[r]] : 0.f;
      if constexpr (Weighted) wa[r] = ok ? args.A.w[ia[r]] : 0.0;
    }
    const bool anchors_full = i0 + kItemAnchors <= args.A.n;
    unsigned item_count = 0;  // Reduce: pairs certainly inside, this item (< 2^32 by the tile shape)

    for (std::uint32_t jt = first_wanted_subtile(args.is_auto, i0, j0, kBlock); jt < j1; jt += kBlock) {
      __syncthreads();
      const std::uint32_t jl = jt + tid;
      if (jl < j1) {
#pragma unroll
        for (int d = 0; d < D; ++d) s_b[d * kBlock + tid] = args.B.x[d][jl];
        if constexpr (Weighted) s_bw[tid] = args.B.w[jl];
      }
      __syncthreads();
      const int nj = min(static_cast<std::uint32_t>(kBlock), j1 - jt);
      const bool full = anchors_full && nj == kBlock && (!args.is_auto || jt >= i0 + kItemAnchors);
      if (full) {
        // Every pair of this sub-tile is wanted: no index checks in the hot loop, and pairs to be
        // settled in float64 are only marked (one bit per partner) and handled after each group of
        // 32 partners, so the hot loop has no rarely-taken branch in it.
        for (int g = 0; g < kBlock; g += 32) {
          unsigned unsure[kPerThread], hits[kPerThread];  // hits: PairList, pairs in range
#pragma unroll
          for (int r = 0; r < kPerThread; ++r) unsure[r] = hits[r] = 0u;
#pragma unroll 2
          for (int t = 0; t < 32; ++t) {
            const int jj = g + t;
            const unsigned bit = 1u << t;
            float b[D];
#pragma unroll
            for (int d = 0; d < D; ++d) b[d] = s_b[d * kBlock + jj];
#pragma unroll
            for (int r = 0; r < kPerThread; ++r) {
              const float s = args.proxy(a[r], b);
              if (Output::kCountsOnly && args.direct) {
                // One shared load decides most pairs; the rest are resolved after the group.
                unsure[r] |= out.count_certain(out.lookup(s)) ? bit : 0u;
              } else if constexpr (kHist) {
                const int k = classify(s);
                if (k >= 0) accept(k, ia[r], jt + jj, Weighted ? wa[r] * s_bw[jj] : 0.0);
                unsure[r] |= (k == -2) ? bit : 0u;
              } else {
                // Range: certainly inside between the bands, to be settled inside a band.
                const bool in = (s >= hi0) & (s < lo1);
                const bool near = (s >= lo0) & (s < hi1) & !in;
                if constexpr (Mode == OutputMode::Reduce) {
                  item_count += in;
                  if constexpr (Weighted) out.r_wsum += in ? grid_steps(args.pair_grid, wa[r] * s_bw[jj]) : 0;
                } else if constexpr (Mode == OutputMode::PerPoint) {
                  if (in) out.count_point(ia[r], jt + jj);
                } else if constexpr (kList) {
                  hits[r] |= in ? bit : 0u;
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
              if (Output::kCountsOnly && args.direct) {
                float b[D];
#pragma unroll
                for (int d = 0; d < D; ++d) b[d] = s_b[d * kBlock + g + t];
                out.resolve(args.proxy(a[r], b), ia[r], j, 0.0);
              } else {
                const int k = settle(ia[r], j);
                if constexpr (kList) {
                  hits[r] |= k >= 0 ? 1u << t : 0u;
                } else {
                  if (k >= 0) accept(k, ia[r], j, Weighted ? wa[r] * s_bw[g + t] : 0.0);
                }
              }
            }
          }
          if constexpr (kList) emit_rows(hits, ia, jt + g);
        }
      } else {
        unsigned hits[kPerThread] = {};  // PairList: pairs in range among the current 32 partners
        for (int jj = 0; jj < nj; ++jj) {
          float b[D];
#pragma unroll
          for (int d = 0; d < D; ++d) b[d] = s_b[d * kBlock + jj];
          const std::uint32_t j = jt + jj;
#pragma unroll
          for (int r = 0; r < kPerThread; ++r) {
            if (ia[r] >= args.A.n || (args.is_auto && j <= ia[r])) continue;
            int k = classify(args.proxy(a[r], b));
            if (k == -2) k = settle(ia[r], j);
            if constexpr (kList) {
              hits[r] |= k >= 0 ? 1u << (jj % 32) : 0u;
            } else {
              if (k >= 0) accept(k, ia[r], j, Weighted ? wa[r] * s_bw[jj] : 0.0);
            }
          }
          if constexpr (kList) {
            if (jj % 32 == 31 || jj + 1 == nj) {
              emit_rows(hits, ia, jt + jj / 32 * 32);
#pragma unroll
              for (int r = 0; r < kPerThread; ++r) hits[r] = 0u;
            }
          }
        }
      }
    }

    if constexpr (Mode == OutputMode::Reduce) out.r_count += item_count;
    // 32-bit shared counters: at most kItemAnchors x kChunk = 2^24 pairs per item, flushed per item.
    out.flush_block(tid, kBlock);
    out.flush_anchors(ia);
    if constexpr (kList) {
      // A tile whose warps ran out of pages is recorded with each warp's pairs written, and the
      // block stops: the host drains the pool and a later launch resumes the tile.
      if (tid % 32 == 0) s_written[tid / 32] = out.written;
      if (__syncthreads_or(out.list_stopped())) {
        if (tid == 0) out.record_stopped(item, s_written);
        break;
      }
    }
  }
  out.finish(tid);
}

// The generic agent over all pairs (launch: agent_launch.cuh's AgentLaunch): blocks of 256 threads,
// or of 512 for histograms where the dispatch's occupancy model prefers them.
template <int D, OutputMode M, bool W, class P, class Exact, bool Means, class Launch>
void launch_generic_agent(const AgentChoice& c, Launch& launch) {
  if constexpr (M == OutputMode::Histogram)
    if (c.threads == 512) return launch(pair_kernel<D, M, W, P, Exact, Means, 512>, 512, c.smem, "pair_kernel");
  launch(pair_kernel<D, M, W, P, Exact, Means>, kThreads, c.smem, "pair_kernel");
}

}  // namespace twobody::cuda
