#pragma once
// When the CUDA counting tiles (cuda/counting_tiles.cuh) may run, and the bounds that keep them
// exact. Plain C++: the CPU tests check these bounds on the very float32 arithmetic the kernel
// does.
//
// Counts use the Gram form s' = (|a|² − T) + |b|² − 2a·b. With u = 2^-24, M the largest
// |coordinate| after the shift to the data's centre, D dimensions and |point| ≤ √D·M, each of its
// five roundings (|a|² − T, |b|², their sum, three FMAs) is at most u times a value below
// 4DM² + T, so |s'_32 − (s(a32, b32) − T)| ≤ 6u(4DM² + T); add the float32 coordinates' own
// rounding and the float64 reference's, both at the largest distance 2√D·M. A pair with |s'|
// above that bound E has the sign of key64 − T. E does not shrink with the threshold: for a cutoff
// far below the data's extent too many pairs would be settled, and the plan declines (the generic
// agent runs, or the grid).
//
// Histograms of bins of equal width w in r use d² from differences, whose error bound(d)
// (fast_path.hpp's DistanceErrorModel) shrinks with d, then d = sqrt.approx(d²) and the position
// x = d/w − lo/w − ½. A pair within δ bins of an edge is settled, where δ adds the error of d at
// the edges (bound(e)/(1.48e) + ε_sqrt·e), the roundings of x, and how far the float64 edges
// stray from lo + k·w. For thousands of bins the first term dominates (the float32 coordinates'
// own rounding, 8 192 bins over the data's diameter: ~3·10⁻³ of a bin; sqrt.approx ~2·10⁻³), so a
// sharper square root would not help much: δ up to 10⁻² is accepted, i.e. up to ~2% of the pairs
// settled out of line, still far cheaper than the generic agent's table.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "twobody/fast_path.hpp"

