#include <cmath>
#include <numbers>

#include "twobody/statistics.hpp"

namespace twobody {

double shell_volume(int dim, double lo, double hi) {
  // Volume of the unit D-ball: pi^(D/2) / Gamma(D/2 + 1).
  const double unit = std::pow(std::numbers::pi, 0.5 * dim) / std::tgamma(0.5 * dim + 1.0);
  return unit * (std::pow(hi, dim) - std::pow(lo, dim));
}

std::vector<double> rdf_expected(std::size_t na, std::optional<std::size_t> nb, const Binning& bins, const Box& box) {
  const double a = static_cast<double>(na);
  const double pairs = nb ? a * static_cast<double>(*nb) : 0.5 * a * (a - 1.0);
  const double volume = box.volume();
  std::vector<double> expected;
  for (std::size_t k = 0; k < bins.nbins(); ++k) expected.push_back(pairs * shell_volume(box.dim, bins.lo(k), bins.hi(k)) / volume);
  return expected;
}

BinnedResult rdf(const PointSet& a, const PointSet* b, const Binning& bins, const Box& box,
                 const RunOptions& opt) {
  BinnedResult r = paircount(a, b, bins, box, false, opt);
  NamedColumn expected{"expected", rdf_expected(a.size(), b ? std::optional(b->size()) : std::nullopt, bins, box)}, g{"g_r", {}};
  for (std::size_t k = 0; k < bins.nbins(); ++k) g.values.push_back(static_cast<double>(r.raw.counts[k]) / expected.values[k]);
  r.derived.insert(r.derived.begin(), {std::move(expected), std::move(g)});
  return r;
}

}  // namespace twobody
