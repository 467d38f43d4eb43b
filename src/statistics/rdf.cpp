#include <cmath>
#include <numbers>

#include "twobody/statistics.hpp"

namespace twobody {

double shell_volume(int dim, double lo, double hi) {
  // Volume of the unit D-ball: pi^(D/2) / Gamma(D/2 + 1).
  const double unit = std::pow(std::numbers::pi, 0.5 * dim) / std::tgamma(0.5 * dim + 1.0);
  return unit * (std::pow(hi, dim) - std::pow(lo, dim));
}

BinnedResult rdf(const PointSet& a, const PointSet* b, const Binning& bins, const Box& box,
                 const RunOptions& opt) {
  BinnedResult r = paircount(a, b, bins, box, false, opt);
  const double na = static_cast<double>(a.size());
  const double pairs = b ? na * static_cast<double>(b->size()) : 0.5 * na * (na - 1.0);
  const double volume = box.volume();
  NamedColumn expected{"expected", {}}, g{"g_r", {}};
  for (std::size_t k = 0; k < bins.nbins(); ++k) {
    const double e = pairs * shell_volume(a.dim(), bins.lo(k), bins.hi(k)) / volume;
    expected.values.push_back(e);
    g.values.push_back(static_cast<double>(r.raw.counts[k]) / e);
  }
  r.derived.insert(r.derived.begin(), {std::move(expected), std::move(g)});
  return r;
}

}  // namespace twobody
