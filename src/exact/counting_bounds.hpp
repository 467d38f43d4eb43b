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
// q = (d − lo)/w. A pair within δ bins of an edge is settled, where δ adds the error of d at
// the edges (bound(e)/(1.48e) + ε_sqrt·e), the roundings of q, and how far the float64 edges
// stray from lo + k·w. For thousands of bins the first term dominates (the float32 coordinates'
// own rounding, 8 192 bins over the data's diameter: ~3·10⁻³ of a bin; sqrt.approx ~2·10⁻³), so a
// sharper square root would not help much: δ up to 10⁻² is accepted, i.e. up to ~2% of the pairs
// settled out of line, still far cheaper than the generic agent's table.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "twobody/config.hpp"
#include "twobody/detail/exact/fast_path.hpp"

namespace twobody {

// Relative error assumed for sqrt.approx.f32. The GPU suite measures it over every float in
// [2^-48, 2^48) and requires twice the worst below this: 2^-23.25 on the H100 (2026-11-23).
constexpr double kSqrtApproxError = 0x1p-22;

// The histogram's guard as the counting tiles evaluate it, two FMAs and one LOP3 a pair: with
// q = (d − lo)/w the pair's position in bins (d clamped, when needed, so q ∈ [−¼, n + ¼]),
//   f± = fl(q·2^F + (2^23 + 2^F ± m))    (round to nearest; every f± in [2^23, 2^24), ulp 1)
// hold q in fixed point with F bits below the binary point, shifted by m = ⌈δ·2^F + ½⌉ either way.
// bits(f±) are bits(2^23) + the integer, and bits(2^23) is a multiple of 2^F, so
// (bits(f−) ^ bits(f+)) ≥ 2^F exactly when ⌊f−/2^F⌋ ≠ ⌊f+/2^F⌋: a multiple of 2^F (an edge) lies
// within m + ½ of q·2^F, i.e. q within δ of an edge (m − ½ ≥ δ·2^F covers the FMAs' rounding).
// Otherwise q ∈ [b + δ, b + 1 − δ) and b = ⌊q⌋, which one FMA rounding down gives; the float64
// distance, within δ of q, is in bin b. F is the largest that keeps (n + 1¼)·2^F + m below 2^23;
// margin < 0 when the guard would be wider than a quarter of a bin.
struct EqualWidthGuard {
  int frac_bits = 0;  // F
  int margin = -1;    // m, in units of 2^-F
};
inline EqualWidthGuard equal_width_guard(int nbins, double delta) {
  EqualWidthGuard g;
  for (int F = 20; F >= 2; --F) {
    const double scale = std::ldexp(1.0, F);
    const double m = std::ceil(delta * scale + 0.5);
    if ((nbins + 1.25) * scale + m >= 0x1p23) continue;
    g.frac_bits = F;
    g.margin = m < scale / 4 ? static_cast<int>(m) : -1;
    return g;
  }
  return g;
}

struct CountingPlan {
  bool usable = false;
  std::string why;  // what runs, or why not
  // Count in [lo, hi) of r: thresholds r² and bands.
  double t_hi = 0, t_lo = 0;
  double band_hi = 0, band_lo = 0;
  bool has_lo = false;
  // Histogram of equal-width bins in r.
  double inv_width = 0, offset = 0, d_min = 0, d_max = 0, delta = 0;
  EqualWidthGuard guard;
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

// The same Gram form on half-precision MMAs (cuda/tensor_count_tiles.cuh, HalfGram): coordinates
// scaled by σ = 2^-e (σM in [½, 1)) and split into FP16 hi + lo, all thirteen terms in the sixteen
// columns of one mma.m16n8k16, so a block of 16 anchors × 8 partners costs one MMA instead of
// two (FP16 MMAs run at twice TF32's rate of multiply-adds). FP16 keeps TF32's 11 significant
// bits but a narrower exponent: a lo part below 2^-14 (scaled) is subnormal, rounded to within
// 2^-25 absolutely. In original units (1/σ < 2M):
//   - a split residual |x − hi − lo| ≤ 2^-22|x| + 2^-25/σ ≤ 1.25·2^-22·M; times |−2x_b| ≤ 2M, for
//     the anchor's and the partner's, plus the dropped lo·lo (≤ 2·2^-22 M²): 7·2^-22 M² a
//     dimension (7.5 taken);
//   - |a|² − T and |b|²: rounded to float (u), split (2^-22 relative, plus 2^-25/σ² ≤ 2^-23 M²);
//   - the accumulation: one MMA of sixteen products (thirteen non-zero) and the accumulator, each
//     kept to kTensorAccumulation of 4DM² + T: within the TF32 form's twenty addends.
// The GPU suite measures the worst error of the kernel's own MMA against this bound.
inline double tensor_half_gram_error(const DistanceErrorModel& m, double T) {
  using namespace fast_detail;
  const double D = m.dim, M2 = m.M * m.M;
  const double big = 4 * D * M2 + T;
  const double splits = 7.5 * D * 0x1p-22 * M2;
  const double norms = (u32 + 0x1p-22) * (2 * D * M2 + T) + 2 * 0x1p-23 * M2;
  const double accumulate = 2 * 10 * kTensorAccumulation * big;
  return 1.01 * (accumulate + splits + norms + coordinate_error(m)) + 1e-300;
}
// σ of the half-precision form: the power of two with σM in [½, 1) (1 for M = 0).
inline double tensor_half_scale(double M) {
  int e = 0;
  std::frexp(M, &e);
  return M > 0 ? std::ldexp(1.0, -e) : 1.0;
}
// Largest scaled term of the half-precision form: D (|a|², |b|² at σM < 1) + σ²T must stay below
// 2^13, so that the sentinels' 2^14 (FP16, exact) keeps every pair holding one outside the range.
constexpr double kHalfTermLimit = 0x1p13;

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
// The same on half-precision MMAs (one a block instead of two); declined also when σ²r² would
// leave FP16's range (a cutoff thousands of times the data's extent: every pair is inside).
inline CountingPlan tensor_half_count_plan(const DistanceErrorModel& m, double lo, double hi) {
  CountingPlan p = sign_count_plan(m, lo, hi, tensor_half_gram_error(m, hi * hi), 1e-2, "no half-precision tensor-core counts",
                                   "their error bound",
                                   "tensor-core counts: Gram form on split FP16 MMAs (one m16n8k16 a block), sign-bit count");
  const double s = tensor_half_scale(m.M);
  if (p.usable && !(m.dim + s * s * p.t_hi <= kHalfTermLimit)) {
    p.usable = false;
    p.why = "no half-precision tensor-core counts (the cutoff is far beyond the data's extent for FP16)";
  }
  return p;
}

// δ of equal-width bins at natural edges `edges` (in bins), or +inf when they are not of equal
// width (within 1e-6 of a bin) or an edge is below float32's resolution; `bound(d)` bounds the
// error of the kernel's d² at distance d (the counting tiles': the model's differences form).
template <class Bound>
double equal_width_delta_of(const std::vector<double>& edges, const Bound& bound) {
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
    const double e = edges[k], B = bound(1.01 * e);
    if (!(B <= 0.7 * e * e)) return HUGE_VAL;
    dd = std::max(dd, 1.01 * B / (1.48 * e) + kSqrtApproxError * 1.01 * e);
  }
  // q = fl(d − lo)·(1/w) (exact products in the kernel's FMAs): the roundings of 1/w (≤ u·(n + 1)
  // bins), of lo and of d − lo (≤ u·(lo + hi + w)/w); the FMAs' own rounding is in the guard's
  // margin (equal_width_guard).
  return 1.1 * (dd / w + u32 * ((hi + lo) / w + n + 3) + (stray + u64 * hi) / w) + 1e-9;
}
inline double equal_width_delta(const DistanceErrorModel& m, const std::vector<double>& edges) {
  return equal_width_delta_of(edges, [&](double d) { return m.bound(d); });
}

// Beyond this δ (in bins) the counting tiles decline: 2δ of the pairs are settled out of line.
constexpr double kWidestDelta = 1e-2;

// Histograms: usable when the edges are of equal width in r and δ (from `bound`, the error of the
// kernel's d²) is small enough that few pairs are settled; `declined` names what runs instead.
template <class Bound>
CountingPlan equal_width_plan_of(const DistanceErrorModel& m, const std::vector<double>& edges, const Bound& bound,
                                 const std::string& declined, const std::string& taken) {
  CountingPlan p;
  if (!(4 * m.dim * m.M * m.M < 0x1p120) || !(m.M > 1e-15) || !(edges.back() < 1e36)) {
    p.why = declined + " (the data's scale is outside float32's comfortable range)";
    return p;
  }
  p.delta = equal_width_delta_of(edges, bound);
  if (p.delta == HUGE_VAL) {
    p.why = declined + " (bins not of equal width in r, or an edge below float32's resolution)";
    return p;
  }
  if (!(p.delta <= kWidestDelta)) {
    p.why = declined + " (bins too narrow for float32 distances)";
    return p;
  }
  const int n = static_cast<int>(edges.size()) - 1;
  const double lo = edges.front(), hi = edges.back(), w = (hi - lo) / n;
  p.inv_width = 1.0 / w;
  p.offset = -lo / w - 0.5;
  p.d_min = lo > 0 ? -0.25 * w : 0.0;  // of d − lo
  p.d_max = hi - lo + 0.25 * w;
  p.guard = equal_width_guard(n, p.delta);
  if (p.guard.margin < 0) {
    p.usable = false;
    p.why = declined + " (too many bins for the guard's fixed-point position)";
    return p;
  }
  p.usable = true;
  p.why = taken;
  return p;
}
inline CountingPlan equal_width_plan(const DistanceErrorModel& m, const std::vector<double>& edges) {
  return equal_width_plan_of(m, edges, [&](double d) { return m.bound(d); }, "generic tiles",
                             "counting tiles: equal-width bins from sqrt.approx");
}

// Histograms with d² from FP64 tensor cores (cuda/fp64_tensor_histogram_tiles.cuh): the Gram
// form |a|² + |b|² − 2a·b of the float32 coordinates scaled by σ (a power of two, so that every
// d² is below 1/4), in one mma.m8n8k4.f64 per 8 anchors × 8 partners (K: three coordinates and
// |a|², |b|² in the accumulator), then read as float32 by one funnel shift of its two words (the
// exponent's low eight bits and 23 of the mantissa: s·2^128, truncated). Its error at distance d:
//   - the float32 coordinates' own rounding (as the differences form: η = 2u·M(1 + u) + 2u₆₄·offset
//     of each coordinate difference, plus 2^-99/σ where the kernel flushes scaled coordinates
//     below 2^-100 to zero, so that every non-zero d² is at least 2^-246 and the funnel shift's
//     eight exponent bits hold it);
//   - the float64 Gram form: every product of float32 values exact, at most six roundings (and
//     those of |a|², |b|²) of values below 4DM²: 10u₆₄·4DM²;
//   - the truncation to float32: 2^-23 of d̃²;
//   - the float64 reference's (as DistanceErrorModel::bound).
// A float64 Gram form needs no recentring: its cancellation error is 2^-50 of the extent, far
// below float32's rounding of the coordinates, so δ is the counting tiles' (a few 10⁻⁵ bins).
inline double fp64_tensor_bound(const DistanceErrorModel& m, double sigma, double d) {
  using namespace fast_detail;
  const double D = m.dim, sD = std::sqrt(D);
  const double eta = 2 * u32 * m.M * (1 + u32) + 2 * u64 * m.offset + 0x1p-99 / sigma;
  const double coords = eta * (2 * sD * d + D * eta);
  const double gram = 10 * u64 * 4 * D * m.M * m.M;
  const double truncation = 0x1p-23 * (d * d + coords + gram);
  const double e64 = gamma(m.dim + 2, u64) * d * d + 4 * u64 * m.offset * d * sD;
  return 1.01 * (coords + gram + truncation + e64) + 1e-300;
}
// σ of the FP64 tensor-core histogram: the power of two with σ·R in [1/4, 1/2), R the larger of
// the data's diameter and the last edge plus half a bin (so every pair's σ²d² < 1/4, and a
// sentinel's σ²d² ≥ 3/8 lies beyond the last edge).
inline double fp64_tensor_scale(const DistanceErrorModel& m, const std::vector<double>& edges) {
  const double w = (edges.back() - edges.front()) / std::max<double>(1, static_cast<double>(edges.size()) - 1);
  const double R = std::max(2 * std::sqrt(double(m.dim)) * m.M * (1 + 1e-6), edges.back() + 0.5 * w);
  int e = 0;
  std::frexp(R, &e);  // R in [2^(e−1), 2^e)
  return R > 0 ? std::ldexp(1.0, -e - 1) : 1.0;
}
inline CountingPlan fp64_tensor_histogram_plan(const DistanceErrorModel& m, const std::vector<double>& edges) {
  const double sigma = fp64_tensor_scale(m, edges);
  CountingPlan p = equal_width_plan_of(
      m, edges, [&](double d) { return fp64_tensor_bound(m, sigma, d); }, "no FP64 tensor-core histogram",
      "counting tiles on FP64 tensor cores: d² from mma.m8n8k4.f64, equal-width bins from sqrt.approx");
  // σ and 1/(σw) within float32's normal range (the kernel folds 2^-64/σ into 1/w).
  if (p.usable && !(sigma > 0x1p-60 && sigma < 0x1p60 && p.inv_width / sigma * 0x1p-64 > 0x1p-120)) {
    p.usable = false;
    p.why = "no FP64 tensor-core histogram (the data's scale is outside float32's comfortable range)";
  }
  return p;
}

// Histograms on the tensor cores (cuda/tensor_histogram_tiles.cuh): d² in the Gram form of the
// tensor-core counts, but about a centre c of each item's anchors (points in Morton order, so an
// item's 512 anchors are close together): with a' = a − c, b' = b − c, |a'| ≤ r (the item's radius)
// and |b'| ≤ d + r, every addend of the two MMAs is below (|a'| + |b'|)² ≤ (d + 2r)², so the error
// shrinks with the pair's distance instead of being set by the data's extent:
//   |s̃ − key64| ≤ K (d + 2r)² + bound(d),
// K covering the accumulation (20 addends, kTensorAccumulation each), the TF32 splits (Cauchy–
// Schwarz: 6·2^-22 |a'||b'| ≤ 1.5·2^-22 (|a'| + |b'|)²), |a'|² and |b'|² rounded and split, and
// the rounding of a − c and b − c; bound(d) the float32 coordinates' own (DistanceErrorModel).
// Near an edge e the distance moves by E/(1.48e) (as for the counting tiles), so the guard in bins
// is δ(r) = δ₀ + (K/w)·max over the edges a pair can be near of (1.01e + 2r)²/(1.48e): convex in
// e, largest at the first or the last edge. Edges below d_s = 4r²/e_far (where the two ends are
// equal) are not guarded: pairs whose s̃ falls below the first edge e_s ≥ d_s are clamped onto
// e_s, which flags them, and are settled in float64 (for r = 0.05 in a unit box, d_s ≈ 0.006:
// one pair in a million).
//
// The bin and the guard come from one FMA: v = d·(1/w) + (1.5·2^(23−F) + offset + h·2^−F) keeps
// F bits of the position x + h·2^−F below the binary point, so bits(v) >> F is the slot and
// bits(v) & (2^F − 1) < 2h says the pair lies within the guard (h·2^−F ≥ δ + 2^−(F+1), the FMA's
// own rounding included) of an edge.
struct TensorHistogramGuard {
  double lo = 0, width = 0;  // natural edges lo + k·width, k = 0..nbins
  int nbins = 0;
  int frac_bits = 0;       // F
  double delta0 = 0;       // bins: the part of δ that does not depend on r
  double gram = 0;         // K / width
  double sqrt_gram = 0;    // √K
  double e_far = 0;        // the largest edge a pair can come near (last edge, or the diameter)
};

struct TensorItemGuard {
  int first_edge = 0;      // k_s: the first edge at or beyond d_s
  bool clamp_low = false;  // an edge lies between 0 and edge k_s: pairs below it are clamped onto it
  int h = 0;               // the guard in units of 2^-F; h < 0: every pair is settled
  double edge = 0;         // lo + k_s·width
};

// The guard of an item of radius r (every anchor within r of the item's centre, float32 recentred
// coordinates); evaluated per item on the device, in float64.
TWOBODY_HD TensorItemGuard tensor_item_guard(const TensorHistogramGuard& p, double r) {
  TensorItemGuard g;
  r *= 1 + 1e-6;
  // d_s: where the guard's two ends meet; also far enough that K(e + 2r)² stays below e²/3.
  const double ds = fmax(4 * r * r / p.e_far * 1.03, 4.0 * r * p.sqrt_gram);
  int k = ds <= p.lo ? 0 : static_cast<int>(ceil((ds - p.lo) / p.width));
  if (k > p.nbins) k = p.nbins;
  g.first_edge = k;
  g.edge = p.lo + k * p.width;
  // Below edge k_s only edges strictly above 0 need the clamp (a pair is never near the edge at 0
  // from below): none when lo = 0 and k_s = 1.
  g.clamp_low = k > (p.lo > 0 ? 0 : 1);
  const double e_near = g.edge > 0 ? g.edge : p.width;  // lo = 0, k_s = 0: the first edge above 0
  const auto shape = [&](double e) { return (1.01 * e + 2 * r) * (1.01 * e + 2 * r) / (1.48 * e); };
  const double delta = p.delta0 + p.gram * fmax(shape(e_near), shape(fmax(p.e_far, e_near)));
  const double scale = ldexp(1.0, p.frac_bits);
  const double h = ceil((delta + 0.5 / scale) * scale) + 1;
  g.h = h < scale / 8 ? static_cast<int>(h) : -1;
  return g;
}

struct TensorHistogramPlan {
  bool usable = false;
  std::string why;
  TensorHistogramGuard guard;
  double inv_width = 0;  // 1/w, to be rounded to float
  double offset = 0;     // −lo/w rounded to F fractional bits
};

// K of the recentred Gram form (see above).
inline double tensor_recentred_k(int dim) {
  using namespace fast_detail;
  return 1.01 * (20 * kTensorAccumulation + 1.5 * 0x1p-22 + (u32 + 0x1p-22) + 2 * std::sqrt(double(dim)) * u32 * (1 + u32));
}

// Beyond this guard at r = 0 (in bins) the tensor-core histograms decline: the counting tiles
// settle fewer pairs.
constexpr double kTensorWidestDelta = 4e-3;

inline TensorHistogramPlan tensor_histogram_plan(const DistanceErrorModel& m, const std::vector<double>& edges) {
  using namespace fast_detail;
  TensorHistogramPlan p;
  const int n = static_cast<int>(edges.size()) - 1;
  if (n < 1 || !(4 * m.dim * m.M * m.M < 0x1p100) || !(m.M > 1e-15) || !(edges.back() < 1e30)) {
    p.why = "no tensor-core histogram (the data's scale is outside float32's comfortable range)";
    return p;
  }
  const double lo = edges.front(), hi = edges.back(), w = (hi - lo) / n;
  double stray = 0;
  for (int k = 0; k <= n; ++k) stray = std::max(stray, std::abs(edges[k] - (lo + k * w)));
  if (!(lo >= 0) || !(w > 0) || stray > 1e-6 * w) {
    p.why = "no tensor-core histogram (bins not of equal width in r)";
    return p;
  }
  // F: the position (up to |offset| + n + 2 bins either way) must stay within v's binade.
  const double span = lo / w + n + 2;
  int F = 12;
  while (F > 4 && !(span < std::ldexp(1.0, 21 - F))) --F;
  if (!(span < std::ldexp(1.0, 21 - F))) {
    p.why = "no tensor-core histogram (too many bins for the position's bits)";
    return p;
  }
  const double diameter = 2 * std::sqrt(double(m.dim)) * m.M * (1 + 1e-6);
  double dd = 0;
  for (int k = lo > 0 ? 0 : 1; k <= n; ++k) {
    const double e = edges[k], B = m.bound(1.01 * e);
    if (!(B <= 0.35 * e * e)) {
      p.why = "no tensor-core histogram (an edge below float32's resolution)";
      return p;
    }
    dd = std::max(dd, 1.01 * B / (1.48 * e) + kSqrtApproxError * 1.01 * e);
    if (e > diameter) break;  // no pair comes near the edges beyond
  }
  const double scale = std::ldexp(1.0, F);
  p.inv_width = 1.0 / w;
  p.offset = std::round(-lo / w * scale) / scale;
  auto& g = p.guard;
  g.lo = lo;
  g.width = w;
  g.nbins = n;
  g.frac_bits = F;
  // x = fma(d, fl(1/w), offset_F): 1/w's rounding (u of d/w), the offset's (2^-(F+1) and its
  // float64 division), the edges' stray from lo + k·w; the FMA's rounding is in h.
  g.delta0 = 1.1 * (dd / w + u32 * (std::min(hi, diameter) / w + 1) + 0.5 / scale + u64 * (lo / w + 1) + (stray + u64 * hi) / w) + 1e-9;
  const double K = tensor_recentred_k(m.dim);
  g.gram = K / w;
  g.sqrt_gram = std::sqrt(K);
  g.e_far = std::min(hi, diameter);
  const TensorItemGuard at0 = tensor_item_guard(g, 0.0);
  const double d0 = at0.h / scale;
  if (at0.h < 0 || !(d0 <= kTensorWidestDelta)) {
    p.why = "no tensor-core histogram (bins too narrow for its error bound)";
    return p;
  }
  p.usable = true;
  p.why = "tensor-core histogram: recentred Gram form on split TF32 MMAs, " + std::to_string(F) + "-bit positions";
  return p;
}

}  // namespace twobody
