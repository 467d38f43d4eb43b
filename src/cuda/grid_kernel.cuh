#pragma once
// The grid traversal agent (limited-range statistics): every warp claims a unit of the work queue
// — up to 32 anchors of one cell — and pairs them with the points of the cell's neighbour runs
// (grid_shape.cuh): for auto runs its own cell as a triangle (j > i) and the runs of higher cell
// id (the half shell, seed 004's UNICOMP), for cross runs every neighbour. Partners come 32 at a
// time, one per lane, coalesced from the sorted arrays, and are passed round the warp by shuffles
// (seed 000 Algorithm 6's register tiling); a cell with fewer than 32 anchors splits the warp into
// groups that take alternate partners, so sparse cells still keep the lanes busy.
//
// Windowed (when every neighbour cell has one periodic image, GridShape::images): the points of a
// cell are sorted along the last axis, so a run of cells along it is one sorted sequence. Each
// lane works out how far along that axis a partner in the run's column can be from its anchor
// (h = sqrt(r² − gap²), gap its distance to the column across the other axes), the warp takes the
// union of its lanes' windows and finds it in the run by a warp-wide binary search: only those
// partners are evaluated (Corrfunc's z-sorted cells, done per warp). The run's partners are moved
// next to the anchor cell by its image shift as they are loaded, so the proxy is a plain
// difference, with no minimum-image wrap per pair (the periodic error model covers the extra
// rounding of the shift).
//
// Warps never wait for each other: each owns its sub-histograms (PairOutput with one slot per
// warp) and flushes them itself before a 32-bit counter could overflow.
//
// Pair lists: a unit is what the output buffer resumes when its pool runs out (pair_pool.hpp).
// Each tile's pairs in range are marked as bits (one per partner) and written warp-wide after the
// tile; a warp whose unit ran out of pages skips the unit's remaining tiles, records the unit with
// the pairs it wrote, and stops.
#include <cstdint>

#include "twobody/detail/cuda/agent_choice.hpp"
#include "twobody/detail/cuda/grid_index.cuh"
#include "twobody/detail/cuda/pair_output.cuh"
#include "twobody/detail/exact/fast_proxies.hpp"

