#include "twobody/clustering2d.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <numbers>

#include "twobody/detail/statistics/correlation_counts.hpp"
#include "twobody/error.hpp"

namespace twobody {

namespace {

Statistic statistic_2d(const Binning2D& bins, const std::optional<Box>& box, bool weighted, bool cross) {
  if (!bins.active()) throw_config("no 2-D bins: use Binning2D::rp_pi or Binning2D::s_mu");
  if (box && bins.midpoint_los())
    throw_config("the midpoint line of sight (survey mocks) is for open space, not a periodic box");
  Statistic s;
  s.traversal = cross ? Traversal::Cross : Traversal::Auto;
  s.metric = box ? Metric::Periodic : Metric::Euclidean;
  if (box) s.box = *box;
  s.weighted = weighted;
  s.reduction = reduce::Histogram2D{bins};
  return s;
}

double legendre(int ell, double mu) {
  const double m2 = mu * mu;
  switch (ell) {
    case 0: return 1.0;
    case 2: return 0.5 * (3 * m2 - 1);
    case 4: return (35 * m2 * m2 - 30 * m2 + 3) / 8;
  }
  throw_config(fmt::format("multipole {} is not provided (0, 2 or 4)", ell));
}

}  // namespace

namespace {

// RunOptions::mean_separation over 2-D bins: the mean r_p (rpavg, Corrfunc's DDrppi) or s (savg,
// DDsmu) of each flat bin's pairs, weighted by w_i w_j when weighted, NaN for an empty bin; and
// per outer bin over all its inner bins (w_p's r_p: Corrfunc's wp rpavg).
void add_mean_separation_columns_2d(Binned2DResult& r) {
  const Result& x = r.raw;
  if (x.separation_sum.empty()) return;
  const bool weighted = !x.weighted.empty();
  const std::size_t nb = x.counts.size(), ni = r.binning.inner().nbins(), no = nb / ni;
  const auto pairs = [&](std::size_t k) { return weighted ? x.weighted[k] : static_cast<double>(x.counts[k]); };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> flat(nb), outer(no);
  for (std::size_t i = 0; i < no; ++i) {
    double sum = 0, n = 0;
    for (std::size_t k = i * ni; k < (i + 1) * ni; ++k) {
      flat[k] = x.counts[k] == 0 || pairs(k) == 0 ? nan : x.separation_sum[k] / pairs(k);
      sum += x.separation_sum[k];
      n += pairs(k);
    }
    outer[i] = n == 0 ? nan : sum / n;
  }
  const std::string name = r.binning.kind() == Binning2D::Kind::RpPi ? "rpavg" : "savg";
  r.derived.push_back({name, std::move(flat)});
  r.per_outer.push_back({name, std::move(outer)});
}

}  // namespace

Binned2DResult paircount_2d(const PointSet& a, const PointSet* b, const Binning2D& bins, const std::optional<Box>& box,
                            bool weighted, const RunOptions& opt) {
  Statistic s = statistic_2d(bins, box, weighted, b != nullptr);
  s.set_mean_separation(opt.mean_separation);
  Binned2DResult r;
  r.binning = bins;
  r.raw = run(s, a, b, opt);
  add_mean_separation_columns_2d(r);
  return r;
}

double bin_volume_2d(const Binning2D& bins, std::size_t i, std::size_t k) {
  const double lo = bins.outer().lo(i), hi = bins.outer().hi(i);
  const double dk = bins.inner().hi(k) - bins.inner().lo(k);
  if (bins.kind() == Binning2D::Kind::RpPi) return std::numbers::pi * (hi * hi - lo * lo) * 2.0 * dk;
  return 4.0 / 3.0 * std::numbers::pi * (hi * hi * hi - lo * lo * lo) * dk;
}

std::vector<double> projected_wp(const Binning2D& bins, const std::vector<double>& xi) {
  if (bins.kind() != Binning2D::Kind::RpPi) throw_config("w_p needs (r_p, pi) bins");
  const std::size_t no = bins.outer().nbins(), ni = bins.inner().nbins();
  if (xi.size() != no * ni) throw_config(fmt::format("w_p: {} values of xi for {} bins", xi.size(), no * ni));
  std::vector<double> wp(no, 0.0);
  for (std::size_t i = 0; i < no; ++i)
    for (std::size_t k = 0; k < ni; ++k) wp[i] += 2.0 * xi[i * ni + k] * (bins.inner().hi(k) - bins.inner().lo(k));
  return wp;
}

std::vector<double> multipoles(const Binning2D& bins, const std::vector<double>& xi, int ell) {
  if (bins.kind() != Binning2D::Kind::SMu) throw_config("multipoles need (s, mu) bins");
  const std::size_t no = bins.outer().nbins(), ni = bins.inner().nbins();
  if (xi.size() != no * ni) throw_config(fmt::format("multipoles: {} values of xi for {} bins", xi.size(), no * ni));
  std::vector<double> out(no, 0.0);
  for (std::size_t i = 0; i < no; ++i)
    for (std::size_t k = 0; k < ni; ++k) {
      const double lo = bins.inner().lo(k), hi = bins.inner().hi(k);
      out[i] += (2 * ell + 1) * xi[i * ni + k] * legendre(ell, 0.5 * (lo + hi)) * (hi - lo);
    }
  return out;
}

namespace {

void add_jackknife_columns(Binned2DResult& out);

// w_p, or ξ_0, ξ_2, ξ_4, from ξ per flat bin.
std::vector<NamedColumn> per_outer_columns(const Binning2D& bins, const std::vector<double>& xi) {
  if (bins.kind() == Binning2D::Kind::RpPi) return {{"wp", projected_wp(bins, xi)}};
  std::vector<NamedColumn> c;
  for (int ell : {0, 2, 4}) c.push_back({fmt::format("xi{}", ell), multipoles(bins, xi, ell)});
  return c;
}

}  // namespace

Binned2DResult correlation_2d(const PointSet& data, const std::vector<PointSet>& randoms, const Binning2D& bins,
                              const std::optional<Box>& box, bool weighted, Estimator estimator,
                              const RunOptions& opt, const JackknifeRequest& jk, const ReusedCounts& reuse) {
  detail::StatisticClock clock;
  Statistic s = statistic_2d(bins, box, weighted, false);
  s.set_mean_separation(opt.mean_separation);  // (the data pairs' only: count_correlation)
  if (randoms.empty() && !box)
    throw_config("a 2-D correlation function needs random catalogues (--randoms), or a periodic box (--box) for the "
                 "analytic random counts");
  if (randoms.empty() && reuse.rr)
    throw_config("a saved RR stands for random catalogues' RR: without random catalogues the RR is analytic "
                 "(give the random catalogues, or drop the saved RR)");
  const CorrelationSpace space = box ? CorrelationSpace::Box : CorrelationSpace::Open;
  const std::size_t nb = bins.nbins(), ni = bins.inner().nbins();
  PointSet d = data;
  std::optional<detail::RegionLabeller> labeller;
  if (jk.use_labels || jk.regions != 0) {
    // Mocks lie on the sky about the observer: their regions are patches of sky, as for w(θ).
    const CorrelationSpace layout = bins.midpoint_los() ? CorrelationSpace::Sky : space;
    const detail::RegionFit fit{detail::pointers(randoms), [](const PointSet& p) { return detail::directions(p); }};
    labeller = detail::make_labeller(jk, layout, box, data, layout == CorrelationSpace::Sky ? detail::directions(data) : data,
                                     detail::pointers(randoms), reuse.rr, fit);
    d.set_regions(labeller->label(data, d, "data"));
  }
  const auto as_given = [](const PointSet& p) { return p; };
  clock.data_ready();
  detail::CorrelationCounts c = detail::count_correlation(s, space, std::move(d), randoms, as_given,
                                                          labeller ? &*labeller : nullptr, opt, reuse);

  Binned2DResult out;
  out.binning = bins;
  out.norm_dd = c.norm_dd;
  out.n_randoms = c.n_randoms;
  out.randoms_hash = c.randoms_hash;
  std::vector<double> xi(nb), samples;
  if (randoms.empty()) {
    std::vector<double> volume(nb);
    for (std::size_t k = 0; k < nb; ++k) volume[k] = bin_volume_2d(bins, k / ni, k % ni);
    detail::AnalyticEstimate e = detail::analytic_box_estimate(c, data, volume, box->volume(), weighted);
    xi = e.xi;
    samples = std::move(e.samples);
    out.norm_rr = e.pairs;
    out.analytic_rr = true;
    out.derived.push_back({weighted ? "wrr" : "rr", e.rr});
    out.derived.push_back({"xi", xi});
    out.note = "analytic RR of the periodic box (Corrfunc's theory wp/xi): xi = DD/RR - 1";
  } else {
    for (std::size_t k = 0; k < nb; ++k) {
      const detail::NormalisedCounts n = detail::normalised(c, k);
      xi[k] = estimate(estimator, n.dd, n.dr, n.rr);
    }
    out.norm_dr = c.norm_dr;
    out.norm_rr = c.norm_rr;
    out.derived.push_back({"dr", c.dr});
    out.derived.push_back({"rr", c.rr});
    if (weighted) {
      out.derived.push_back({"wdr", c.wdr});
      out.derived.push_back({"wrr", c.wrr});
    }
    out.derived.push_back({"xi", xi});
    out.note = fmt::format("{} estimator, DR and RR summed over {} random catalogue(s)", to_string(estimator),
                           randoms.size());
    if (c.jackknife) samples = detail::jackknife_samples(c, estimator);
  }
  out.per_outer = per_outer_columns(bins, xi);
  out.raw = std::move(c.dd);
  if (!c.jackknife) {
    add_mean_separation_columns_2d(out);
    clock.stamp(out.raw, &c);
    return out;
  }

  JackknifeResult& J = *c.jackknife;
  J.estimator = estimator;
  J.samples = std::move(samples);
  JackknifeSummary sum = jackknife_summary(J.samples, J.regions, nb);
  J.mean = std::move(sum.mean);
  J.sigma = std::move(sum.sigma);
  J.covariance = std::move(sum.covariance);
  out.jackknife = std::move(c.jackknife);
  add_jackknife_columns(out);
  add_mean_separation_columns_2d(out);  // (after the jackknife's per-outer columns, which it slices)
  clock.stamp(out.raw, &c);
  return out;
}

namespace {

// With out.jackknife's samples and summary over the flat bins: their columns, and the per_outer
// vector (w_p, or the multipoles) of every sample with its own jackknife. w_p and the multipoles
// are linear in ξ: each sample's are those of its ξ, and their covariance is the jackknife's over
// the stacked vector.
void add_jackknife_columns(Binned2DResult& out) {
  const JackknifeResult& J = *out.jackknife;
  const Binning2D& bins = out.binning;
  const std::size_t R = J.regions, nb = bins.nbins();
  out.derived.push_back({"xi_jk_mean", J.mean});
  out.derived.push_back({"xi_jk_sigma", J.sigma});
  const std::size_t no = bins.outer().nbins(), n = out.per_outer.size() * no;
  out.per_outer_samples.resize(R * n);
  for (std::size_t r = 0; r < R; ++r) {
    const std::vector<double> x(J.samples.begin() + static_cast<std::ptrdiff_t>(r * nb),
                                J.samples.begin() + static_cast<std::ptrdiff_t>((r + 1) * nb));
    std::size_t at = r * n;
    for (const NamedColumn& col : per_outer_columns(bins, x))
      for (double v : col.values) out.per_outer_samples[at++] = v;
  }
  out.per_outer_jackknife = jackknife_summary(out.per_outer_samples, R, n);
  const std::size_t ncols = out.per_outer.size();
  for (std::size_t m = 0; m < ncols; ++m) {
    const auto slice = [&](const std::vector<double>& v) {
      return std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(m * no),
                                 v.begin() + static_cast<std::ptrdiff_t>((m + 1) * no));
    };
    const std::string name = out.per_outer[m].name;
    out.per_outer.push_back({name + "_jk_mean", slice(out.per_outer_jackknife.mean)});
    out.per_outer.push_back({name + "_jk_sigma", slice(out.per_outer_jackknife.sigma)});
  }
}

}  // namespace

