#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <numbers>

#include "twobody/error.hpp"
#include "twobody/statistics.hpp"

namespace twobody {

PointSet sky_to_unit_vectors(const PointSet& radec) {
  if (radec.dim() != 2)
    throw_config(fmt::format("angular statistics take two columns, RA and Dec in degrees, not {}",
                             radec.dim()));
  const auto ra = radec.coord(0), dec = radec.coord(1);
  PointSet u(3, radec.size());
  auto x = u.coord(0), y = u.coord(1), z = u.coord(2);
  constexpr double deg = std::numbers::pi / 180.0;
  const auto n = static_cast<std::int64_t>(radec.size());
  for (std::int64_t i = 0; i < n; ++i)
    if (!(std::abs(dec[i]) <= 90.0))
      throw_input(fmt::format("point {}: declination {} is outside [-90, 90] degrees", i + 1, dec[i]));
  // Threaded: four trigonometric calls a point were ~0.9 s of eleven 10^6-point catalogues.
#pragma omp parallel for schedule(static) if (n > 50000)
  for (std::int64_t i = 0; i < n; ++i) {
    const double r = ra[i] * deg, d = dec[i] * deg;
    const double cd = std::cos(d);
    x[i] = cd * std::cos(r);
    y[i] = cd * std::sin(r);
    z[i] = std::sin(d);
  }
  if (radec.has_weights()) u.set_weights({radec.weights().begin(), radec.weights().end()});
  return u;
}

BinnedResult angular(const PointSet& radec_a, const PointSet* radec_b, const Binning& bins,
                     bool weighted, const RunOptions& opt) {
  const PointSet ua = sky_to_unit_vectors(radec_a);
  PointSet ub;
  if (radec_b) ub = sky_to_unit_vectors(*radec_b);
  Statistic s;
  s.traversal = radec_b ? Traversal::Cross : Traversal::Auto;
  s.metric = Metric::Angular;
  s.reduction = reduce::Histogram{bins, 0, opt.mean_separation};
  s.weighted = weighted;
  BinnedResult out{bins, run(s, ua, radec_b ? &ub : nullptr, opt), {}};
  add_mean_separation_columns(out);
  return out;
}

}  // namespace twobody
