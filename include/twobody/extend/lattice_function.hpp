#pragma once
// The lattice functions (twobody/lattice.hpp) as compile-time types, one implementation for the
// host and the device: a term is strength × g, g a function of the squared distance r² (radial)
// or of each axis' squared displacement d_k² (separable), evaluated in float64 with IEEE
// operations and the portable exp and I₀ only, so a CPU and a GPU term have the same bits.
// `aux` is a per-source parameter (Blinn: R_i², unused elsewhere).
//
// The contract a new function meets (LatticeFunctionType): trivially copyable, `kSeparable`,
// `g(double r2, double aux)` (radial) or `axis(double d2)` (separable, the term's factor along one
// axis) and `g_max` (the largest g); how g moves with r² goes, in closed form, into the error
// bound of src/exact/lattice_bounds.hpp.
#include <concepts>
#include <type_traits>

#include "twobody/config.hpp"
#include "twobody/error.hpp"
#include "twobody/extend/portable_bessel.hpp"
#include "twobody/extend/portable_math.hpp"
#include "twobody/lattice.hpp"

namespace twobody::lattice {

// q·s²/r with s = 1 − r²/C² for r < C (cutcp's switched Coulomb potential, from VMD). r ≥ R_ex
// holds for every pair the rule keeps (closer nodes are excluded); the float32 r² of Single may
// fall a rounding below R_ex², covered by the bound taken at that slightly smaller radius.
struct CoulombSwitched {
  static constexpr bool kSeparable = false;
  double c2 = 1;  // C²
  TWOBODY_HD double g(double r2, double /*aux*/) const {
    const double s = 1.0 - r2 / c2;
    return s * s / sqrt(r2);
  }
  // For r ≥ r_min: g ≤ 1/r_min; |dg/dr²| = |−2s/(C² r) − s²/(2 r³)| ≤ 2/(C² r) + 1/(2 r³).
  double g_max(double r_min) const { return 1.0 / r_min; }
};

// Blinn's blob: exp(B·(1 − r²/R_i²)), e^B at the centre and 1 at r = R_i (Blinn 1982), truncated
// at the cutoff C.
struct BlinnBlob {
  static constexpr bool kSeparable = false;
  double blobbiness = 0;
  TWOBODY_HD double g(double r2, double radius2) const {
    return portable::exp(blobbiness - blobbiness * r2 / radius2);
  }
  // g ≤ e^B; |dg/dr²| = B/R²·g.
  double g_max(double /*r_min*/) const { return portable::exp(blobbiness); }
};

// Kaiser–Bessel: I₀(β·sqrt(1 − r²/a²)) / I₀(β), a = C (half the width W), 1 at the centre (the
// seed's MRI gridding window, Jackson et al. 1991, β from Beatty et al. 2005). Radial, or separable
// as the product of its 1-D form along each axis. The square root's argument is clamped at 0 (a
// float32 r² just beyond a² for a pair the float64 rule keeps).
struct KaiserBessel {
  double a2 = 1;     // a²
  double beta = 0;   // β
  double inv_i0 = 1; // 1 / I₀(β)
  TWOBODY_HD double window(double d2) const {
    double s2 = 1.0 - d2 / a2;
    if (s2 < 0) s2 = 0;
    return portable::bessel_i0(beta * sqrt(s2)) * inv_i0;
  }
  // g ≤ 1; dg/d(s²) = β·I₁(βs)/(2s)/I₀(β) ≤ β²/4 (I₁(x)/x ≤ I₀(x)/2), so |dg/dr²| ≤ β²/(4a²).
  double g_max(double /*r_min*/) const { return 1.0; }
  double slope(double /*r_min*/) const { return beta * beta / (4.0 * a2); }
};

struct KaiserBesselRadial : KaiserBessel {
  static constexpr bool kSeparable = false;
  TWOBODY_HD double g(double r2, double /*aux*/) const { return window(r2); }
};

struct KaiserBesselSeparable : KaiserBessel {
  static constexpr bool kSeparable = true;
  TWOBODY_HD double axis(double d2) const { return window(d2); }
};

template <class F>
concept LatticeFunctionType = std::is_trivially_copyable_v<F> && requires(const F& f, double x) {
  { F::kSeparable } -> std::convertible_to<bool>;
};

// Calls fn with the functor of `f` (validated by the planner first).
template <class Fn>
decltype(auto) visit_lattice_function(const LatticeFunction& f, Fn&& fn) {
  switch (f.kind) {
    case LatticeKernel::CoulombSwitched:
      return fn(CoulombSwitched{f.cutoff * f.cutoff});
    case LatticeKernel::BlinnBlob:
      return fn(BlinnBlob{f.blobbiness});
    case LatticeKernel::KaiserBessel: {
      const double beta = f.beta > 0 ? f.beta : f.kaiser_bessel_beta();
      const KaiserBessel kb{f.cutoff * f.cutoff, beta, 1.0 / portable::bessel_i0(beta)};
      if (f.support == Support::Box) return fn(KaiserBesselSeparable{kb});
      return fn(KaiserBesselRadial{kb});
    }
  }
  throw Error(ErrorKind::Internal, "unknown lattice function");
}

}  // namespace twobody::lattice
