// Cross-correlations of two samples (issue 5): ξ(r) or w(θ) between catalogue 1 and catalogue 2,
// each with its own random catalogues, from D1D2, D1R2, R1D2 and R1R2 — every count a cross run of
// the engine — or, in a periodic box without random catalogues, D1D2 against the analytic R1R2.
// With a jackknife, every catalogue is labelled by one set of regions (fitted on catalogue 1) and
// each count also gives its region counts T[r][k] (pairs with a point in r), so every
// leave-one-region-out estimate is rebuilt from them, never recounted.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "twobody/detail/statistics/correlation_counts.hpp"
#include "twobody/correlation.hpp"
#include "twobody/error.hpp"
#include "twobody/statistics.hpp"

namespace twobody {

Estimates estimate_cross(double dd, double dr, double rd, double rr) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto ratio = [nan](double x, double y) { return y != 0 ? x / y : nan; };
  return {ratio(dd, rr) - 1, ratio(dd, dr) - 1, ratio(dd * rr, dr * rd) - 1, ratio(dd - dr - rd + rr, rr)};
}

namespace {

// One count between two groups of catalogues (Σ over every pair of a catalogue of each group):
// raw and weighted sums per bin, region counts, and the normalisation of the whole and without
// each region.
struct CrossCount {
  std::vector<double> c, w;                // per bin
  std::vector<std::uint64_t> t;            // R x nbins
  std::vector<double> tw;                  // R x nbins (weighted)
  double norm = 0;
  std::vector<double> norm_without;        // per region
  std::vector<double> sep, log_sep;        // per bin, Statistic::mean_separation's sums (else empty)
  double seconds = 0;
  std::uint64_t evaluated = 0, settled = 0;