Binned2DResult cross_correlation_2d(const PointSet& data1, const PointSet& data2, const std::vector<PointSet>& randoms1,
                                    const std::vector<PointSet>& randoms2, const Binning2D& bins,
                                    const std::optional<Box>& box, bool weighted, Estimator estimator,
                                    const RunOptions& opt, const JackknifeRequest& jk, const ReusedCounts& reuse) {
  detail::StatisticClock clock;
  const Statistic s = statistic_2d(bins, box, weighted, true);
  const std::size_t nb = bins.nbins(), ni = bins.inner().nbins();
  std::vector<double> volume(nb);
  for (std::size_t k = 0; k < nb; ++k) volume[k] = bin_volume_2d(bins, k / ni, k % ni);
  // Mocks lie on the sky about the observer: their automatic regions are patches of sky.
  JackknifeRequest request = jk;
  request.sky_about_origin = bins.midpoint_los();
  clock.data_ready();
  detail::CrossEstimate e = detail::cross_estimate(s, box ? CorrelationSpace::Box : CorrelationSpace::Open, data1, data2,
                                                   randoms1, randoms2, volume, box, opt, request, estimator, reuse);
  Binned2DResult out;
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
    out.note = "cross-correlation against the analytic R1R2 of the periodic box: xi = D1D2/R1R2 - 1";
  } else {
    out.note = fmt::format("cross-correlation, {} estimator (D1D2, D1R2, R1D2, R1R2), {} + {} random catalogue(s)",
                           to_string(estimator), randoms1.size(), randoms2.size());
  }
  out.derived.push_back({"xi", e.xi});
  out.per_outer = per_outer_columns(bins, e.xi);
  out.raw = std::move(e.dd);
  if (e.jackknife) {
    out.jackknife = std::move(e.jackknife);
    add_jackknife_columns(out);
  }
  add_mean_separation_columns_2d(out);
  clock.stamp(out.raw);
  return out;
}

