#pragma once
// The error bounds of the dot-like matrix kernels on a float64 GEMM (cuda/gemm_matrix.cu, issue 23):
// the GEMM's products are float64 but its summation order is the library's (blocked, tensor-core
// fragments), not the float64 rule's k = 0 … d−1, so an entry is no longer the rule's bits. What
// the route promises instead, per kernel (docs/exactness.md#matrices-on-the-gemm-route):
//
//   dot       |ĝ − a·b| ≤ γ_d Σ|a_k b_k| ≤ γ_d ‖a‖‖b‖            any summation order (Higham 3.1)
//   cosine,   the rows' norms (or centred norms) are the rule's own bits, computed on the host;
//   pearson,  only ĝ differs, so the value is within γ_d (1 + γ_d) + 4u of the rule's formula
//   spearman  with the exact dot product: a normwise bound on a value in [−1, 1] (cosine distance in
//             [0, 2]); no relative bound near 0 is claimed. The rule's own value is within the
//             same of it, so the two differ by at most twice these bounds.
//   l2,       ‖x_i − x_j‖² = q_i + q_j − 2 x_i·x_j on rows shifted to a common centre c
//   sqeuclidean (x' = fl(x − c), q = Σ fl(x'²) in order), then the route *settles* every entry
//             whose relative error bound exceeds kSettleFactor times the rule's own worst-case
//             bound: such entries (the cancellation of near pairs) are recomputed by the rule on
//             the device and are its bits. Every other entry is within that relative bound.
//
// The bound of an l2 entry, with S = q_i + q_j (computed) and κ̂ = fl(fl(q_i + q_j) − 2ĝ):
//   |κ̂ − ‖x'_i − x'_j‖²| ≤ E = 1.01 (2γ_d + 3u) S      (norms γ_d S, GEMM 2·γ_d S/2, two roundings:
//                                                         u S and u|κ̂| ≤ 2u S)
//   |‖x'_i − x'_j‖ − ‖x_i − x_j‖| ≤ e_c = 1.01 u √(2S)   (the centring: each x' within u|x − c|)
// so the true distance D lies in [L, U] = [√max(0, κ̂ − E) − e_c, √(κ̂ + E) + e_c]. These relative
// bounds assume no underflow: rows so small that S < 2^-900 (their products could be subnormal)
// are settled whole, as are non-finite S (overflow).
// Plain C++ so that the device code and the CPU test (tests/gemm_bounds_test.cpp) share it.
#include <cmath>

#if defined(__CUDACC__)
#define TWOBODY_GEMM_HD __host__ __device__
#else
#define TWOBODY_GEMM_HD
#endif

namespace twobody::exact {

constexpr double kGemmUnit = 0x1p-53;
// An entry is settled when its bound exceeds this many times the rule's own worst case.
constexpr double kSettleFactor = 8;

TWOBODY_GEMM_HD inline double gemm_gamma(double n) { return n * kGemmUnit / (1.0 - n * kGemmUnit); }

// dot: the bound factor of γ_d ‖a‖‖b‖; cosine and the correlations: the absolute bound.
TWOBODY_GEMM_HD inline double gemm_dot_bound(int d) { return gemm_gamma(d); }
TWOBODY_GEMM_HD inline double gemm_unit_bound(int d) { return gemm_gamma(d) * (1 + gemm_gamma(d)) + 4 * kGemmUnit; }

// The rule's own worst-case relative error of a distance (Σ of d rounded squares of rounded
// differences, then a square root): γ_{d+3}/2 + u; of a squared distance: γ_{d+3}.
TWOBODY_GEMM_HD inline double rule_distance_error(int d) { return gemm_gamma(d + 3) / 2 + kGemmUnit; }
TWOBODY_GEMM_HD inline double rule_squared_error(int d) { return gemm_gamma(d + 3); }

// The relative bounds the route keeps (beyond them an entry is settled).
TWOBODY_GEMM_HD inline double gemm_distance_tolerance(int d) { return kSettleFactor * rule_distance_error(d); }
TWOBODY_GEMM_HD inline double gemm_squared_tolerance(int d) { return kSettleFactor * rule_squared_error(d); }

// err itself is computed in float64 (a few roundings): compared with the tolerance after this
// margin, so an entry at the tolerance is settled rather than passed by an ulp.
constexpr double kMarginUp = 1 + 0x1p-20;

struct GemmDistance {
  double value;  // the route's entry: the distance (squared: the squared distance), clamped at 0
  bool settle;   // its bound exceeds the tolerance: recompute it by the rule
};

// κ̂ = fl(fl(q_i + q_j) − fl(2ĝ)); the entry and whether it must be settled.
TWOBODY_GEMM_HD inline GemmDistance gemm_distance(double qi, double qj, double g, int d, bool squared) {
  const double s = qi + qj;
  const double kappa = s - 2 * g;
  const double e = 1.01 * (2 * gemm_gamma(d) + 3 * kGemmUnit) * s;
  const double ec = 1.01 * kGemmUnit * std::sqrt(2 * s);
  const double lo = std::sqrt(kappa - e > 0 ? kappa - e : 0.0) - ec;
  const double hi = std::sqrt(kappa + e > 0 ? kappa + e : 0.0) + ec;
  const double clamped = kappa > 0 ? kappa : 0.0;
  if (!(lo > 0) || !(s >= 0x1p-900)) return {squared ? clamped : std::sqrt(clamped), true};
  if (squared) {
    // (the rounding of κ̂ itself is inside e; relative to the least square L²)
    const double err = (hi * hi - lo * lo) / (lo * lo);
    return {clamped, !(err * kMarginUp <= gemm_squared_tolerance(d))};
  }
  const double v = std::sqrt(clamped);
  const double err = ((hi - v > v - lo ? hi - v : v - lo) + kGemmUnit * v) / lo;
  return {v, !(err * kMarginUp <= gemm_distance_tolerance(d))};
}

}  // namespace twobody::exact