  double value(std::size_t k, bool weighted) const { return weighted ? w[k] : c[k]; }
  double value_without(std::size_t r, std::size_t k, std::size_t nb, bool weighted) const {
    return weighted ? w[k] - tw[r * nb + k] : c[k] - static_cast<double>(t[r * nb + k]);
  }
};

double total(const std::vector<const PointSet*>& g, bool weighted) {
  double s = 0;
  for (const PointSet* p : g) {
    if (!weighted) {
      s += static_cast<double>(p->size());
      continue;
    }
    for (double x : p->weights()) s += x;
  }
  return s;
}

CrossCount count_between(const Statistic& stat, const std::vector<const PointSet*>& g1,
                         const std::vector<const PointSet*>& g2, std::size_t R, const RunOptions& opt) {
  const std::size_t nb = stat.binning2d().active() ? stat.binning2d().nbins() : stat.binning().nbins();
  const bool weighted = stat.weighted;
  CrossCount x;
  x.c.assign(nb, 0.0);
  x.w.assign(nb, 0.0);
  x.t.assign(R * nb, 0);
  x.tw.assign(R * nb, 0.0);
  for (const PointSet* a : g1) {
    // `a` against several catalogues: uploaded and indexed once (ResidentSet).
    RunOptions o = opt;
    if (g2.size() > 1) o.resident = std::make_shared<const ResidentSet>(*a);
    for (const PointSet* b : g2) {
      const Result r = run(stat, *a, b, o);
      for (std::size_t k = 0; k < nb; ++k) {
        x.c[k] += static_cast<double>(r.counts[k]);
        if (weighted) x.w[k] += r.weighted[k];
      }
      for (std::size_t q = 0; q < R * nb; ++q) {
        x.t[q] += r.region_counts[q];
        if (weighted) x.tw[q] += r.region_weighted[q];
      }
      if (!r.separation_sum.empty()) {
        x.sep.resize(nb, 0.0);
        x.log_sep.resize(nb, 0.0);
        for (std::size_t k = 0; k < nb; ++k) {
          x.sep[k] += r.separation_sum[k];
          x.log_sep[k] += r.log_separation_sum[k];
        }
      }
      x.seconds += r.info.seconds;
      x.evaluated += r.info.pairs_evaluated;
      x.settled += r.info.pairs_settled_fp64;
    }
  }
  x.norm = total(g1, weighted) * total(g2, weighted);
  if (R > 0) {
    // Without region r: (Σ of group 1 without r) × (Σ of group 2 without r).
    std::vector<double> s1(R, 0.0), s2(R, 0.0);
    for (const PointSet* p : g1) {
      const detail::RegionSums s(*p, R);
      for (std::size_t r = 0; r < R; ++r) s1[r] += s.size(r, weighted);
    }
    for (const PointSet* p : g2) {
      const detail::RegionSums s(*p, R);
      for (std::size_t r = 0; r < R; ++r) s2[r] += s.size(r, weighted);
    }
    x.norm_without.resize(R);
    for (std::size_t r = 0; r < R; ++r) x.norm_without[r] = s1[r] * s2[r];
  }
  return x;
}

// Error(Config) unless the request is whole: the box for a periodic cross-correlation, random
// catalogues for both samples or for neither (a box's analytic R1R2), no saved R1R2 without them.
void check_request(CorrelationSpace space, const std::optional<Box>& box, const std::vector<PointSet>& randoms1,
                   const std::vector<PointSet>& randoms2, const ReusedCounts& reuse) {
  if (space == CorrelationSpace::Box && !box) throw_config("a periodic cross-correlation needs the box");
  const bool analytic = randoms1.empty() && randoms2.empty();
  if (analytic && space != CorrelationSpace::Box)
    throw_config("a cross-correlation needs random catalogues for both samples (--randoms for the first, "
                 "--randoms2 for the second), or a periodic box (--box) for the analytic random counts");
  if (analytic && reuse.rr)
    throw_config("a saved R1R2 stands for random catalogues' R1R2: without random catalogues it is analytic "
                 "(give the random catalogues, or drop the saved counts)");
  if (!analytic && (randoms1.empty() || randoms2.empty()))
    throw_config(randoms1.empty() ? "the first sample has no random catalogues (--randoms): a cross-correlation "
                                    "needs them for both samples"
                                  : "the second sample has no random catalogues (--randoms2): a cross-correlation "
                                    "needs them for both samples");
}

// Both samples and their random catalogues in the engine's coordinates.
struct Prepared {
  PointSet d1, d2;
  std::vector<PointSet> r1, r2;
};

// With a jackknife, every catalogue of `p` labelled by one set of regions (fitted on the first
// sample: k-means on its unit vectors, or cells of the box or of all catalogues' joint bounding
// box; or the catalogues' own labels, read from the catalogues as given); J takes the regions'
// setting and points per region. The number of regions (0 without a jackknife).
// Errors: a region without a point of either sample (Error(Input)).
std::size_t label_regions(const JackknifeRequest& jk, CorrelationSpace space, const std::optional<Box>& box,
                          const SavedCounts* reuse, const PointSet& data1, const PointSet& data2,
                          const std::vector<PointSet>& randoms1, const std::vector<PointSet>& randoms2, Prepared& p,
                          JackknifeResult& J) {
  if (!jk.use_labels && jk.regions == 0) return 0;
  if (jk.sky_about_origin && space != CorrelationSpace::Open)
    throw_config("sky regions about an observer (survey mocks) are for open space only");
  std::vector<const PointSet*> others = {&data2};
  for (const PointSet& q : randoms1) others.push_back(&q);
  for (const PointSet& q : randoms2) others.push_back(&q);
  const CorrelationSpace fit = jk.sky_about_origin ? CorrelationSpace::Sky : space;
  // Fitted on the first sample's random catalogues (its footprint), as the data regions were on
  // the first sample.
  detail::RegionFit on{detail::pointers(randoms1), [&](const PointSet& x) {
                         return jk.sky_about_origin ? detail::directions(x) : sky_to_unit_vectors(x);
                       }};
  const detail::RegionLabeller L =
      detail::make_labeller(jk, fit, box, data1, jk.sky_about_origin ? detail::directions(p.d1) : p.d1, others, reuse, on);
  const std::size_t R = L.regions;
  J.regions = R;
  J.layout = L.layout;
  J.centres = L.centres;
  J.fitted_on_data = L.fitted_on_data;
  if (L.numbering) J.labels = L.numbering->labels;
  p.d1.set_regions(L.label(data1, p.d1, "the first sample"));
  p.d2.set_regions(L.label(data2, p.d2, "the second sample"));
  for (std::size_t i = 0; i < p.r1.size(); ++i)
    p.r1[i].set_regions(L.label(randoms1[i], p.r1[i], fmt::format("random catalogue {} of the first sample", i + 1)));
  for (std::size_t i = 0; i < p.r2.size(); ++i)
    p.r2[i].set_regions(L.label(randoms2[i], p.r2[i], fmt::format("random catalogue {} of the second sample", i + 1)));
  // Points per region: both samples' (none in either: an error), and the randoms'.
  const detail::RegionSums n1(p.d1, R), n2(p.d2, R);
  J.n_data.resize(R);
  J.n_randoms.assign(R, 0);
  for (std::size_t r = 0; r < R; ++r) {
    if (n1.n[r] == 0 && n2.n[r] == 0)
      throw_input(fmt::format("jackknife region {} holds no point of either sample: use fewer regions", r));
    J.n_data[r] = static_cast<std::size_t>(n1.n[r] + n2.n[r]);
  }
  for (const auto* g : {&p.r1, &p.r2})
    for (const PointSet& q : *g) {
      const detail::RegionSums n(q, R);
      for (std::size_t r = 0; r < R; ++r) J.n_randoms[r] += static_cast<std::size_t>(n.n[r]);
    }
  return R;
}

// R1R2 as saved (its setting checked by check_reusable): counts, weighted sums, normalisations.
CrossCount saved_count(const SavedCounts& c, bool weighted, std::size_t nb, std::size_t R) {
  CrossCount rr;
  rr.c = c.rr;
  rr.w = weighted ? c.wrr : std::vector<double>(nb, 0.0);
  rr.norm = c.norm_rr;
  if (R > 0) {
    rr.t = c.jackknife->rr;
    rr.tw = weighted ? c.jackknife->wrr : std::vector<double>(R * nb, 0.0);
    rr.norm_without = c.jackknife->norm_rr;
  }
  return rr;
}

// D1D2 as the engine's Result: counts, weighted sums, the mean separations' sums, region counts.
void set_counts(Result& out, const CrossCount& dd, std::size_t nb, std::size_t R, bool weighted) {
  out.output = OutputKind::Histogram;
  out.counts.resize(nb);
  for (std::size_t k = 0; k < nb; ++k) out.counts[k] = static_cast<std::uint64_t>(dd.c[k]);
  if (weighted) out.weighted = dd.w;
  out.regions = R;
  out.separation_sum = dd.sep;
  out.log_separation_sum = dd.log_sep;
  out.region_counts = dd.t;
  if (weighted) out.region_weighted = dd.tw;
}

// The jackknife's region counts and normalisations without each region (no R1D2 when analytic).
void set_region_counts(JackknifeResult& J, const CrossCount& dd, const CrossCount& dr, const CrossCount& rd,
                       const CrossCount& rr, bool weighted, bool analytic) {
  J.dd = dd.t;
  J.dr = dr.t;
  J.rr = rr.t;
  if (weighted) {
    J.wdd = dd.tw;
    J.wdr = dr.tw;
    J.wrr = rr.tw;
  }
  J.norm_dd = dd.norm_without;
  J.norm_dr = dr.norm_without;
  J.norm_rr = rr.norm_without;
  if (!analytic) {
    J.rd = rd.t;
    if (weighted) J.wrd = rd.tw;
    J.norm_rd = rd.norm_without;
  }
}

}  // namespace

