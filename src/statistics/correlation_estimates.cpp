// The estimators of a correlation function and what they read from the counts: the pair
// normalisations, the counts of a bin normalised (of the whole sample or without a jackknife
// region), the leave-one-region-out samples, and ξ against a periodic box's analytic RR.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "twobody/correlation.hpp"
#include "twobody/detail/statistics/correlation_counts.hpp"
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

const char* to_string(Estimator e) {
  switch (e) {
    case Estimator::Natural: return "natural";
    case Estimator::DavisPeebles: return "davis-peebles";
    case Estimator::Hamilton: return "hamilton";
    case Estimator::LandySzalay: return "landy-szalay";
  }
  return "?";
}

Estimator parse_estimator(const std::string& name) {
  for (Estimator e : {Estimator::Natural, Estimator::DavisPeebles, Estimator::Hamilton, Estimator::LandySzalay})
    if (name == to_string(e)) return e;
  throw_config(fmt::format("unknown estimator '{}' (natural, davis-peebles, hamilton or landy-szalay)", name));
}

double estimate_of(const Estimates& x, Estimator e) {
  switch (e) {
    case Estimator::Natural: return x.natural;
    case Estimator::DavisPeebles: return x.davis_peebles;
    case Estimator::Hamilton: return x.hamilton;
    case Estimator::LandySzalay: return x.landy_szalay;
  }
  return x.landy_szalay;
}

double estimate(Estimator e, double dd, double dr, double rr) { return estimate_of(estimate(dd, dr, rr), e); }

namespace detail {

NormalisedCounts normalised(const CorrelationCounts& c, std::size_t k) {
  const bool w = c.weighted;
  return {(w ? c.dd.weighted[k] : static_cast<double>(c.dd.counts[k])) / c.norm_dd,
          (w ? c.wdr[k] : c.dr[k]) / c.norm_dr, (w ? c.wrr[k] : c.rr[k]) / c.norm_rr};
}

NormalisedCounts normalised_without(const CorrelationCounts& c, std::size_t r, std::size_t k) {
  const JackknifeResult& J = *c.jackknife;
  const std::size_t t = r * c.dr.size() + k;
  if (c.weighted)
    return {(c.dd.weighted[k] - J.wdd[t]) / J.norm_dd[r], (c.wdr[k] - J.wdr[t]) / J.norm_dr[r],
            (c.wrr[k] - J.wrr[t]) / J.norm_rr[r]};
  return {static_cast<double>(c.dd.counts[k] - J.dd[t]) / J.norm_dd[r],
          (c.dr[k] - static_cast<double>(J.dr[t])) / J.norm_dr[r], (c.rr[k] - static_cast<double>(J.rr[t])) / J.norm_rr[r]};
}

std::vector<double> jackknife_samples(const CorrelationCounts& c, Estimator e) {
  // Leave-one-region-out: every count minus the region's T[r][k], every normalisation without
  // the region's points; the counts of the whole sample are never recounted.
  const std::size_t R = c.jackknife->regions, nb = c.dr.size();
  std::vector<double> x(R * nb);
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t k = 0; k < nb; ++k) {
      const NormalisedCounts n = normalised_without(c, r, k);
      x[r * nb + k] = estimate(e, n.dd, n.dr, n.rr);
    }
  return x;
}

AnalyticEstimate analytic_box_estimate(CorrelationCounts& c, const PointSet& data, const std::vector<double>& volume,
                                       double box_volume, bool weighted) {
  const std::size_t nb = volume.size();
  double wsum = 0;
  for (double x : data.weights()) wsum += x;
  AnalyticEstimate e;
  e.pairs = analytic_pairs(static_cast<double>(data.size()), wsum, weighted);
  e.rr.resize(nb);
  e.xi.resize(nb);
  for (std::size_t k = 0; k < nb; ++k) {
    e.rr[k] = e.pairs * volume[k] / box_volume;
    const double dd = weighted ? c.dd.weighted[k] : static_cast<double>(c.dd.counts[k]);
    e.xi[k] = e.rr[k] > 0 ? dd / e.rr[k] - 1 : std::nan("");
  }
  if (c.jackknife) {
    JackknifeResult& J = *c.jackknife;
    const RegionSums& ds = *c.data_regions;
    J.dr.clear();
    J.rr.clear();
    J.wdr.clear();
    J.wrr.clear();
    J.norm_dr.clear();
    const std::size_t R = J.regions;
    e.samples.resize(R * nb);
    for (std::size_t r = 0; r < R; ++r) {
      J.norm_rr[r] = analytic_pairs(ds.size(r, false), ds.size(r, true), weighted);
      for (std::size_t k = 0; k < nb; ++k) {
        const std::size_t t = r * nb + k;
        const double dd = weighted ? c.dd.weighted[k] - J.wdd[t] : static_cast<double>(c.dd.counts[k] - J.dd[t]);
        const double rr_r = J.norm_rr[r] * volume[k] / box_volume;
        e.samples[t] = rr_r > 0 ? dd / rr_r - 1 : std::nan("");
      }
    }
  }
  return e;
}

}  // namespace detail

std::string estimate_name(CorrelationSpace space, const std::string& what) {
  const std::string base = space == CorrelationSpace::Sky ? "w" : "xi";
  return what.empty() ? base : base + "_" + what;
}

}  // namespace twobody
