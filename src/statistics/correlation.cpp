#include "twobody/correlation.hpp"

#include <cmath>
#include <limits>

#include "twobody/error.hpp"

namespace twobody {

double pair_norm(const PointSet& a, const PointSet* b, bool weighted) {
  const auto sum = [](const PointSet& p) {
    double s = 0;
    for (double w : p.weights()) s += w;
    return s;
  };
  if (!weighted) {
    const double na = static_cast<double>(a.size());
    return b ? na * static_cast<double>(b->size()) : 0.5 * na * (na - 1);
  }
  if (b) return sum(a) * sum(*b);
  double s2 = 0;
  for (double w : a.weights()) s2 += w * w;
  const double s = sum(a);
  return 0.5 * (s * s - s2);
}

Estimates estimate(double dd, double dr, double rr) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto ratio = [nan](double x, double y) { return y != 0 ? x / y : nan; };
  return {ratio(dd, rr) - 1, ratio(dd, dr) - 1, ratio(dd * rr, dr * dr) - 1, ratio(dd - 2 * dr + rr, rr)};
}

BinnedResult correlation(const PointSet& data, const std::vector<PointSet>& randoms, const Binning& bins,
                         CorrelationSpace space, const std::optional<Box>& box, bool weighted,
                         const RunOptions& opt) {
  if (randoms.empty()) throw_config("a correlation function needs at least one random catalogue");
  if (space == CorrelationSpace::Box && !box) throw_config("a periodic correlation function needs the box");
  Statistic s;
  s.metric = space == CorrelationSpace::Sky ? Metric::Angular
             : space == CorrelationSpace::Box ? Metric::Periodic
                                              : Metric::Euclidean;
  if (box && space == CorrelationSpace::Box) s.box = *box;
  s.binning = bins;
  s.output = OutputKind::Histogram;
  s.weighted = weighted;
  // Angles: unit vectors once per catalogue, not once per pair count.
  const auto prepare = [&](const PointSet& p) { return space == CorrelationSpace::Sky ? sky_to_unit_vectors(p) : p; };
  const PointSet d = prepare(data);
  const auto count = [&](const PointSet& a, const PointSet* b) {
    Statistic t = s;
    t.traversal = b ? Traversal::Cross : Traversal::Auto;
    return run(t, a, b, opt);
  };

  BinnedResult out{bins, count(d, nullptr), {}};
  const std::size_t nb = bins.nbins();
  std::vector<double> dr(nb, 0.0), rr(nb, 0.0), wdr(nb, 0.0), wrr(nb, 0.0);
  double norm_dr = 0, norm_rr = 0;
  for (const PointSet& random : randoms) {
    const PointSet r = prepare(random);
    const Result x = count(d, &r), y = count(r, nullptr);
    for (std::size_t k = 0; k < nb; ++k) {
      dr[k] += static_cast<double>(x.counts[k]);
      rr[k] += static_cast<double>(y.counts[k]);
      if (weighted) {
        wdr[k] += x.weighted[k];
        wrr[k] += y.weighted[k];
      }
    }
    norm_dr += pair_norm(d, &r, weighted);
    norm_rr += pair_norm(r, nullptr, weighted);
    out.raw.info.seconds += x.info.seconds + y.info.seconds;
    out.raw.info.pairs_evaluated += x.info.pairs_evaluated + y.info.pairs_evaluated;
    out.raw.info.pairs_settled_fp64 += x.info.pairs_settled_fp64 + y.info.pairs_settled_fp64;
  }
  const double norm_dd = pair_norm(d, nullptr, weighted);
  std::vector<double> nat(nb), dp(nb), ham(nb), ls(nb);
  for (std::size_t k = 0; k < nb; ++k) {
    const double dd = weighted ? out.raw.weighted[k] : static_cast<double>(out.raw.counts[k]);
    const Estimates e = estimate(dd / norm_dd, (weighted ? wdr[k] : dr[k]) / norm_dr, (weighted ? wrr[k] : rr[k]) / norm_rr);
    nat[k] = e.natural;
    dp[k] = e.davis_peebles;
    ham[k] = e.hamilton;
    ls[k] = e.landy_szalay;
  }
  out.derived.push_back({"dr", dr});
  out.derived.push_back({"rr", rr});
  if (weighted) {
    out.derived.push_back({"wdr", wdr});
    out.derived.push_back({"wrr", wrr});
  }
  out.derived.push_back({"xi_natural", nat});
  out.derived.push_back({"xi_davis_peebles", dp});
  out.derived.push_back({"xi_hamilton", ham});
  out.derived.push_back({"xi_landy_szalay", ls});
  return out;
}

}  // namespace twobody
