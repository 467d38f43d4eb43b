#pragma once
// The pair potentials of short-range forces (reduce::PointSums, twobody/forces.hpp), one
// implementation for the host and the device. A pair (i, j) within the cutoff C, displacement
// d = x_i − x_j (minimum image in a periodic box) and r² = Σ_k d_k² (the distance rule of
// docs/exactness.md), is worth an energy E and a force F = f·d on i (−F on j), evaluated in float64
// with IEEE operations only (+ − × ÷ √, no FMA), so every backend computes the same bits.
//
//   Lennard-Jones:    E = 4ε((σ/r)¹² − (σ/r)⁶) − E_shift,  f = 24ε(2(σ/r)¹² − (σ/r)⁶)/r²,
//                     E_shift = the unshifted E at r = C with `shift`, else 0.
//   cutoff Coulomb:   E = q_i q_j s²/r,  f = q_i q_j (s²/r² + 4s/C²)/r,  s = 1 − r²/C²
//                     (the switched potential of `twobody potential`; f = −dE/dr / r).
#include <cmath>

#include "twobody/config.hpp"

namespace twobody {

enum class PairPotential { LennardJones, CoulombSwitched };

// What a pair is worth (the cutoff is the reduction's range). Coulomb takes the charges as the
// points' weights (Statistic::weighted), so q_i q_j is the engine's pair weight w_i w_j.
struct PairForce {
  PairPotential potential = PairPotential::LennardJones;
  double epsilon = 1, sigma = 1;  // Lennard-Jones
  bool shift = false;             // Lennard-Jones: E = 0 at the cutoff
};

// One pair's energy and force factor: F = f·d.
struct PairTerm {
  double energy = 0;
  double f = 0;
};

// The forms above for a cutoff C, as trivially copyable functors of r² and q_i q_j (1 for LJ).
struct LennardJonesTerms {
  double sigma2 = 1, eps4 = 4, eps24 = 24, e_shift = 0;
  LennardJonesTerms() = default;
  LennardJonesTerms(const PairForce& p, double cutoff)
      : sigma2(p.sigma * p.sigma), eps4(4 * p.epsilon), eps24(24 * p.epsilon) {
    if (p.shift) e_shift = (*this)(cutoff * cutoff, 1.0).energy;
  }
  TWOBODY_HD PairTerm operator()(double r2, double /*qq*/) const {
    const double s2 = sigma2 / r2;
    const double s6 = (s2 * s2) * s2;
    const double s12 = s6 * s6;
    return {eps4 * (s12 - s6) - e_shift, eps24 * ((s12 + s12) - s6) / r2};
  }
};

struct CoulombSwitchedTerms {
  double c2 = 1;
  CoulombSwitchedTerms() = default;
  CoulombSwitchedTerms(const PairForce&, double cutoff) : c2(cutoff * cutoff) {}
  TWOBODY_HD PairTerm operator()(double r2, double qq) const {
    const double r = sqrt(r2);
    const double s = 1.0 - r2 / c2;
    const double ss = s * s;
    return {qq * (ss / r), qq * ((ss / r2 + (4.0 * s) / c2) / r)};
  }
};

// The largest |E|/2 (a body's share), |F| (so every component) and |d·F| (the virial) of any pair
// at a separation of at least `closest` (> 0) and below `cutoff`, with |q| ≤ `charge`: both forms
// are bounded by functions that fall with r, taken at `closest`. Widened by 10⁻⁹ for the rounding
// of the float64 terms.
struct PairTermBounds {
  double half_energy = 0, force = 0, virial = 0;
};
inline PairTermBounds pair_term_bounds(const PairForce& p, double cutoff, double closest, double charge) {
  PairTermBounds b;
  const double r = closest;
  if (p.potential == PairPotential::LennardJones) {
    const double x6 = std::pow(p.sigma / r, 6.0), x12 = x6 * x6;
    const LennardJonesTerms t(p, cutoff);
    b.half_energy = 0.5 * (std::abs(p.epsilon) * 4 * (x12 + x6) + std::abs(t.e_shift));
    b.force = std::abs(p.epsilon) * 24 * (2 * x12 + x6) / r;
  } else {
    const double q2 = charge * charge;
    b.half_energy = 0.5 * q2 / r;
    b.force = q2 * (1 / (r * r) + 4 / (cutoff * cutoff));
  }
  b.virial = b.force * cutoff;
  b.half_energy *= 1 + 1e-9;
  b.force *= 1 + 1e-9;
  b.virial *= 1 + 1e-9;
  return b;
}

// Calls f with the potential's functor for this cutoff.
template <class F>
decltype(auto) visit_pair_force(const PairForce& p, double cutoff, F&& f) {
  if (p.potential == PairPotential::CoulombSwitched) return f(CoulombSwitchedTerms(p, cutoff));
  return f(LennardJonesTerms(p, cutoff));
}

}  // namespace twobody
