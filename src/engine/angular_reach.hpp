#pragma once
// The cutoff a cell grid of angles needs: an upper bound, proven for rounding, on the straight
// (chord) distance |a − b| of every pair the angular rule can count. The grid then works on the
// points' Cartesian coordinates as for any Euclidean cutoff (grid_geometry.hpp: cells at least
// that wide hold every such pair in neighbouring cells).
//
// The rule counts a pair when key = fl(−((a_x b_x + a_y b_y) + a_z b_z)) < hi, the last key edge
// (−cos θ_max, or the next double above it for a range that includes θ_max). The rounded dot
// product s is within γ₃·Σ|a_k b_k| ≤ γ₃|a||b| of a·b (γ₃ = 3u/(1 − 3u), u = 2⁻⁵³; Higham, §3.1),
// so a counted pair has −a·b < hi + γ₃|a||b|, and with M ≥ max(|a|², |b|²) over both sets
//     |a − b|² = |a|² + |b|² − 2 a·b < 2M(1 + γ₃) + 2 hi.
// M comes from the stored coordinates: m = fl((x² + y²) + z²) ≥ |x|²(1 − γ₃), so
// M = max m · (1 + 2⁻⁴⁸) bounds every |x|²(1 + γ₃) with room for its own rounding (2⁻⁴⁸ = 32u).
// The bound is then evaluated upward: S = fl(2(M + hi)) is within a factor (1 + u) of its exact
// value, and R = fl(√S)·(1 + 2⁻⁴⁸) + 2⁻⁵⁰⁰ exceeds √(S(1 + 2u)) (the 2⁻⁵⁰⁰ covers S rounded to
// zero). For unit vectors M ≈ 1 and R² ≈ 2 − 2 cos θ_max: the chord of θ_max, widened by
// ~10⁻¹⁵ in R², which is what the GPU's cells use (cuda/resident_device.cuh: grid_cutoff).
// Points need not be unit vectors for the bound to hold; far from them it only prunes less.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "twobody/points.hpp"

namespace twobody {

struct AngularReach {
  double chord = 0;       // R: every counted pair has |a − b| < R (infinity: no bound)
  double max_norm2 = 0;   // M
};

// The largest fl((x² + y²) + z²) of a set of 3-D points (NaN when a coordinate is not finite).
inline double max_norm2(const PointSet& p, int threads) {
  const auto n = static_cast<std::int64_t>(p.size());
  const double *x = p.coord(0).data(), *y = p.coord(1).data(), *z = p.coord(2).data();
  double m = 0;
  bool finite = true;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(max : m) reduction(&& : finite) if (n > 100000)
  for (std::int64_t i = 0; i < n; ++i) {
    const double s = (x[i] * x[i] + y[i] * y[i]) + z[i] * z[i];
    finite = finite && std::isfinite(s);
    m = std::max(m, s);
  }
  return finite ? m : std::numeric_limits<double>::quiet_NaN();
}

// `hi`: the last key edge; `a`, `b`: the run's sets (b == a for auto). An infinite chord when the
// points hold a value that is not finite or the bound overflows: no grid then.
inline AngularReach angular_reach(double hi, const PointSet& a, const PointSet& b, int threads) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  AngularReach r;
  const double ma = max_norm2(a, threads), mb = &b == &a ? ma : max_norm2(b, threads);
  if (!(std::isfinite(ma) && std::isfinite(mb) && std::isfinite(hi))) {
    r.chord = r.max_norm2 = inf;
    return r;
  }
  r.max_norm2 = std::max(ma, mb) * (1 + 0x1p-48);
  const double s = 2 * (r.max_norm2 + hi);
  r.chord = std::isfinite(s) ? std::sqrt(std::max(s, 0.0)) * (1 + 0x1p-48) + 0x1p-500 : inf;
  return r;
}

}  // namespace twobody