namespace detail {

CrossEstimate cross_estimate(const Statistic& stat, CorrelationSpace space, const PointSet& data1, const PointSet& data2,
                             const std::vector<PointSet>& randoms1, const std::vector<PointSet>& randoms2,
                             const std::vector<double>& volume, const std::optional<Box>& box, const RunOptions& opt,
                             const JackknifeRequest& jk, Estimator estimator, const ReusedCounts& reuse) {
  check_request(space, box, randoms1, randoms2, reuse);
  const bool analytic = randoms1.empty() && randoms2.empty();
  Statistic s = stat;
  s.traversal = Traversal::Cross;
  // Mean separations are the D1D2 pairs' (the random counts run without them).
  const bool means = opt.mean_separation || stat.mean_separation();
  s.set_mean_separation(false);
  const bool weighted = s.weighted;
  const auto prepare = [&](const PointSet& p) { return space == CorrelationSpace::Sky ? sky_to_unit_vectors(p) : p; };

  // Every catalogue in the engine's coordinates; with a jackknife, labelled.
  Prepared catalogues{prepare(data1), prepare(data2), {}, {}};
  for (const PointSet& p : randoms1) catalogues.r1.push_back(prepare(p));
  for (const PointSet& p : randoms2) catalogues.r2.push_back(prepare(p));
  CrossEstimate out;
  out.analytic = analytic;
  JackknifeResult J;
  const std::size_t R = label_regions(jk, space, box, reuse.rr, data1, data2, randoms1, randoms2, catalogues, J);
  const PointSet& d1 = catalogues.d1;
  const PointSet& d2 = catalogues.d2;
  const std::vector<PointSet>& r1 = catalogues.r1;
  const std::vector<PointSet>& r2 = catalogues.r2;
  s.set_regions(static_cast<int>(R));
  std::vector<const PointSet*> all_randoms;
  for (const auto* g : {&r1, &r2})
    for (const PointSet& p : *g) all_randoms.push_back(&p);
  const std::uint64_t randoms_hash = content_hash(all_randoms);
  if (reuse.rr) {
    std::size_t n_randoms = 0;
    for (const PointSet* p : all_randoms) n_randoms += p->size();
    check_reusable(*reuse.rr, "the saved R1R2", space, s, R > 0 ? &J : nullptr, true, n_randoms, randoms_hash);
  }

  const std::size_t nb = s.binning2d().active() ? s.binning2d().nbins() : s.binning().nbins();
  const std::vector<const PointSet*> g_d1 = {&d1}, g_d2 = {&d2};
  std::vector<const PointSet*> g_r1, g_r2;
  for (const PointSet& p : r1) g_r1.push_back(&p);
  for (const PointSet& p : r2) g_r2.push_back(&p);
  Statistic s_dd = s;
  s_dd.set_mean_separation(means);
  const CrossCount dd = count_between(s_dd, g_d1, g_d2, R, opt);
  CrossCount dr, rd, rr;
  if (!analytic) {
    dr = count_between(s, g_d1, g_r2, R, opt);
    rd = count_between(s, g_r1, g_d2, R, opt);
    if (reuse.rr) {
      rr = saved_count(*reuse.rr, weighted, nb, R);
      out.reused_rr = true;
    } else {
      rr = count_between(s, g_r1, g_r2, R, opt);
    }
  } else {
    // The analytic R1R2 of a periodic box: N1 N2 (or Σw1 Σw2) × V_bin / V_box.
    rr.c.assign(nb, 0.0);
    rr.norm = 1;
    for (std::size_t k = 0; k < nb; ++k) rr.c[k] = dd.norm * volume[k] / box->volume();
    rr.w = rr.c;
  }

  // Normalised counts of bin k (without region r when r < R).
  struct Four {
    double dd, dr, rd, rr;
  };
  const auto four = [&](std::size_t k, std::size_t r) -> Four {
    if (analytic) {
      const double ddn = r < R ? dd.value_without(r, k, nb, weighted) : dd.value(k, weighted);
      const double scale = r < R ? dd.norm_without[r] / dd.norm : 1.0;
      return {ddn, 0, 0, rr.c[k] * scale};
    }
    if (r < R)
      return {dd.value_without(r, k, nb, weighted) / dd.norm_without[r], dr.value_without(r, k, nb, weighted) / dr.norm_without[r],
              rd.value_without(r, k, nb, weighted) / rd.norm_without[r], rr.value_without(r, k, nb, weighted) / rr.norm_without[r]};
    return {dd.value(k, weighted) / dd.norm, dr.value(k, weighted) / dr.norm, rd.value(k, weighted) / rd.norm,
            rr.value(k, weighted) / rr.norm};
  };
  const auto xi_of = [&](const Four& f) {
    return analytic ? (f.rr > 0 ? f.dd / f.rr - 1 : std::nan("")) : estimate_of(estimate_cross(f.dd, f.dr, f.rd, f.rr), estimator);
  };
  out.xi.resize(nb);
  for (std::size_t k = 0; k < nb; ++k) {
    const Four f = four(k, R);
    out.xi[k] = xi_of(f);
    if (analytic) continue;
    const Estimates e = estimate_cross(f.dd, f.dr, f.rd, f.rr);
    out.natural.push_back(e.natural);
    out.davis_peebles.push_back(e.davis_peebles);
    out.hamilton.push_back(e.hamilton);
    out.landy_szalay.push_back(e.landy_szalay);
  }
  set_counts(out.dd, dd, nb, R, weighted);
  out.dd.info.n_a = data1.size();
  out.dd.info.n_b = data2.size();
  out.dd.info.seconds = dd.seconds + dr.seconds + rd.seconds + rr.seconds;
  out.dd.info.pairs_evaluated = dd.evaluated + dr.evaluated + rd.evaluated + rr.evaluated;
  out.dd.info.pairs_settled_fp64 = dd.settled + dr.settled + rd.settled + rr.settled;
  out.dd.info.plan =
      out.reused_rr
          ? fmt::format("cross-correlation: D1D2, D1R2 (x{}), R1D2 (x{}) as cross runs; R1R2 from the saved counts", r2.size(),
                        r1.size())
          : fmt::format("cross-correlation: D1D2, D1R2 (x{}), R1D2 (x{}), R1R2 (x{}) as cross runs", r2.size(), r1.size(),
                        r1.size() * r2.size());
  out.dr = dr.c;
  out.rd = rd.c;
  out.rr = rr.c;
  if (weighted && !analytic) {
    out.wdr = dr.w;
    out.wrd = rd.w;
    out.wrr = rr.w;
  }
  out.norm_dd = dd.norm;
  out.norm_dr = dr.norm;
  out.norm_rd = rd.norm;
  out.norm_rr = rr.norm;
  for (const PointSet& p : r1) out.n_randoms += p.size();
  for (const PointSet& p : r2) out.n_randoms += p.size();
  out.randoms_hash = randoms_hash;
  if (R > 0) {
    J.estimator = analytic ? Estimator::Natural : estimator;  // (analytic: D1D2/R1R2 − 1)
    set_region_counts(J, dd, dr, rd, rr, weighted, analytic);
    J.samples.resize(R * nb);
    for (std::size_t r = 0; r < R; ++r)
      for (std::size_t k = 0; k < nb; ++k) J.samples[r * nb + k] = xi_of(four(k, r));
    JackknifeSummary sum = jackknife_summary(J.samples, R, nb);
    J.mean = std::move(sum.mean);
    J.sigma = std::move(sum.sigma);
    J.covariance = std::move(sum.covariance);
    out.jackknife = std::move(J);
  }
  return out;
}

}  // namespace detail

