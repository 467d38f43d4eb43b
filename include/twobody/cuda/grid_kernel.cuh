#pragma once
// The grid traversal agent (limited-range statistics): every warp claims a unit of the work queue
// — up to 32 anchors of one cell — and pairs them with the points of the cell's neighbour runs
// (grid_shape.cuh): for auto runs its own cell as a triangle (j > i) and the runs of higher cell
// id (the half shell, seed 004's UNICOMP), for cross runs every neighbour. Partners come 32 at a
// time, one per lane, coalesced from the sorted arrays, and are passed round the warp by shuffles
// (seed 000 Algorithm 6's register tiling); a cell with fewer than 32 anchors splits the warp into
// groups that take alternate partners, so sparse cells still keep the lanes busy.
//
// Warps never wait for each other: each owns its sub-histograms (PairOutput with one slot per
// warp) and flushes them itself before a 32-bit counter could overflow.
#include <cstdint>

#include "twobody/cuda/grid_index.cuh"
#include "twobody/cuda/pair_output.cuh"

namespace twobody::cuda {

constexpr int kGridThreads = 256;
constexpr int kGridWarps = kGridThreads / 32;

struct GridWork {
  GridShape shape;
  const std::uint32_t* a_start;
  const std::uint32_t* b_start;
  const uint2* units;  // (cell, first anchor), heaviest cells first
};

template <int D, OutputMode Mode, bool Weighted, class Proxy, class Exact>
__global__ void __launch_bounds__(kGridThreads) grid_kernel(const PairKernelArgs<Proxy, Exact> args, const GridWork work) {
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr bool kHist = Mode == OutputMode::Histogram;
  const int tid = threadIdx.x, lane = tid % 32;
  PairOutput<D, Mode, Weighted, Proxy, Exact> out(args, smem, tid, kGridThreads, kHist ? kGridWarps : 1);
  __syncthreads();
  unsigned long long since_flush = 0;  // increments this warp made to its sub-histograms

  for (;;) {
    unsigned long long u = 0;
    if (lane == 0) u = atomicAdd(args.next_item, 1ull);
    u = __shfl_sync(0xffffffffu, u, 0);
    if (u >= args.n_items) break;
    const uint2 unit = work.units[u];
    const std::uint32_t c = unit.x, a0 = unit.y;
    const std::uint32_t cell_end = work.a_start[c + 1];
    const int na = static_cast<int>(min(32u, cell_end - a0));
    const int groups = 32 / na, group = lane / na;
    const bool lane_on = group < groups;
    const std::uint32_t i = a0 + static_cast<std::uint32_t>(lane % na);
    float a[D];
#pragma unroll
    for (int d = 0; d < D; ++d) a[d] = args.A.x[d][i];
    const double wa = Weighted ? args.A.w[i] : 0.0;

    // Partners [j0, j1) of the sorted B set; `check`: only j > i (the triangle of a cell).
    auto tiles = [&](std::uint32_t j0, std::uint32_t j1, bool check) {
      for (std::uint32_t jt = j0; jt < j1; jt += 32) {
        const std::uint32_t jl = jt + lane;
        const bool have = jl < j1;
        float bl[D];
#pragma unroll
        for (int d = 0; d < D; ++d) bl[d] = have ? args.B.x[d][jl] : 0.f;
        const double wl = Weighted && have ? args.B.w[jl] : 0.0;
        const int cnt = static_cast<int>(min(32u, j1 - jt));
        const int rounds = (cnt + groups - 1) / groups;
        for (int r = 0; r < rounds; ++r) {
          const int t = r * groups + group;
          const int src = t < 32 ? t : 31;
          float b[D];
#pragma unroll
          for (int d = 0; d < D; ++d) b[d] = __shfl_sync(0xffffffffu, bl[d], src);
          const double wb = Weighted ? __shfl_sync(0xffffffffu, wl, src) : 0.0;
          const std::uint32_t j = jt + static_cast<std::uint32_t>(t);
          if (lane_on && t < cnt && (!check || j > i)) out.pair(args.proxy(a, b), i, j, wa * wb);
        }
        if constexpr (kHist) {
          since_flush += static_cast<unsigned long long>(cnt) * static_cast<unsigned>(na);
          if (since_flush >= (1ull << 30)) {
            out.flush_warp(lane);
            since_flush = 0;
          }
        }
      }
    };

    if (args.is_auto) {
      tiles(a0 + 1, cell_end, true);
      for_each_neighbour_run(work.shape, c, [&](std::uint32_t lo, std::uint32_t hi) {
        lo = max(lo, c + 1);
        if (lo <= hi) tiles(work.b_start[lo], work.b_start[hi + 1], false);
      });
    } else {
      for_each_neighbour_run(work.shape, c, [&](std::uint32_t lo, std::uint32_t hi) {
        tiles(work.b_start[lo], work.b_start[hi + 1], false);
      });
    }
  }

  out.flush_warp(lane);
  out.flush_weights(tid, kGridThreads);
  out.finish(tid);
}

}  // namespace twobody::cuda
