#pragma once
// What a pair produces on the GPU, shared by every traversal agent (brute-force tiles, grid cells):
// the float32 verdict against the guard bands, the float64 settlement of pairs inside a band, and
// the reduction's output. A traversal decides which pairs to visit; the output decides what each
// is worth. One type a reduction (include/twobody/reduction.hpp), in output/:
//
//   reduce::Count      CountOutput       type I: a count (and weight sum) in registers
//   reduce::Histogram  HistogramOutput   type II: privatised shared sub-histograms (also 2-D bins,
//                                        jackknife regions, mean separations)
//   reduce::PairList   PairListOutput    type III: the paged pair pool (pair_pool.hpp)
//   reduce::PerPoint   PerPointOutput    per-point counts and weight sums
//   reduce::PointSums  PointSumsOutput   per-point force and energy sums (short-range forces)
//
// Each has the same face (output/output_common.cuh): classify (the float32 verdict: bin >= 0, -1
// outside, -2 to settle), quick (the fast verdict, counting what it decides), resolve and settle
// (the slow path in float64), accept (one pair's worth), and the flushes and hooks a traversal
// calls at its units', tiles' and kernel's ends; a reduction implements those it needs.
#include "twobody/detail/cuda/kernel_shape.hpp"
#include "twobody/detail/cuda/output/count_output.cuh"
#include "twobody/detail/cuda/output/histogram_output.cuh"
#include "twobody/detail/cuda/output/pair_list_output.cuh"
#include "twobody/detail/cuda/output/per_point_output.cuh"
#include "twobody/detail/cuda/output/point_sums_output.cuh"

namespace twobody::cuda {

namespace output_detail {
template <int D, OutputMode Mode, bool Weighted, class Proxy, class Exact, bool Regions, int AnchorSlots, bool Means>
struct OutputFor;
template <int D, bool W, class P, class E, bool R, int S, bool M>
struct OutputFor<D, OutputMode::Reduce, W, P, E, R, S, M> {
  static_assert(!R && !M, "jackknife regions and mean separations are histograms'");
  using type = CountOutput<D, W, P, E>;
};
template <int D, bool W, class P, class E, bool R, int S, bool M>
struct OutputFor<D, OutputMode::Histogram, W, P, E, R, S, M> {
  using type = HistogramOutput<D, W, P, E, R, M>;
};
template <int D, bool W, class P, class E, bool R, int S, bool M>
struct OutputFor<D, OutputMode::PairList, W, P, E, R, S, M> {
  static_assert(!R && !M, "jackknife regions and mean separations are histograms'");
  using type = PairListOutput<D, P, E>;
};
template <int D, bool W, class P, class E, bool R, int S, bool M>
struct OutputFor<D, OutputMode::PerPoint, W, P, E, R, S, M> {
  static_assert(!R && !M, "jackknife regions and mean separations are histograms'");
  using type = PerPointOutput<D, W, P, E, S>;
};
template <int D, bool W, class P, class E, bool R, int S, bool M>
struct OutputFor<D, OutputMode::PointSums, W, P, E, R, S, M> {
  static_assert(!R && !M, "jackknife regions and mean separations are histograms'");
  using type = PointSumsOutput<D, W, P, E, S>;
};
}  // namespace output_detail

// The output of a traversal's pairs for the reduction `Mode`. AnchorSlots: anchors a thread holds
// at once (per-point reductions count each in its own registers: the grid agent 1, the brute-force
// one kPerThread). Means: mean separation sums beside a histogram (a flag, so that histograms
// without them keep their branch-free counting). Regions: jackknife regions a lane at a time.
template <int D, OutputMode Mode, bool Weighted, class Proxy, class Exact, bool Regions = false, int AnchorSlots = 1,
          bool Means = false>
using PairOutput = typename output_detail::OutputFor<D, Mode, Weighted, Proxy, Exact, Regions, AnchorSlots, Means>::type;

}  // namespace twobody::cuda
