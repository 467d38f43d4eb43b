#pragma once
// The error bound of a lattice map's terms (docs/exactness.md, "Lattice maps"): how far a computed
// term may be from the term evaluated exactly at the float64 displacement the rule uses.
//
// The geometry's error is bounded as a function of the distance, |δr²| ≤ A·r + B·r² + E, and the
// term's as sup over the support of |dg/dr²|·(A·r + B·r² + E), in closed form per function (the
// largest slope sits near the centre, the largest |δr²| at the cutoff: bounding them apart would
// be hundreds of times looser for cutcp's case). u = 2^−24, U = 2^−53.
// Double: r² = (d_x² + d_y²) + d_z² of the rule's own displacements rounds ≤ (dim + 0.01)·U·r².
// Single: each axis' displacement is fl32(D_k·fl32(h_k)), D_k = fl32(f_k − m_k), f_k =
// fl32((x_k − node_k(b_k))/h_k) ∈ [0, 1]: it is within e_k = 1.01u·(2h + 3|d_k|) + 8U·X of the
// float64 displacement (f_k's rounding ≤ u·h, D_k's, h_k's and the product's ≤ u·|d_k| each, and
// X bounds |origin|, |x − origin| and the lattice's extent, whose float64 roundings the nodes and
// the wrap add). Summing 2|d_k|·e_k + e_k² + u·d_k² over the axes and the float32 sums' rounding:
//   A = 2√dim·(2.02u·h + 8U·X),  B = (7.06 + 1.01·(dim − 1))·u,  E = dim·e(C)².
// g's own float64 evaluation adds κ_g·U·g_max.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "twobody/exact_sums.hpp"
#include "twobody/extend/lattice_function.hpp"
#include "twobody/lattice.hpp"

namespace twobody::lattice {

struct BoundInputs {
  int dim = 3;
  Precision precision = Precision::Single;
  double cutoff = 0;
  double max_spacing = 0;
  double max_strength = 0;  // max |Re|, |Im| over the sources (1 without strengths)
  double coordinate_scale = 0;  // X above
  double exclusion = 0;     // Coulomb's R_ex
  double min_radius = 0;    // Blinn's smallest R_i
};

// The sum grid for terms |t| ≤ bound, each at most `bits` bits (exact_sums.hpp's SumGrid at 62 bits
// for 128-bit sums; 31 bits for Single's 64-bit sums: room for 2^32 terms of the largest size).
inline SumGrid sum_grid(double bound, int bits) {
  SumGrid g;
  if (bound > 0) g.exponent = std::ilogb(bound) + 1 - bits;
  const int first = std::min(-g.exponent, 1000);
  g.inverse_step = std::ldexp(1.0, first);
  g.inverse_step2 = std::ldexp(1.0, -g.exponent - first);
  return g;
}

struct TermBound {
  double term = 0;        // |computed − exact| per term
  double grid_bound = 0;  // the largest |term| the computation can give
};

inline TermBound term_bound(const LatticeFunction& fn, const BoundInputs& in) {
  constexpr double u = 0x1p-24, U = 0x1p-53;
  const double C = in.cutoff, h = in.max_spacing, X = in.coordinate_scale, dim = in.dim;
  const bool single = in.precision == Precision::Single;
  const double eC = 1.01 * u * (2 * h + 3 * C) + 8 * U * X;  // one axis' displacement error at |d| = C
  // |δr²| ≤ A·r + B·r² + E (radial), |δ(d_k²)| ≤ A1·|d_k| + B1·d_k² + E1 (one axis).
  const double A = single ? 2 * std::sqrt(dim) * (2.02 * u * h + 8 * U * X) : 0;
  const double B = single ? (7.06 + 1.01 * (dim - 1)) * u : (dim + 0.01) * U;
  const double E = single ? dim * eC * eC : 0;
  const double A1 = single ? 2 * (2.02 * u * h + 8 * U * X) : 0;
  const double B1 = single ? 7.06 * u : 1.01 * U;
  const double E1 = single ? eC * eC : 0;
  return visit_lattice_function(fn, [&](const auto& f) -> TermBound {
    using F = std::decay_t<decltype(f)>;
    double geometry = 0, g_max = 0, kappa = 0;
    if constexpr (std::is_same_v<F, CoulombSwitched>) {
      // |dg/dr²| ≤ 2/(C²r) + 1/(2r³) for r ≥ r_min, the radius a float32 r² a rounding below R_ex² has.
      const double R2 = in.exclusion * in.exclusion;
      const double r = std::sqrt(std::max(R2 - (A * in.exclusion + B * R2 + E), 0.25 * R2));
      // sup over [r, C] of (2/(C²ρ) + 1/(2ρ³))·(Aρ + Bρ² + E): each product monotone, so at an end.
      geometry = 2 * A / (C * C) + 2 * B / C + 2 * E / (C * C * r) + A / (2 * r * r) + B / (2 * r) + E / (2 * r * r * r);
      g_max = f.g_max(r);
      kappa = 16;
    } else if constexpr (std::is_same_v<F, BlinnBlob>) {
      // dg/dr² = (B_b/R²)·e^{B_b}·e^{−B_b r²/R²}; sup of r·e^{−a r²} is 1/√(2ea), of r²·e^{−a r²} 1/(ea).
      const double b = f.blobbiness, R = in.min_radius, eb = f.g_max(0);
      geometry = b > 0 ? eb * (A * std::sqrt(b / (2 * std::numbers::e)) / R + B / std::numbers::e + E * b / (R * R)) : 0;
      g_max = eb;
      kappa = 16 + 6 * b;  // exp's argument b − b·r²/R² carries ~3·2^−53·b absolute
    } else {
      // |dφ/dr²| ≤ β²/(4a²) with a = C and r ≤ a.
      const double slope = f.slope(0);
      g_max = 1;
      kappa = 220 + 12 * f.beta;  // I₀'s series, its argument's rounding (relative sensitivity ≤ β), ÷, √
      if constexpr (F::kSeparable) {
        geometry = dim * slope * (A1 * C + B1 * C * C + E1);  // Σ over axes, the other factors ≤ 1
        kappa *= dim;
      } else {
        geometry = slope * (A * C + B * C * C + E);
      }
    }
    TermBound t;
    t.term = in.max_strength * (geometry + kappa * U * g_max);
    t.grid_bound = in.max_strength * g_max * (1 + 0x1p-20);
    return t;
  });
}

}  // namespace twobody::lattice