namespace twobody::cuda {

struct GridWork {
  GridShape shape;
  const std::uint32_t* a_start;
  const std::uint32_t* b_start;
  const uint2* units;  // (cell, first anchor), heaviest cells first
  // Windows: the float32 frame of the kernels' coordinates (cell 0's low corner, the cell widths),
  // (r_max + margin)², and the margin that covers float32 rounding of everything compared.
  float frame[kMaxDim];
  float width[kMaxDim];
  float reach2;
  float margin;
  unsigned long long* evaluations;  // pair evaluations made
};

namespace grid_detail {

// First index k in [lo, hi) with z[k] >= key (Strict: z[k] > key), or hi; z sorted. All lanes
// call it with the same arguments; each round probes 32 points at once.
template <bool Strict>
__device__ __forceinline__ std::uint32_t warp_bound(const float* z, std::uint32_t lo, std::uint32_t hi, float key,
                                                    int lane) {
  while (hi - lo > 32) {
    const std::uint32_t step = (hi - lo + 31) / 32;
    const std::uint32_t p = lo + static_cast<std::uint32_t>(lane) * step;
    const bool before = p < hi && (Strict ? z[p] <= key : z[p] < key);
    const int k = __popc(__ballot_sync(0xffffffffu, before));
    const std::uint32_t nlo = k > 0 ? lo + static_cast<std::uint32_t>(k - 1) * step + 1 : lo;
    hi = min(hi, lo + static_cast<std::uint32_t>(k) * step);
    lo = nlo;
  }
  const std::uint32_t p = lo + static_cast<std::uint32_t>(lane);
  const bool before = p < hi && (Strict ? z[p] <= key : z[p] < key);
  return lo + static_cast<std::uint32_t>(__popc(__ballot_sync(0xffffffffu, before)));
}

}  // namespace grid_detail

// Anchors: anchors per lane. 2 in dense cells (units of 64 anchors): each partner shuffled round
// the warp then serves two pairs per lane, halving the shuffles and the loop per pair.
// Means: mean separation sums beside a histogram (PairOutput).
template <int D, OutputMode Mode, bool Weighted, bool Windowed, class Proxy, class Exact, bool Regions = false,
          int Anchors = 1, bool Means = false>
__global__ void __launch_bounds__(kGridThreads) grid_kernel(__grid_constant__ const PairKernelArgs<Proxy, Exact> args,
                                                            __grid_constant__ const GridWork work) {
  static_assert(Anchors == 1 || (Anchors == 2 && Windowed && !Weighted && !Regions && !Means),
                "two anchors: unweighted windows");
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr bool kHist = Mode == OutputMode::Histogram;
  constexpr bool kList = Mode == OutputMode::PairList;
  constexpr int last = D - 1;
  const int tid = threadIdx.x, lane = tid % 32;
  PairOutput<D, Mode, Weighted, Proxy, Exact, Regions, 1, Means> out(args, smem, tid, kGridThreads, kHist ? kGridWarps : 1);
  __syncthreads();
  unsigned long long since_flush = 0;  // increments this warp made to its sub-histograms
  // Regions share block-wide 32-bit arrays among the 8 warps: each flushes 8x as often.
  constexpr unsigned long long kFlushAt = Regions ? (1ull << 27) : (1ull << 30);
  unsigned long long evaluations = 0;  // lane 0's count of the warp's pair evaluations

  for (;;) {
    unsigned long long u = 0;
    if (lane == 0) u = atomicAdd(args.next_item, 1ull);
    u = __shfl_sync(0xffffffffu, u, 0);
    if (u >= args.n_items) break;
    u = out.begin_task(u, 0);  // pair lists: the task's unit (resumed ones first)
    const uint2 unit = work.units[u];
    const std::uint32_t c = unit.x, a0 = unit.y;
    const std::uint32_t cell_end = work.a_start[c + 1];
    constexpr std::uint32_t kSpan = 32u * Anchors;
    const int na = static_cast<int>(min(kSpan, cell_end - a0));
    // One anchor a lane: a cell with fewer than 32 splits the warp into groups; two: lanes hold
    // anchors a0 + lane and a0 + 32 + lane.
    const int groups = Anchors == 1 ? 32 / na : 1, group = Anchors == 1 ? lane / na : 0;
    const bool full = na == static_cast<int>(kSpan);
    std::uint32_t i[Anchors];
    bool on[Anchors];
    float a[Anchors][D];
    double wa[Anchors];
#pragma unroll
    for (int q = 0; q < Anchors; ++q) {
      if constexpr (Anchors == 1) {
        i[q] = a0 + static_cast<std::uint32_t>(lane % na);
        on[q] = group < groups;
      } else {
        const int k = q * 32 + lane;
        on[q] = k < na;
        i[q] = a0 + static_cast<std::uint32_t>(on[q] ? k : 0);
      }
#pragma unroll
      for (int d = 0; d < D; ++d) a[q][d] = args.A.x[d][i[q]];
      wa[q] = Weighted ? args.A.w[i[q]] : 0.0;
    }
    if constexpr (Regions) out.begin_unit(args.A.region[i[0]]);
    // The anchor cell's low corner in the kernels' frame (windows).
    float corner[D];
    if constexpr (Windowed) {
      std::uint32_t rest = c;
#pragma unroll
      for (int d = last; d >= 0; --d) {
        const std::uint32_t n = static_cast<std::uint32_t>(work.shape.cells[d]);
        corner[d] = fmaf(static_cast<float>(rest % n), work.width[d], work.frame[d]);
        rest /= n;
      }
    }

    const float no_image[D] = {};
    // One pair; the proxy is a plain difference where partners were moved to their image.
    auto proxy = [&](int q, const float* b) {
      return Windowed ? SquaredDistanceProxy<D>{}(a[q], b) : args.proxy(a[q], b);
    };
    // Partners [j0, j1) of the sorted B set, moved by `image`; `check`: only j > i (the triangle
    // of a cell).
    auto tiles = [&](std::uint32_t j0, std::uint32_t j1, bool check, const float* image) {
      for (std::uint32_t jt = j0; jt < j1; jt += 32) {
        if (out.list_stopped()) break;  // pair lists: the pool ran out; a later launch resumes
        const std::uint32_t jl = jt + lane;
        const bool have = jl < j1;
        float bl[D];
#pragma unroll
        for (int d = 0; d < D; ++d) bl[d] = have ? args.B.x[d][jl] + image[d] : 0.f;
        const double wl = Weighted && have ? args.B.w[jl] : 0.0;
        const int rl = Regions && have ? args.B.region[jl] : 0;
        const int cnt = static_cast<int>(min(32u, j1 - jt));
        // Pairs the fast verdict leaves open, one bit per partner and anchor, resolved after the tile.
        unsigned unsure[Anchors], hits[Anchors];  // hits: PairList, pairs in range
#pragma unroll
        for (int q = 0; q < Anchors; ++q) unsure[q] = hits[q] = 0u;
        if (full && cnt == 32 && !check) {
          // The common case in dense cells: every lane an anchor, 32 partners, no triangle test.
#pragma unroll 4
          for (int t = 0; t < 32; ++t) {
            float b[D];
#pragma unroll
            for (int d = 0; d < D; ++d) b[d] = __shfl_sync(0xffffffffu, bl[d], t);
            const double wb = Weighted ? __shfl_sync(0xffffffffu, wl, t) : 0.0;
            const int rb = Regions ? __shfl_sync(0xffffffffu, rl, t) : -1;
            // Shifted in from the right (cheaper than a bit at t), reversed after the loop.
#pragma unroll
            for (int q = 0; q < Anchors; ++q) {
              if constexpr (kList) {
                const int k = out.classify(proxy(q, b));
                hits[q] = (hits[q] << 1) | (k == 0 ? 1u : 0u);
                unsure[q] = (unsure[q] << 1) | (k == -2 ? 1u : 0u);
              } else {
                unsure[q] = (unsure[q] << 1) |
                            (out.quick(proxy(q, b), i[q], jt + static_cast<std::uint32_t>(t), wa[q] * wb, rb) ? 0u : 1u);
              }
            }
          }
#pragma unroll
          for (int q = 0; q < Anchors; ++q) {
            unsure[q] = __brev(unsure[q]);
            hits[q] = __brev(hits[q]);
          }
        } else {
          const int rounds = (cnt + groups - 1) / groups;
          for (int r = 0; r < rounds; ++r) {
            const int t = r * groups + group;
            const int src = t < 32 ? t : 31;
            float b[D];
#pragma unroll
            for (int d = 0; d < D; ++d) b[d] = __shfl_sync(0xffffffffu, bl[d], src);
            const double wb = Weighted ? __shfl_sync(0xffffffffu, wl, src) : 0.0;
            const int rb = Regions ? __shfl_sync(0xffffffffu, rl, src) : -1;
            const std::uint32_t j = jt + static_cast<std::uint32_t>(t);
#pragma unroll
            for (int q = 0; q < Anchors; ++q) {
              if (on[q] && t < cnt && (!check || j > i[q])) {
                if constexpr (kList) {
                  const int k = out.classify(proxy(q, b));
                  hits[q] |= k == 0 ? 1u << t : 0u;
                  unsure[q] |= k == -2 ? 1u << t : 0u;
                } else {
                  unsure[q] |= out.quick(proxy(q, b), i[q], j, wa[q] * wb, rb) ? 0u : 1u << t;
                }
              }
            }
          }
        }
        // The partner again from memory (the lanes diverge here, so no shuffles), the same
        // float32 arithmetic, then the band walk and float64.
#pragma unroll
        for (int q = 0; q < Anchors; ++q) {
          while (unsure[q]) {
            const int t = __ffs(unsure[q]) - 1;
            unsure[q] &= unsure[q] - 1;
            const std::uint32_t j = jt + static_cast<std::uint32_t>(t);
            if constexpr (kList) {
              hits[q] |= out.settle(i[q], j) >= 0 ? 1u << t : 0u;  // inside a band: float64
            } else {
              float b[D];
#pragma unroll
              for (int d = 0; d < D; ++d) b[d] = args.B.x[d][j] + image[d];
              out.resolve(proxy(q, b), i[q], j, Weighted ? wa[q] * args.B.w[j] : 0.0);
            }
          }
        }
        if constexpr (kList) {
#pragma unroll
          for (int q = 0; q < Anchors; ++q) out.emit_hits(hits[q], i[q], jt);
        }
        evaluations += static_cast<unsigned long long>(cnt) * static_cast<unsigned>(na);
        if constexpr (kHist) {
          since_flush += static_cast<unsigned long long>(cnt) * static_cast<unsigned>(na);
          if (since_flush >= kFlushAt) {
            out.flush_warp(lane);
            since_flush = 0;
          }
        }
      }
    };
    // A run of partner cells [lo, hi] (inclusive ids): all of it, or (windowed) the union of the
    // lanes' windows along the last axis.
    auto run = [&](std::uint32_t lo, std::uint32_t hi, const NeighbourRun& nr) {
      std::uint32_t j0 = work.b_start[lo], j1 = work.b_start[hi + 1];
      if (j0 >= j1) return;
      if constexpr (Windowed) {
        float zlo = INFINITY, zhi = -INFINITY;
#pragma unroll
        for (int q = 0; q < Anchors; ++q) {
          float gap2 = 0.f;
#pragma unroll
          for (int d = 0; d < last; ++d) {
            const float clo = fmaf(static_cast<float>(nr.offset[d]), work.width[d], corner[d]);
            const float g = fmaxf(fmaxf(clo - a[q][d], a[q][d] - (clo + work.width[d])) - work.margin, 0.f);
            gap2 = fmaf(g, g, gap2);
          }
          if (on[q] && gap2 < work.reach2) {
            const float h = sqrtf(work.reach2 - gap2) + work.margin;
            zlo = fminf(zlo, a[q][last] - h - nr.image[last]);
            zhi = fmaxf(zhi, a[q][last] + h - nr.image[last]);
          }
        }
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
          zlo = fminf(zlo, __shfl_xor_sync(0xffffffffu, zlo, off));
          zhi = fmaxf(zhi, __shfl_xor_sync(0xffffffffu, zhi, off));
        }
        if (!(zlo <= zhi)) return;
        const float* z = args.B.x[last];
        j0 = grid_detail::warp_bound<false>(z, j0, j1, zlo, lane);
        j1 = grid_detail::warp_bound<true>(z, j0, j1, zhi, lane);
      }
      tiles(j0, j1, false, Windowed ? nr.image : no_image);
    };
    if (args.is_auto) {
      std::uint32_t j1 = cell_end;
      if constexpr (Windowed) {
        // The triangle: partners above the anchors along the last axis, within reach of the
        // highest of them.
        float top = -INFINITY;
#pragma unroll
        for (int q = 0; q < Anchors; ++q) top = on[q] ? fmaxf(top, a[q][last]) : top;
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) top = fmaxf(top, __shfl_xor_sync(0xffffffffu, top, off));
        const float h = sqrtf(work.reach2) + work.margin;
        if (a0 + 1 < cell_end) j1 = grid_detail::warp_bound<true>(args.B.x[last], a0 + 1, cell_end, top + h, lane);
      }
      tiles(a0 + 1, j1, true, no_image);
    }
    const std::uint32_t first = args.is_auto ? c + 1 : 0;  // auto: the half shell of higher ids
    for_each_neighbour_run(work.shape, c, [&](std::uint32_t lo, std::uint32_t hi, const NeighbourRun& nr) {
      lo = max(lo, first);
      if (lo <= hi) run(lo, hi, nr);
    });
    if constexpr (Regions) out.end_unit();
    out.flush_anchors(i);  // PerPoint: the unit's anchor, partly (other lanes, other units share it)
    if (out.list_stopped()) {
      if (lane == 0) out.record_stopped(u);
      break;
    }
  }

  if (lane == 0 && evaluations) atomicAdd(work.evaluations, evaluations);
  out.flush_warp(lane);
  out.flush_weights(tid, kGridThreads);
  out.flush_regions(tid, kGridThreads);
  out.finish(tid);
}