namespace twobody {

// Relative error assumed for sqrt.approx.f32. The GPU suite measures it over every float in
// [2^-48, 2^48) and requires twice the worst below this: 2^-23.25 on the H100 (2026-11-23).
constexpr double kSqrtApproxError = 0x1p-22;

struct CountingPlan {
  bool usable = false;
  std::string why;  // what runs, or why not
  // Count in [lo, hi) of r: thresholds r² and bands.
  double t_hi = 0, t_lo = 0;
  double band_hi = 0, band_lo = 0;
  bool has_lo = false;
  // Histogram of equal-width bins in r.
  double inv_width = 0, offset = 0, d_min = 0, d_max = 0, delta = 0;
};

// What any Gram form inherits: the float32 coordinates' own rounding and the float64 reference's,
// both at the largest distance 2√D·M.
inline double coordinate_error(const DistanceErrorModel& m) {
  using namespace fast_detail;
  const double D = m.dim, sD = std::sqrt(D);
  const double d_max = 2 * sD * m.M;
  const double eta = 2 * (u32 * m.M * (1 + u32) + 2 * u64 * m.offset);
  const double coords = 2 * d_max * sD * eta + D * eta * eta;
  const double ref = gamma(m.dim + 2, u64) * d_max * d_max + 4 * u64 * m.offset * d_max * sD;
  return coords + ref;
}

// The bound on |s'_32 − (key64 − T)| for every pair of the data the model describes.
inline double gram_error(const DistanceErrorModel& m, double T) {
  using namespace fast_detail;
  const double extent = 4 * m.dim * m.M * m.M;  // (|a| + |b|)² at most
  return 1.01 * (6 * u32 * (extent + T) + coordinate_error(m)) + 1e-300;
}

// The tensor-core form (cuda/tensor_count_tiles.cuh): operands split into TF32 hi + lo, two
// mma.m16n8k8 with float32 accumulation. Bounded, with |x| ≤ M, |x_a||x_b| ≤ M² a dimension:
//   - the splits: per dimension the dropped lo·lo (2^-22) and the two split residuals (2^-22 of
//     x each), times |−2x_a||x_b| ≤ 2M²: 6·2^-22·M², D of them;
//   - |a|² − T and |b|² (at most DM² + T and DM²): their float rounding (u) and split residual;
//   - the accumulation: each MMA adds nine terms (eight products, exact, and the accumulator), all
//     below 4DM² + T. Assumed (kTensorAccumulation): each addend is kept to 22 bits relative to the
//     largest and the sum is rounded once (NVIDIA documents at least float32 accumulation; studies
//     of the A100/H100 tensor cores find alignment to the largest exponent with truncation and a
//     round-toward-zero result). The GPU suite measures the worst error of the kernel's own MMAs
//     on adversarial data against this bound.
constexpr double kTensorAccumulation = 0x1p-22;
inline double tensor_gram_error(const DistanceErrorModel& m, double T) {
  using namespace fast_detail;
  const double D = m.dim, M2 = m.M * m.M;
  const double big = 4 * D * M2 + T;
  const double splits = 6 * D * 0x1p-22 * M2;
  const double norms = (u32 + 0x1p-22) * (2 * D * M2 + T);
  const double accumulate = 2 * 10 * kTensorAccumulation * big;
  return 1.01 * (accumulate + splits + norms + coordinate_error(m)) + 1e-300;
}

// A sign-bit count over the natural edges [lo, hi) with the bound band_hi of s'_hi: the band of
// s'_lo = s'_hi + fl(T_hi − T_lo) (the rounding of the difference and of the add), declined (why
// = `declined` and the reason) when float32 cannot hold every term or a band is wider than
// `widest`·hi², else why = `taken`.
inline CountingPlan sign_count_plan(const DistanceErrorModel& m, double lo, double hi, double band_hi, double widest,
                                    const char* declined, const char* too_wide, const char* taken) {
  using namespace fast_detail;
  CountingPlan p;
  p.t_hi = hi * hi;
  p.t_lo = lo * lo;
  p.has_lo = lo > 0;
  p.band_hi = band_hi;
  const double extent = 4 * m.dim * m.M * m.M;
  p.band_lo = 1.01 * (p.band_hi + u32 * (p.t_hi - p.t_lo) + u32 * (extent + p.t_hi));
  // float32 must hold every term (|a|² + |b|² + T far below FLT_MAX, no subnormal scales).
  if (!std::isfinite(p.band_lo) || !(extent + p.t_hi < 0x1p120) || !(m.M > 1e-15)) {
    p.why = std::string(declined) + " (the data's scale is outside float32's comfortable range)";
    return p;
  }
  if (!(p.band_hi <= widest * p.t_hi) || (p.has_lo && !(p.band_lo <= widest * p.t_hi))) {
    p.why = std::string(declined) + " (" + too_wide + " is too wide for this cutoff and extent)";
    return p;
  }
  p.usable = true;
  p.why = taken;
  return p;
}

// Range counts over the natural edges [lo, hi). Declines when a band is wider than 1e-3 of hi².
inline CountingPlan gram_count_plan(const DistanceErrorModel& m, double lo, double hi) {
  return sign_count_plan(m, lo, hi, gram_error(m, hi * hi), 1e-3, "generic tiles", "the Gram form's cancellation bound",
                         "counting tiles: Gram form, sign-bit count");
}

// The tensor-core counts' plan: tensor_gram_error, and bands up to 1e-2 of hi² (a lane revisits
// its 16 pairs of a block of 8 partners only when one is in the band: at r = 0.1 in a unit box
// about 1% of the blocks).
inline CountingPlan tensor_count_plan(const DistanceErrorModel& m, double lo, double hi) {
  return sign_count_plan(m, lo, hi, tensor_gram_error(m, hi * hi), 1e-2, "no tensor-core counts", "their error bound",
                         "tensor-core counts: Gram form on split TF32 MMAs, sign-bit count");
}

// δ of equal-width bins at natural edges `edges` (in bins), or +inf when they are not of equal
// width (within 1e-6 of a bin) or an edge is below float32's resolution.
inline double equal_width_delta(const DistanceErrorModel& m, const std::vector<double>& edges) {
  using namespace fast_detail;
  const int n = static_cast<int>(edges.size()) - 1;
  if (n < 1) return HUGE_VAL;
  const double lo = edges.front(), hi = edges.back(), w = (hi - lo) / n;
  double stray = 0;
  for (int k = 0; k <= n; ++k) stray = std::max(stray, std::abs(edges[k] - (lo + k * w)));
  if (!(lo >= 0) || !(w > 0) || stray > 1e-6 * w) return HUGE_VAL;
  // Error of d at each edge that decides something (an edge at 0 does not: d >= 0). A pair near
  // edge e has d ≥ 0.99e, and |ε| = |d̃² − d²| ≤ B = bound(1.01e) moves d by ε/(d̃ + d) ≤ B/(1.48e)
  // while B ≤ 0.7e² (d̃ ≥ d/2); beyond that the edge is not decidable in float32.
  double dd = 0;
  for (int k = lo > 0 ? 0 : 1; k <= n; ++k) {
    const double e = edges[k], B = m.bound(1.01 * e);
    if (!(B <= 0.7 * e * e)) return HUGE_VAL;
    dd = std::max(dd, 1.01 * B / (1.48 * e) + kSqrtApproxError * 1.01 * e);
  }
  // x = fma(d, 1/w, offset): the roundings of 1/w (≤ u·hi/w), of the offset and of x itself
  // (|x| ≤ n + 1); g = (v − magic) − x is exact (Sterbenz: |x − round(x)| ≤ ½).
  const double offset = -lo / w - 0.5;
  return 1.1 * (dd / w + u32 * (hi / w + std::abs(offset) + n + 2) + (stray + u64 * hi) / w) + 1e-9;
}

// Beyond this δ (in bins) the counting tiles decline: 2δ of the pairs are settled out of line.
constexpr double kWidestDelta = 1e-2;

// Histograms: usable when the edges are of equal width in r and δ is small enough that few pairs
// are settled.
inline CountingPlan equal_width_plan(const DistanceErrorModel& m, const std::vector<double>& edges) {
  CountingPlan p;
  if (!(4 * m.dim * m.M * m.M < 0x1p120) || !(m.M > 1e-15) || !(edges.back() < 1e36)) {
    p.why = "generic tiles (the data's scale is outside float32's comfortable range)";
    return p;
  }
  p.delta = equal_width_delta(m, edges);
  if (p.delta == HUGE_VAL) {
    p.why = "generic tiles (bins not of equal width in r, or an edge below float32's resolution)";
    return p;
  }
  if (!(p.delta <= kWidestDelta)) {
    p.why = "generic tiles (bins too narrow for float32 distances)";
    return p;
  }
  const int n = static_cast<int>(edges.size()) - 1;
  const double lo = edges.front(), hi = edges.back(), w = (hi - lo) / n;
  p.inv_width = 1.0 / w;
  p.offset = -lo / w - 0.5;
  p.d_min = lo > 0 ? lo - 0.25 * w : 0.0;
  p.d_max = hi + 0.25 * w;
  p.usable = true;
  p.why = "counting tiles: equal-width bins from sqrt.approx";
  return p;
}

}  // namespace twobody
