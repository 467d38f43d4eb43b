#pragma once
// The error bound of a lattice map's terms (docs/exactness.md, "Lattices"): how far a computed
// term may be from the term evaluated exactly at the float64 displacement the rule uses.
//
// Double: the displacement is the rule's own; r² = Σ d_k² rounds three times (≤ 3·2^−53·r²
// ≤ 3·2^−53·C²), moving g by at most slope·that, and g's own evaluation adds κ_g·2^−53·g_max.
// Single: each axis' displacement is D_k·fl32(h_k) with D_k = f_k − m_k in float32 (f_k the
// source's offset from its floor node in spacings, m_k an exact small integer). Its distance from
// the float64 displacement is at most
//   e_k = 1.01·2^−24·(3h_k + 3C) + 8·2^−53·X
// (f_k's rounding ≤ 2^−24·|f_k|·h_k with |f_k| ≤ 1 + 2^−20, D_k's ≤ 2^−24·(C + 2h_k), h_k's and the
// product's ≤ 2^−23·C; X bounds |origin|, |x − origin| and the lattice's extent, whose float64
// roundings the node and the wrap add). Then |δ(d_k²)| ≤ 2C·e_k + e_k² + 2^−24·C² per axis, and
// r²'s two float32 sums add 2·1.01·2^−24·C². The term moves by slope·|δr²| (radial) or, for a
// separable product of factors ≤ 1, by Σ_k slope·|δ(d_k²)|, plus g's float64 evaluation.
#include <algorithm>
#include <cmath>

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
  const double C = in.cutoff, C2 = C * C;
  const bool single = in.precision == Precision::Single;
  const double e = 1.01 * u * (3 * in.max_spacing + 3 * C) + 8 * U * in.coordinate_scale;
  const double axis_d2 = single ? 2 * C * e + e * e + u * C2 : U * C2;   // one axis' d_k²
  const double r2_error = single ? in.dim * axis_d2 + 2.02 * u * C2 : 3 * U * C2;
  return visit_lattice_function(fn, [&](const auto& f) -> TermBound {
    using F = std::decay_t<decltype(f)>;
    double slope = 0, g_max = 0, kappa = 0;
    double geometry = r2_error;
    if constexpr (std::is_same_v<F, CoulombSwitched>) {
      // A float32 r² a rounding below R_ex²: the radius the slope and g_max are taken at.
      const double r_min = std::sqrt(std::max(in.exclusion * in.exclusion - r2_error, 0.25 * in.exclusion * in.exclusion));
      slope = f.slope(r_min);
      g_max = f.g_max(r_min);
      kappa = 16;
    } else if constexpr (std::is_same_v<F, BlinnBlob>) {
      slope = f.slope_for(in.min_radius);
      g_max = f.g_max(0);
      kappa = 16 + 6 * f.blobbiness;  // exp's argument B − B·r²/R² carries ~3·2^−53·B absolute
    } else {
      slope = f.slope(0);
      g_max = f.g_max(0);
      kappa = 220 + 12 * f.beta;  // I₀'s series, its argument's rounding (relative sensitivity ≤ β), ÷, √
      if constexpr (F::kSeparable) {
        geometry = single ? axis_d2 : U * C2;
        slope *= in.dim;  // Σ over axes, each factor's neighbours ≤ 1
        kappa *= in.dim;
      }
    }
    TermBound b;
    b.term = in.max_strength * (slope * geometry + kappa * U * g_max);
    b.grid_bound = in.max_strength * g_max * (1 + 0x1p-20);
    return b;
  });
}

}  // namespace twobody::lattice
