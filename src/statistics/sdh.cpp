#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "twobody/error.hpp"

#include "twobody/statistics.hpp"

namespace twobody {

Binning sdh_default_binning(const PointSet& p, std::size_t nbins) {
  double diag2 = 0;
  for (int d = 0; d < p.dim(); ++d) {
    const auto x = p.coord(d);
    const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
    diag2 += (*hi - *lo) * (*hi - *lo);
  }
  if (!std::isfinite(diag2))
    throw_input("the points span more than float64 can square (a bounding-box diagonal beyond "
                            "1.3e154): give the histogram's range (--rmax) or rescale the data");
  // The farthest pair sits exactly at the diagonal at most; the last edge must lie above it.
  const double top = std::nextafter(std::sqrt(diag2) * (1 + 1e-12), std::numeric_limits<double>::infinity());
  return Binning::linear(0.0, top > 0 ? top : 1.0, nbins);
}

BinnedResult sdh(const PointSet& points, const Binning& bins, const RunOptions& opt) {
  Statistic s;
  s.traversal = Traversal::Auto;
  s.metric = Metric::Euclidean;
  s.reduction = reduce::Histogram{bins, 0, opt.mean_separation};
  BinnedResult out{bins, run(s, points, nullptr, opt), {}};
  add_mean_separation_columns(out);
  return out;
}

}  // namespace twobody