// The grid agent's kernel for a grid (windows where every neighbour cell has one image, two anchors
// a lane where the grid was shaped for them) and an output (jackknife regions take a lane's own
// sub-histogram); all share one signature.
template <int D, OutputMode M, bool W, class P, class Exact, bool Means>
auto grid_agent_kernel(bool images, int anchors, int regions) {
  constexpr bool kBinned = binned_pair_function<Exact>;
  if constexpr (M == OutputMode::Histogram && !kBinned)
    if (regions > 0)
      return images ? grid_kernel<D, M, W, true, P, Exact, true, 1, Means> : grid_kernel<D, M, W, false, P, Exact, true, 1, Means>;
  if constexpr (M == OutputMode::Histogram && !W && !kBinned && !Means)
    if (anchors == 2) return grid_kernel<D, M, W, true, P, Exact, false, 2>;
  return images ? grid_kernel<D, M, W, true, P, Exact, false, 1, Means> : grid_kernel<D, M, W, false, P, Exact, false, 1, Means>;
}

template <int D, OutputMode M, bool W, class P, class Exact, bool Means, class Launch>
void launch_grid_agent(const AgentChoice& c, bool images, int anchors, int regions, Launch& launch, const GridWork& work) {
  launch(grid_agent_kernel<D, M, W, P, Exact, Means>(images, anchors, regions), kGridThreads, c.smem, "grid_kernel", work);
}

}  // namespace twobody::cuda