CorrelationResult cross_correlation(const PointSet& data1, const PointSet& data2, const std::vector<PointSet>& randoms1,
                                    const std::vector<PointSet>& randoms2, const Binning& bins, CorrelationSpace space,
                                    const std::optional<Box>& box, bool weighted, const RunOptions& opt,
                                    const JackknifeRequest& jk, const ReusedCounts& reuse) {
  detail::StatisticClock clock;
  Statistic s;
  s.metric = metric_of(space);
  if (box && space == CorrelationSpace::Box) s.box = *box;
  s.reduction = reduce::Histogram{bins};
  s.weighted = weighted;
  const std::size_t nb = bins.nbins();
  std::vector<double> volume(nb);
  for (std::size_t k = 0; k < nb; ++k) volume[k] = shell_volume(data1.dim(), bins.lo(k), bins.hi(k));
  clock.data_ready();
  detail::CrossEstimate e =
      detail::cross_estimate(s, space, data1, data2, randoms1, randoms2, volume, box, opt, jk, jk.estimator, reuse);
  CorrelationResult out;
  out.binning = bins;
  out.norm_dd = e.norm_dd;
  out.norm_dr = e.norm_dr;
  out.norm_rr = e.norm_rr;
  out.norm_rd = e.norm_rd;
  out.n_randoms = e.n_randoms;
  out.randoms_hash = e.randoms_hash;
  out.analytic_rr = e.analytic;
  out.derived = e.count_columns(weighted);
  if (e.analytic) {
    out.derived.push_back({estimate_name(space, ""), e.xi});
  } else {
    out.derived.push_back({estimate_name(space, "natural"), e.natural});
    out.derived.push_back({estimate_name(space, "davis_peebles"), e.davis_peebles});
    out.derived.push_back({estimate_name(space, "hamilton"), e.hamilton});
    out.derived.push_back({estimate_name(space, "landy_szalay"), e.landy_szalay});
  }
  if (e.jackknife) {
    out.derived.push_back({estimate_name(space, "jk_mean"), e.jackknife->mean});
    out.derived.push_back({estimate_name(space, "jk_sigma"), e.jackknife->sigma});
    out.jackknife = std::move(e.jackknife);
  }
  out.raw = std::move(e.dd);
  add_mean_separation_columns(out);
  clock.stamp(out.raw);
  return out;
}

}  // namespace twobody
