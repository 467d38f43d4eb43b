#pragma once
// The error bound of a reduced-precision Gram distance (issue 22: joins and k-NN on tensor cores),
// which makes those paths exact: a pair whose low-precision distance is farther than the bound
// from the threshold has the float64 rule's verdict; the others are settled by the rule itself.
// Plain C++: tests/gram_bounds_test.cpp checks the bound on a software model of the arithmetic.
//
// The arithmetic bounded (per pair i, j of vectors of dimension d):
//   x'  = fl64(x − c)                       rows shifted to a common centre c, in float64
//   σ   = a power of two with max_k |σ x'_k| in [1/2, 1)  (exact scaling)
//   h   = fl_p(σ x')                        rows rounded to the input format p (FP16: u = 2^-11,
//                                           subnormals spaced 2^-24, so an absolute error η = 2^-25)
//   G   = the tensor cores' sum of h_ik h_jk over k, m = ⌈d/K⌉ MMAs of depth K into a float32
//         accumulator; products exact; each MMA's K + 1 addends kept to 22 bits of the largest,
//         then rounded to float32: per MMA an error ≤ (K + 2)·u_acc·Σ|addends| with u_acc = 2^-22;
//         with a fold F (the joins' tiles), the accumulator restarts from 0 every F MMAs and each
//         partial sum is added to a running float32 sum (gram_accumulation)
//   D   = G / (σ_i σ_j)                     exact (powers of two; no float32 under- or overflow:
//                                           the planner keeps the norms in range)
//   N   = fl32(fl64(Σ_k x'_k²))             squared norms
//   s̃   = fl32(fl32(N_i + N_j) − 2D)        one rounding for the sum, one fused multiply-add
// against key64 = Σ_k fl(fl(x_ik − x_jk)²) summed in order in float64 (docs/exactness.md).
//
// With n = ‖x'‖ (an upper bound of it, norm_upper), e_p = u n + η√d / σ the rounding of a row,
// S = (n_i(1 + u) + η√d/σ_i)(n_j(1 + u) + η√d/σ_j) the bound of Σ|h h| / (σ_i σ_j):
//   |D − x'_i·x'_j| ≤ e_i n_j + n_i e_j + e_i e_j + α·S, α = gram_accumulation         (Gram)
//   |N − n²|        ≤ (u32(1 + γ_d) + γ_d) n²                                          (norms)
//   epilogue        ≤ 2·u32·(1 + 10⁻⁶)(n_i + n_j)²                                       (float32)
//   |κ' − key64|    ≤ (6u64 + γ_{d+1})(n_i + n_j)² + O(u64²)   κ' = ‖x'_i − x'_j‖², the centring
// and |s̃ − key64| ≤ E = 1.01·[2·Gram + norms_i + norms_j + epilogue + centring]: the 1.01 covers
// the second-order terms the lines above drop (u32 applied to computed values, 1 + γ factors).
#include <cmath>
#include <cstdint>

// The Gram tiles (cuda/gram_tiles.cu) compute each tile's thresholds on the device from the same
// functions the CPU test checks.
#if defined(__CUDACC__)
#define TWOBODY_GRAM_HD __host__ __device__
#else
#define TWOBODY_GRAM_HD
#endif

