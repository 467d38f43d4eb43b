// The correlation function ξ(r) of one sample: its counts (correlation_counts.cpp) through the four
// estimators, or DD against a periodic box's analytic RR when there are no random catalogues.
#include "twobody/correlation.hpp"

#include <optional>

#include "twobody/detail/statistics/correlation_counts.hpp"
#include "twobody/error.hpp"

namespace twobody {

Metric metric_of(CorrelationSpace space) {
  return space == CorrelationSpace::Sky ? Metric::Angular : space == CorrelationSpace::Box ? Metric::Periodic : Metric::Euclidean;
}

namespace {

// ξ in a periodic box without random catalogues: DD against the analytic RR of the box (Corrfunc's
// theory `xi`), with the 2-D estimators' jackknife (detail::analytic_box_estimate).
CorrelationResult analytic_box_correlation(detail::CorrelationCounts& c, const PointSet& data, const Binning& bins,
                                           const Box& box, bool weighted) {
  const std::size_t nb = bins.nbins();
  std::vector<double> volume(nb);
  for (std::size_t k = 0; k < nb; ++k) volume[k] = shell_volume(data.dim(), bins.lo(k), bins.hi(k));
  detail::AnalyticEstimate e = detail::analytic_box_estimate(c, data, volume, box.volume(), weighted);
  CorrelationResult out;
  out.binning = bins;
  out.norm_dd = c.norm_dd;
  out.norm_rr = e.pairs;
  out.analytic_rr = true;
  out.derived.push_back({weighted ? "wrr" : "rr", e.rr});
  out.derived.push_back({"xi", e.xi});
  if (c.jackknife) {
    JackknifeResult& J = *c.jackknife;
    J.estimator = Estimator::Natural;
    J.samples = std::move(e.samples);
    JackknifeSummary sum = jackknife_summary(J.samples, J.regions, nb);
    J.mean = std::move(sum.mean);
    J.sigma = std::move(sum.sigma);
    J.covariance = std::move(sum.covariance);
    out.jackknife = std::move(c.jackknife);
  }
  return out;
}

}  // namespace

CorrelationResult correlation(const PointSet& data, const std::vector<PointSet>& randoms, const Binning& bins,
                              CorrelationSpace space, const std::optional<Box>& box, bool weighted,
                              const RunOptions& opt, const JackknifeRequest& jk, const ReusedCounts& reuse) {
  detail::StatisticClock clock;
  if (space == CorrelationSpace::Box && !box) throw_config("a periodic correlation function needs the box");
  if (randoms.empty() && space != CorrelationSpace::Box)
    throw_config("a correlation function needs random catalogues (--randoms), or a periodic box (--box) for the "
                 "analytic random counts");
  if (randoms.empty() && reuse.rr)
    throw_config("a saved RR stands for random catalogues' RR: without random catalogues the RR is analytic "
                 "(give the random catalogues, or drop the saved RR)");
  Statistic s;
  s.metric = metric_of(space);
  if (box && space == CorrelationSpace::Box) s.box = *box;
  s.reduction = reduce::Histogram{bins, 0, opt.mean_separation};
  s.weighted = weighted;
  // Angles: unit vectors once per catalogue, not once per pair count.
  const auto prepare = [&](const PointSet& p) { return space == CorrelationSpace::Sky ? sky_to_unit_vectors(p) : p; };
  PointSet d = prepare(data);
  std::optional<detail::RegionLabeller> labeller;
  if (jk.use_labels || jk.regions != 0) {
    if (jk.sky_about_origin && space != CorrelationSpace::Open)
      throw_config("sky regions about an observer (survey mocks) are for open space only");
    // Mocks: patches of sky about the observer, as w(θ)'s (the nearest centre of a point needs
    // only its direction, so the Cartesian points are labelled as they are).
    const CorrelationSpace layout = jk.sky_about_origin ? CorrelationSpace::Sky : space;
    const detail::RegionFit fit{detail::pointers(randoms), [&](const PointSet& p) {
                                  return jk.sky_about_origin ? detail::directions(p) : sky_to_unit_vectors(p);
                                }};
    labeller = detail::make_labeller(jk, layout, box, data, jk.sky_about_origin ? detail::directions(d) : d,
                                     detail::pointers(randoms), reuse.rr, fit);
    d.set_regions(labeller->label(data, d, "data"));
  }
  clock.data_ready();
  detail::CorrelationCounts c =
      detail::count_correlation(s, space, std::move(d), randoms, prepare, labeller ? &*labeller : nullptr, opt, reuse);

  const std::size_t nb = bins.nbins();
  if (randoms.empty()) {
    CorrelationResult out = analytic_box_correlation(c, data, bins, *box, weighted);
    out.raw = std::move(c.dd);
    add_mean_separation_columns(out);
    if (out.jackknife) {
      out.derived.push_back({estimate_name(space, "jk_mean"), out.jackknife->mean});
      out.derived.push_back({estimate_name(space, "jk_sigma"), out.jackknife->sigma});
    }
    clock.stamp(out.raw, &c);
    return out;
  }
  std::vector<double> nat(nb), dp(nb), ham(nb), ls(nb);
  for (std::size_t k = 0; k < nb; ++k) {
    const detail::NormalisedCounts n = detail::normalised(c, k);
    const Estimates e = estimate(n.dd, n.dr, n.rr);
    nat[k] = e.natural;
    dp[k] = e.davis_peebles;
    ham[k] = e.hamilton;
    ls[k] = e.landy_szalay;
  }
  CorrelationResult out;
  out.binning = bins;
  out.norm_dd = c.norm_dd;
  out.norm_dr = c.norm_dr;
  out.norm_rr = c.norm_rr;
  out.n_randoms = c.n_randoms;
  out.randoms_hash = c.randoms_hash;
  out.derived.push_back({"dr", c.dr});
  out.derived.push_back({"rr", c.rr});
  if (weighted) {
    out.derived.push_back({"wdr", c.wdr});
    out.derived.push_back({"wrr", c.wrr});
  }
  out.derived.push_back({estimate_name(space, "natural"), nat});
  out.derived.push_back({estimate_name(space, "davis_peebles"), dp});
  out.derived.push_back({estimate_name(space, "hamilton"), ham});
  out.derived.push_back({estimate_name(space, "landy_szalay"), ls});
  if (c.jackknife) {
    JackknifeResult& J = *c.jackknife;
    J.estimator = jk.estimator;
    J.samples = detail::jackknife_samples(c, jk.estimator);
    JackknifeSummary sum = jackknife_summary(J.samples, J.regions, nb);
    J.mean = std::move(sum.mean);
    J.sigma = std::move(sum.sigma);
    J.covariance = std::move(sum.covariance);
  }
  out.raw = std::move(c.dd);
  add_mean_separation_columns(out);
  if (c.jackknife) {
    out.derived.push_back({estimate_name(space, "jk_mean"), c.jackknife->mean});
    out.derived.push_back({estimate_name(space, "jk_sigma"), c.jackknife->sigma});
    out.jackknife = std::move(c.jackknife);
  }
  clock.stamp(out.raw, &c);
  return out;
}

}  // namespace twobody