Table binned2d_table(const Binned2DResult& r) {
  const Binning2D& b = r.binning;
  const std::size_t no = b.outer().nbins(), ni = b.inner().nbins();
  std::vector<double> olo, ohi, ilo, ihi;
  for (std::size_t i = 0; i < no; ++i)
    for (std::size_t k = 0; k < ni; ++k) {
      olo.push_back(b.outer().lo(i));
      ohi.push_back(b.outer().hi(i));
      ilo.push_back(b.inner().lo(k));
      ihi.push_back(b.inner().hi(k));
    }
  Table t;
  t.columns.push_back({fmt::format("{}_lo", b.outer_name()), olo});
  t.columns.push_back({fmt::format("{}_hi", b.outer_name()), ohi});
  t.columns.push_back({fmt::format("{}_lo", b.inner_name()), ilo});
  t.columns.push_back({fmt::format("{}_hi", b.inner_name()), ihi});
  t.columns.push_back({"npairs", r.raw.counts});
  if (!r.raw.weighted.empty()) t.columns.push_back({"wnpairs", r.raw.weighted});
  for (const auto& c : r.derived) t.columns.push_back({c.name, c.values});
  t.meta = run_metadata(r.raw);
  t.meta["binning"] = b.describe();
  if (!r.note.empty()) t.meta["estimator"] = r.note;
  return t;
}

Table per_outer_table(const Binned2DResult& r) {
  const Binning& o = r.binning.outer();
  std::vector<double> lo, hi;
  for (std::size_t i = 0; i < o.nbins(); ++i) {
    lo.push_back(o.lo(i));
    hi.push_back(o.hi(i));
  }
  Table t;
  t.columns.push_back({fmt::format("{}_lo", r.binning.outer_name()), lo});
  t.columns.push_back({fmt::format("{}_hi", r.binning.outer_name()), hi});
  for (const auto& c : r.per_outer) t.columns.push_back({c.name, c.values});
  t.meta = run_metadata(r.raw);
  t.meta["binning"] = r.binning.describe();
  if (!r.note.empty()) t.meta["estimator"] = r.note;
  return t;
}

}  // namespace twobody