namespace twobody::exact {

// An input format of the tensor cores, the MMA depth it is used with, and how the MMAs accumulate.
struct GramFormat {
  double u;      // unit roundoff of the rounded rows
  double eta;    // absolute rounding error near zero (half the smallest subnormal spacing)
  int depth;     // K, products per MMA
  double u_acc;  // the accumulator's alignment loss per addend (kTensorAccumulation)
  int fold;      // F: MMAs a partial sum takes before it is added to the running sum (0: never)
};

// FP16 rows in MMAs of depth 16, summed in partials of `fold` MMAs (0: one accumulator).
constexpr GramFormat fp16_gram(int fold) { return {0x1p-11, 0x1p-25, 16, 0x1p-22, fold}; }
// One accumulator (the k-NN's tiles, and the joins' below TuningPolicy::gram_fold_min_dim); partial
// sums of 16 MMAs (the tests' folded format; the joins set their F from TuningPolicy::gram_fold).
constexpr GramFormat kFp16Gram = fp16_gram(0);
constexpr GramFormat kFp16GramFolded = fp16_gram(16);

constexpr double kUnit64 = 0x1p-53;
constexpr double kUnit32 = 0x1p-24;

// α: the accumulation's error over the m = ⌈d/K⌉ MMAs per S (the bound of Σ_k |h_ik h_jk|). One
// accumulator carries up to S into every MMA: m(K + 2)u_acc. With partial sums of F MMAs each
// from 0, an MMA of partial c carries at most S_c = Σ_{k in c} |h h|, so the MMAs give
// F(K + 2)u_acc·Σ_c S_c = F(K + 2)u_acc·S, and each of the ⌈m/F⌉ − 1 float32 additions of a
// partial to the running sum (the first is a copy) rounds once, at most u32·S. At d = 4 096
// (m = 256) that is 8× narrower with F = 32 (the joins' default), 16× with F = 16: there the
// accumulation was most of the band (RESULTS, 2026-11-29). Whenever partials are summed (m > F)
// this is below m(K + 2)u_acc. Second-order terms (a partial's own error inside S_c, the running
// sum's own) are in the callers' 1.01, which holds while F(K + 2)u_acc stays under 10^-2
// (F ≤ kMaxGramFold; one accumulator: d up to ~37 000).
constexpr int kMaxGramFold = 1024;
// Whether the MMAs of dimension d sum in partials of f.fold (F even: whole stages of 2 MMAs).
TWOBODY_GRAM_HD inline bool gram_folds(const GramFormat& f, int d) {
  return f.fold > 0 && (d + f.depth - 1) / f.depth > f.fold;
}
TWOBODY_GRAM_HD inline double gram_accumulation(const GramFormat& f, int d) {
  const double mmas = std::ceil(static_cast<double>(d) / f.depth), per_mma = (f.depth + 2) * f.u_acc;
  if (!gram_folds(f, d)) return mmas * per_mma;
  return f.fold * per_mma + (std::ceil(mmas / f.fold) - 1) * kUnit32;
}

// γ_n = n u / (1 − n u), float64.
TWOBODY_GRAM_HD inline double gamma64(int n) { return n * kUnit64 / (1.0 - n * kUnit64); }

// The centring line above per (n_i + n_j)²: |‖x'_i − x'_j‖² − key64| ≤ this · (n_i + n_j)².
TWOBODY_GRAM_HD inline double centring_factor(int d) { return 6 * kUnit64 + gamma64(d + 1); }

// An upper bound of ‖x'‖ from nu = fl64(Σ_k x'_k²) summed in order over d terms.
TWOBODY_GRAM_HD inline double norm_upper(double nu, int d) { return std::sqrt(nu * (1.0 + gamma64(d))) * (1.0 + 2 * kUnit64); }

// The Gram line above, |D − x'_i·x'_j|: n_i, n_j upper bounds of the shifted rows' norms
// (norm_upper), s_i, s_j their scales σ (powers of two).
TWOBODY_GRAM_HD inline double gram_product_bound(const GramFormat& f, int d, double ni, double nj, double si, double sj) {
  const double rd = std::sqrt(static_cast<double>(d));
  const double ei = f.u * ni + f.eta * rd / si, ej = f.u * nj + f.eta * rd / sj;
  const double s = (ni * (1 + f.u) + f.eta * rd / si) * (nj * (1 + f.u) + f.eta * rd / sj);
  return ei * nj + ni * ej + ei * ej + gram_accumulation(f, d) * s;
}

// E for one pair (arguments as gram_product_bound's).
TWOBODY_GRAM_HD inline double gram_distance_bound(const GramFormat& f, int d, double ni, double nj, double si, double sj) {
  const double gram = gram_product_bound(f, d, ni, nj, si, sj);
  const double norm_rel = kUnit32 * (1 + gamma64(d)) + gamma64(d);
  const double sum2 = (ni + nj) * (ni + nj);
  const double epilogue = 2 * kUnit32 * (1 + 1e-6) * sum2;
  const double centring = centring_factor(d) * sum2;
  return 1.01 * (2 * gram + norm_rel * (ni * ni + nj * nj) + epilogue + centring);
}

// A tile's verdict thresholds for keys <= T (a join's limit): s̃ <= in_below is in, s̃ > out_above
// is out, anything between is settled by the rule. E is the tile's largest bound (from its largest
// norms and smallest scales). Computed in float64 and rounded outward to float32.
struct GramThresholds {
  float in_below;
  float out_above;
};
TWOBODY_GRAM_HD inline GramThresholds gram_thresholds(double limit, double bound) {
  const double lo = limit - bound, hi = limit + bound;
  float l = static_cast<float>(lo), h = static_cast<float>(hi);
  if (static_cast<double>(l) > lo) l = std::nextafter(l, -HUGE_VALF);
  if (static_cast<double>(h) < hi) h = std::nextafter(h, HUGE_VALF);
  return {l, h};
}

// A lower bound of ‖x'‖ from nu = fl64(Σ_k x'_k²) summed in order over d terms (norm_upper's twin).
TWOBODY_GRAM_HD inline double norm_lower(double nu, int d) {
  return std::sqrt(nu * (1.0 - gamma64(d + 1))) * (1.0 - 4 * kUnit64);
}

// x moved outward past the rounding of the one operation that produced it (relative 2^-50 > 4u64
// covers a correctly rounded +, −, ×, √; 2^-1060 a subnormal result's absolute error): the k-NN
// bound's arithmetic below keeps every intermediate on its side of the exact value this way.
TWOBODY_GRAM_HD inline double outward_up(double x) { return x + std::fabs(x) * 0x1p-50 + 0x1p-1060; }
TWOBODY_GRAM_HD inline double outward_down(double x) { return x - std::fabs(x) * 0x1p-50 - 0x1p-1060; }

// k nearest neighbours (cuda/gram_knn.cu): the bound in distance space. The k-NN tiles take as
// squared norms N̂ = fl32(fl64(Σ_k ĥ_k²)) of the rounded rows ĥ = h/σ (exact in float64) instead
// of x''s, so that s̃ is within A of ŝ = ‖ĥ_i − ĥ_j‖² (float32 and accumulation errors only, from
// m ≥ ‖ĥ‖), and ‖ĥ_i − ĥ_j‖ is within ‖δ_i − δ_j‖ ≤ ρ_i + ρ_j = r of ‖x'_i − x'_j‖, δ = ĥ − x' a
// row's rounding, measured on the host (ρ ≥ ‖δ‖: cuda/gram_knn_rows.hpp). With C the centring
// term of gram_distance_bound,
//   key64 ∈ [ (√(s̃ − A) − r)₊² − C , (√(s̃ + A) + r)² + C ],
//   A = 1.01·[norm_rel·(m_i² + m_j²) + 2α·m_i m_j + 2u32(1 + 10⁻⁶)(m_i + m_j)²]  (α: gram_accumulation):
// the FP16 rounding enters as r, proportional to the distance rather than to the norms, so near
// neighbours far from the centre keep a narrow band (gram_distance_bound's E grows with n_i n_j).
// A, r and C from a tile's largest m, ρ and n bound every pair of the tile (all three increase
// with each argument).
struct GramKnnBound {
  double a, r, c;
};
TWOBODY_GRAM_HD inline GramKnnBound gram_knn_bound(const GramFormat& f, int d, double mi, double mj, double ri, double rj,
                                                   double ni, double nj) {
  const double norm_rel = kUnit32 * (1 + gamma64(d)) + gamma64(d);
  const double msum = (mi + mj) * (mi + mj), nsum = (ni + nj) * (ni + nj);
  const double a = 1.01 * (norm_rel * (mi * mi + mj * mj) + 2 * gram_accumulation(f, d) * mi * mj +
                           2 * kUnit32 * (1 + 1e-6) * msum);
  const double c = 1.01 * centring_factor(d) * nsum;
  return {outward_up(a), outward_up(ri + rj), outward_up(c)};
}

// key64 <= gram_key_upper(b, s̃) and key64 >= gram_key_lower(b, s̃) for every pair b bounds.
TWOBODY_GRAM_HD inline double gram_key_upper(const GramKnnBound& b, double s) {
  const double t = outward_up(s + b.a);
  const double q = outward_up(outward_up(std::sqrt(t > 0 ? t : 0.0)) + b.r);
  return outward_up(outward_up(q * q) + b.c);
}
TWOBODY_GRAM_HD inline double gram_key_lower(const GramKnnBound& b, double s) {
  const double t = outward_down(s - b.a);
  const double q = outward_down(outward_down(std::sqrt(t > 0 ? t : 0.0)) - b.r);
  return outward_down(outward_down(q > 0 ? q * q : 0.0) - b.c);
}
// The largest s̃ whose lower key can be <= u (u >= 0, +inf allowed): every pair with s̃ above it
// has key64 > u. (gram_key_lower(s) <= u needs √(s − A) − r <= √(u + C).)
TWOBODY_GRAM_HD inline double gram_key_admits(const GramKnnBound& b, double u) {
  const double q = outward_up(outward_up(std::sqrt(outward_up(u + b.c))) + b.r);
  return outward_up(outward_up(q * q) + b.a);
}
// The joins' thresholds from the bound in distance space: the tiles take the rounded rows' N̂ (as
// the k-NN's) and compare s̃ with these instead of limit ± E. E holds the FP16 rounding in
// proportion to n_i n_j; here it enters as r, in proportion to the distance, so for clustered
// rows far from the centre the band of undecided pairs is narrower by about √limit / n. For keys
// <= limit: s̃ <= in_below has gram_key_upper <= limit (key64 <= limit), s̃ > out_above has
// gram_key_lower > limit. Both bounds are non-decreasing in s̃ (every step, the outward ones
// included, is monotone), so one check at the threshold holds for every s̃ beyond it. Each starts
// from the closed form, (√(limit − C) − r)² − A and gram_key_admits, and steps past the outward
// roundings (a float or two; doubling steps when the start is far off); one that would not settle
// in 64 steps gives up to ∓inf (every such pair undecided: settled by the rule).
// The band's closed forms about a limit L: s̃ at or below in_start has keys ≤ L but for the
// outward roundings (−inf when √(L − C) ≤ r: no s̃ certifies that), every s̃ above out_start
// (gram_key_admits) keys > L. The thresholds below start from them; the precision choice's
// estimate (cuda/vector_choice.cpp) takes them as they are.
struct GramKnnBand {
  double in_start, out_start;
};
TWOBODY_GRAM_HD inline GramKnnBand gram_knn_band(double limit, const GramKnnBound& b) {
  const double room = limit - b.c;
  const double root = room >= 0 ? std::sqrt(room) - b.r : -1.0;
  return {root >= 0 ? root * root - b.a : -HUGE_VAL, gram_key_admits(b, limit)};
}

TWOBODY_GRAM_HD inline GramThresholds gram_knn_thresholds(double limit, const GramKnnBound& b) {
  // A float at or below (above) x; and the k-th step away from a start x: four floats first,
  // then doubling steps of 2^(k−52)·scale, which reach a threshold far from the closed form (when
  // the root part nearly cancels against A, the start holds none of its bits).
  const auto below = [](double x) {
    float f = static_cast<float>(x);
    return static_cast<double>(f) > x ? std::nextafter(f, -HUGE_VALF) : f;
  };
  const auto above = [](double x) {
    float f = static_cast<float>(x);
    return static_cast<double>(f) < x ? std::nextafter(f, HUGE_VALF) : f;
  };
  const GramKnnBand band = gram_knn_band(limit, b);
  float in = -HUGE_VALF;
  if (band.in_start > -HUGE_VAL) {
    const double start = band.in_start, scale = std::fmax(std::fabs(start), b.a);
    float s = below(start);
    for (int k = 0; k < 64 && gram_key_upper(b, s) > limit; ++k)
      s = k < 4 ? std::nextafter(s, -HUGE_VALF) : below(start - scale * std::ldexp(1.0, k - 52));
    if (gram_key_upper(b, s) <= limit) in = s;
  }
  const double start = band.out_start, scale = std::fmax(std::fabs(start), b.a);
  float out = above(start);
  for (int k = 0; k < 64 && gram_key_lower(b, std::nextafter(out, HUGE_VALF)) <= limit; ++k)
    out = k < 4 ? std::nextafter(out, HUGE_VALF) : above(start + scale * std::ldexp(1.0, k - 52));
  if (!(gram_key_lower(b, std::nextafter(out, HUGE_VALF)) > limit)) out = HUGE_VALF;
  return {in, out};
}

// The settle queue's first look at an undecided pair (cuda/gram_tiles.cu), before the rule: s =
// ‖ĥ_i − ĥ_j‖² of the rounded rows ĥ = h/σ (each ĥ_k exact in float64) summed in float64 on the
// CUDA cores, in any order. A term's difference, its square and its addition round once each, and
// a square may underflow (2^-1074 at most), so |s − ‖ĥ_i − ĥ_j‖²| ≤ 2γ_{d+3}·s + d·2^-1070 =: a;
// with r = ρ_i + ρ_j and C from the norms as gram_knn_bound's, the k-NN's argument gives key64 in
// [gram_key_lower(b, s), gram_key_upper(b, s)] for b = {a, r, C}. It reads each coordinate as
// FP16 (2 bytes against the rule's 8) and has no tensor-core or float32 term: a pair the tiles
// left undecided is often decided here, and only the rest reads the rule's rows.
TWOBODY_GRAM_HD inline GramKnnBound gram_half_distance_bound(int d, double s, double ri, double rj, double ni, double nj) {
  const double a = outward_up(outward_up(s * (2 * gamma64(d + 3))) + static_cast<double>(d) * 0x1p-1070);
  const double c = 1.01 * centring_factor(d) * (ni + nj) * (ni + nj);
  return {a, outward_up(ri + rj), outward_up(c)};
}

// Whether every pair of rows whose norms ‖x'‖ lie a gap of at least `gap` apart (a lower bound of
// |‖x'_i‖ − ‖x'_j‖| <= ‖x'_i − x'_j‖) has key64 > u: κ' >= gap², key64 >= κ' − C.
TWOBODY_GRAM_HD inline bool gram_gap_exceeds(const GramKnnBound& b, double gap, double u) {
  return gap > 0 && outward_down(outward_down(gap * gap) - b.c) > u;
}

// A range of keys [lo, hi) as the tiles decide it: key < hi is key <= limit_hi (the largest double
// below hi), key >= lo is key > limit_lo; lo <= 0 is no lower edge (keys are >= 0). Both limits
// are capped at 2^120, above the key of any rows the Gram path admits (gram_rows.hpp), so that
// their float32 thresholds stay finite.
struct GramRange {
  double limit_lo, limit_hi;
  bool has_lo;
};
TWOBODY_GRAM_HD inline GramRange gram_range(double lo, double hi) {
  constexpr double cap = 0x1p120;
  const double below_hi = std::nextafter(hi, 0.0), below_lo = std::nextafter(lo, 0.0);
  return {lo > 0 ? (below_lo < cap ? below_lo : cap) : 0.0, below_hi < cap ? below_hi : cap, lo > 0};
}

// A tile's four thresholds for the range, from its bound E; none at the lower edge when it has none
// (every s̃ is above −∞ and none at or below it).
struct GramTileThresholds {
  float hi_in, hi_out, lo_in, lo_out;
};
TWOBODY_GRAM_HD inline GramTileThresholds gram_tile_thresholds(const GramRange& r, double bound) {
  const GramThresholds hi = gram_thresholds(r.limit_hi, bound);
  if (!r.has_lo) return {hi.in_below, hi.out_above, -HUGE_VALF, -HUGE_VALF};
  const GramThresholds lo = gram_thresholds(r.limit_lo, bound);
  return {hi.in_below, hi.out_above, lo.in_below, lo.out_above};
}

// The same four from the bound in distance space (gram_knn_thresholds), for the tiles on N̂ rows.
TWOBODY_GRAM_HD inline GramTileThresholds gram_knn_tile_thresholds(const GramRange& r, const GramKnnBound& b) {
  const GramThresholds hi = gram_knn_thresholds(r.limit_hi, b);
  if (!r.has_lo) return {hi.in_below, hi.out_above, -HUGE_VALF, -HUGE_VALF};
  const GramThresholds lo = gram_knn_thresholds(r.limit_lo, b);
  return {hi.in_below, hi.out_above, lo.in_below, lo.out_above};
}

// A pair's verdict from its s̃: in (key certainly in [lo, hi)), out, or undecided (NaN included):
// then the rule decides.
enum class GramVerdict { In, Out, Undecided };
TWOBODY_GRAM_HD inline GramVerdict gram_verdict(float s, const GramTileThresholds& t) {
  if (s <= t.hi_in && s > t.lo_out) return GramVerdict::In;
  if (s > t.hi_out || s <= t.lo_in) return GramVerdict::Out;
  return GramVerdict::Undecided;
}

// A pair's verdict from an interval [low, up] holding its key (the first look's): in when the whole
// interval is in [lo, hi), out when it is wholly outside, else undecided (NaN included).
TWOBODY_GRAM_HD inline GramVerdict gram_interval_verdict(double low, double up, const GramRange& r) {
  if (!(low <= up)) return GramVerdict::Undecided;
  if (up <= r.limit_hi && (!r.has_lo || low > r.limit_lo)) return GramVerdict::In;
  if (low > r.limit_hi || (r.has_lo && up <= r.limit_lo)) return GramVerdict::Out;
  return GramVerdict::Undecided;
}

// The cosine distance on the same tiles. Its key is key64 = fl(1 − Σ̂), Σ̂ = Σ_k fl(x̂_ik x̂_jk)
// summed in order over the rule's normalised rows x̂ (docs/exactness.md). The tiles take the rows
// x̂ without centring (x' = x̂, exactly) and every N set to 1, so their epilogue gives
//   s̃ = fl32(fl32(1 + 1) − 2D) = 2·fl32(1 − D)        (a scaling by 2 commutes with rounding)
// and compares it with twice the key's range (gram_cosine_range). D is exact as for distances
// (a nonzero G is a multiple of 2^-48 and 1/σ >= 2^-39: D stays normal). With n_i, n_j upper
// bounds of ‖x̂‖ (norm_upper: near 1, but nothing below assumes it) and p = x̂_i·x̂_j exactly,
//   |D − p|                ≤ Gram                          (gram_product_bound)
//   |fl32(1 − D) − (1 − D)| ≤ u32·(1 + n_i n_j + Gram)
//   |Σ̂ − p|                ≤ γ_d·n_i n_j                    (Σ_k |x̂_ik x̂_jk| ≤ n_i n_j)
//   |key64 − (1 − Σ̂)|      ≤ u64·(1 + n_i n_j (1 + γ_d))
// so |s̃ − 2·key64| ≤ 2E with E = 1.01·(the sum), the 1.01 for the second-order terms. This
// returns 2E, the bound in the tiles' units.
TWOBODY_GRAM_HD inline double gram_cosine_bound(const GramFormat& f, int d, double ni, double nj, double si, double sj) {
  const double gram = gram_product_bound(f, d, ni, nj, si, sj);
  const double p = ni * nj, g = gamma64(d);
  const double e = gram + kUnit32 * (1 + 1e-6) * (1 + p + gram) + g * p + kUnit64 * (1 + p * (1 + g));
  return 2 * 1.01 * e;
}

// A range of cosine keys [lo, hi) in the tiles' units, 2·key: key < hi is 2·key <= 2·limit_hi
// (limit_hi the largest double below hi, whatever hi's sign), key >= lo is 2·key > 2·limit_lo.
// Cosine keys may be (slightly) negative, so the lower edge is always tested (the planner's −1
// for a range from 0 included: every real key lies above it). Capped at ±2^120 as gram_range.
TWOBODY_GRAM_HD inline GramRange gram_cosine_range(double lo, double hi) {
  constexpr double cap = 0x1p120;
  double l = 2 * std::nextafter(lo, -HUGE_VAL), h = 2 * std::nextafter(hi, -HUGE_VAL);
  l = l < -cap ? -cap : l > cap ? cap : l;
  h = h < -cap ? -cap : h > cap ? cap : h;
  return {l, h, true};
}

// The cosine k-NN (cuda/gram_knn.cu on the rows x̂, N̂ of their rounding): gram_knn_bound's a and
// r bound κ = ‖x̂_i − x̂_j‖² as for distances (x' = x̂); and since
//   2·key64 − κ = 2·(key64 − (1 − p)) + (1 − q_i) + (1 − q_j),   q = ‖x̂‖²,
// the c of 2·key64 is 1.01·[δ_i + δ_j + 2γ_d n_i n_j + 2u64(1 + n_i n_j (1 + γ_d))] with
// δ = max(n_up² − 1, 1 − n_lo²) from a row's upper and lower norm bounds (norm_upper, norm_lower).
// The keys of this bound are 2·key64; from a tile's largest m, ρ, n_up and smallest n_lo it bounds
// every pair of the tile.
TWOBODY_GRAM_HD inline double cosine_norm_slack(double n_up, double n_lo) {
  const double above = outward_up(outward_up(n_up * n_up) - 1), below = outward_up(1 - outward_down(n_lo * n_lo));
  const double m = above > below ? above : below;
  return m > 0 ? m : 0.0;
}
TWOBODY_GRAM_HD inline GramKnnBound gram_cosine_knn_bound(const GramFormat& f, int d, double mi, double mj, double ri,
                                                          double rj, double ni_up, double nj_up, double ni_lo,
                                                          double nj_lo) {
  GramKnnBound b = gram_knn_bound(f, d, mi, mj, ri, rj, 0, 0);
  const double p = outward_up(ni_up * nj_up), g = gamma64(d);
  const double c = cosine_norm_slack(ni_up, ni_lo) + cosine_norm_slack(nj_up, nj_lo) + 2 * g * p +
                   2 * kUnit64 * (1 + p * (1 + g));
  b.c = outward_up(1.01 * c);
  return b;
}

}  // namespace twobody::exact
