#pragma once
// Survey coordinates to Cartesian ones, as Corrfunc's *_mocks codes take them: (RA, Dec) in
// degrees and cz in km/s, cz turned into the comoving distance of a flat ΛCDM cosmology
// (Ω_Λ = 1 − Ω_m, radiation neglected) in Mpc/h (H0 = 100 h km/s/Mpc), then
//   x = d cos(Dec) cos(RA),  y = d cos(Dec) sin(RA),  z = d sin(Dec)
// with the observer at the origin. The distance is
//   d(z) = (c / 100) ∫_0^z dz' / sqrt(Ω_m (1 + z')³ + Ω_Λ),   z = cz / c,
// integrated by adaptive Gauss–Kronrod (7/15 points) to 1e-13 relative: exact to a few ulps, where
// Corrfunc tabulates it by Simpson's rule every 1e-4 in z and interpolates linearly (with its
// c = 299800 km/s the two agree to 2e-6 Mpc/h, the bound of that interpolation;
// tests/clustering2d_test.cpp checks it); here c is 299792.458 km/s unless given.
#include <cmath>
#include <cstddef>
#include <numbers>
#include <string>

#include <fmt/format.h>

#include "twobody/error.hpp"
#include "twobody/points.hpp"

namespace twobody {

struct FlatLcdm {
  double omega_m = 0.25;
  double speed_of_light = 299792.458;  // km/s (Corrfunc: 299800)

  // Corrfunc's `cosmology` presets (utils/cosmology_params.c): 1 LasDamas (Ω_m = 0.25), 2 Planck
  // (Ω_m = 0.302). Only Ω_m matters: distances are in Mpc/h.
  static FlatLcdm corrfunc(int preset) {
    if (preset == 1) return {0.25};
    if (preset == 2) return {0.302};
    throw_config(fmt::format("cosmology {} is not one of Corrfunc's presets (1 LasDamas, 2 Planck)", preset));
  }

  void check() const {
    if (!(omega_m >= 0 && omega_m <= 1))
      throw_config(fmt::format("Omega_m must lie in [0, 1] for a flat LCDM cosmology, not {}", omega_m));
    if (!(speed_of_light > 0) || !std::isfinite(speed_of_light))
      throw_config(fmt::format("the speed of light must be positive, not {}", speed_of_light));
  }

  double inverse_e(double z) const {
    const double a = 1 + z;
    return 1 / std::sqrt(omega_m * a * a * a + (1 - omega_m));
  }

  // Comoving distance in Mpc/h of a recession velocity cz (km/s), cz >= 0.
  double comoving_distance(double cz) const {
    if (!(cz >= 0) || !std::isfinite(cz))
      throw_input(fmt::format("cz must be a finite velocity >= 0 km/s, not {}", cz));
    const double z = cz / speed_of_light;
    return speed_of_light / 100 * integrate(0, z, kronrod(0, z).first, 0);
  }

 private:
  // ∫_a^b of inverse_e by the 15-point Kronrod rule and its error estimate (against the embedded
  // 7-point Gauss rule). Nodes and weights from QUADPACK's qk15.
  std::pair<double, double> kronrod(double a, double b) const {
    static constexpr double xgk[8] = {0.991455371120812639206854697526329, 0.949107912342758524526189684047851,
                                      0.864864423359769072789712788640926, 0.741531185599394439863864773280788,
                                      0.586087235467691130294144845693013, 0.405845151377397166906606412076961,
                                      0.207784955007898467600689403773245, 0.000000000000000000000000000000000};
    static constexpr double wgk[8] = {0.022935322010529224963732008058970, 0.063092092629978553290700663189204,
                                      0.104790010322250183839876322541518, 0.140653259715525918745189590510238,
                                      0.169004726639267902826583426598550, 0.190350578064785409913256402421014,
                                      0.204432940075298892414161999234649, 0.209482141084727828012999174891714};
    static constexpr double wg[4] = {0.129484966168869693270611432679082, 0.279705391489276667901467771423780,
                                     0.381830050505118944950369775488975, 0.417959183673469387755102040816327};
    const double c = 0.5 * (a + b), h = 0.5 * (b - a);
    double k = wgk[7] * inverse_e(c), g = wg[3] * inverse_e(c);
    for (int j = 0; j < 7; ++j) {
      const double f = inverse_e(c - h * xgk[j]) + inverse_e(c + h * xgk[j]);
      k += wgk[j] * f;
      if (j % 2 == 1) g += wg[j / 2] * f;
    }
    return {k * h, std::fabs((k - g) * h)};
  }
  double integrate(double a, double b, double whole, int depth) const {
    const auto [k, err] = kronrod(a, b);
    if (depth >= 40 || err <= 1e-13 * std::fabs(whole) || err == 0) return k;
    const double m = 0.5 * (a + b);
    return integrate(a, m, whole, depth + 1) + integrate(m, b, whole, depth + 1);
  }
};

// Points (RA, Dec, cz) — or (RA, Dec, d) with `comoving` — to Cartesian (x, y, z) in Mpc/h,
// weights and jackknife labels kept. RA, Dec in degrees, Dec in [-90, 90].
inline PointSet sky_to_cartesian(const PointSet& sky, const FlatLcdm& cosmo, bool comoving) {
  if (sky.dim() != 3)
    throw_config(fmt::format("survey points need three columns (RA, Dec, cz or distance), not {}", sky.dim()));
  cosmo.check();
  constexpr double deg = std::numbers::pi / 180;
  PointSet out(3, sky.size());
  for (std::size_t i = 0; i < sky.size(); ++i) {
    const double ra = sky.coord(0)[i], dec = sky.coord(1)[i], v = sky.coord(2)[i];
    if (!(dec >= -90 && dec <= 90) || !std::isfinite(ra))
      throw_input(fmt::format("point {}: RA {} / Dec {} is not on the sky (degrees, Dec in [-90, 90])", i, ra, dec));
    if (comoving && !(v >= 0 && std::isfinite(v)))
      throw_input(fmt::format("point {}: comoving distance {} is not a finite value >= 0", i, v));
    const double d = comoving ? v : cosmo.comoving_distance(v);
    out.coord(0)[i] = d * std::cos(dec * deg) * std::cos(ra * deg);
    out.coord(1)[i] = d * std::cos(dec * deg) * std::sin(ra * deg);
    out.coord(2)[i] = d * std::sin(dec * deg);
  }
  if (sky.has_weights()) out.set_weights({sky.weights().begin(), sky.weights().end()});
  if (!sky.regions().empty()) out.set_regions({sky.regions().begin(), sky.regions().end()});
  return out;
}

}  // namespace twobody
