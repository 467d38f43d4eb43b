#include "twobody/clustering2d.hpp"

#include <fmt/format.h>

#include <cmath>
#include <numbers>

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
  s.output = OutputKind::Histogram;
  s.weighted = weighted;
  s.binning2d = bins;
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

Binned2DResult paircount_2d(const PointSet& a, const PointSet* b, const Binning2D& bins, const std::optional<Box>& box,
                            bool weighted, const RunOptions& opt) {
  const Statistic s = statistic_2d(bins, box, weighted, b != nullptr);
  Binned2DResult r;
  r.binning = bins;
  r.raw = run(s, a, b, opt);
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

Binned2DResult correlation_2d(const PointSet& data, const std::vector<PointSet>& randoms, const Binning2D& bins,
                              const std::optional<Box>& box, bool weighted, Estimator estimator,
                              const RunOptions& opt) {
  const Statistic s = statistic_2d(bins, box, weighted, false);
  const std::size_t nb = bins.nbins(), ni = bins.inner().nbins();
  Binned2DResult out;
  out.binning = bins;
  out.raw = run(s, data, nullptr, opt);
  const auto dd_of = [&](std::size_t k) {
    return weighted ? out.raw.weighted[k] : static_cast<double>(out.raw.counts[k]);
  };
  std::vector<double> xi(nb);

  if (randoms.empty()) {
    if (!box)
      throw_config("a 2-D correlation function needs random catalogues (--randoms), or a periodic box (--box) for the "
                   "analytic random counts");
    // Corrfunc's theory wp/xi: the random pairs expected in each bin of the box, every random
    // point carrying the mean weight.
    const double n = static_cast<double>(data.size());
    double pairs = 0.5 * n * (n - 1);
    if (weighted) {
      double w = 0;
      for (double x : data.weights()) w += x;
      pairs = 0.5 * w * w * (1 - 1 / n);
    }
    const double volume = box->volume();
    std::vector<double> rr(nb);
    for (std::size_t k = 0; k < nb; ++k) {
      rr[k] = pairs * bin_volume_2d(bins, k / ni, k % ni) / volume;
      xi[k] = rr[k] > 0 ? dd_of(k) / rr[k] - 1 : std::nan("");
    }
    out.derived.push_back({weighted ? "wrr" : "rr", rr});
    out.derived.push_back({"xi", xi});
    out.note = "analytic RR of the periodic box (Corrfunc's theory wp/xi): xi = DD/RR - 1";
  } else {
    std::vector<double> dr(nb, 0.0), rr(nb, 0.0), wdr(nb, 0.0), wrr(nb, 0.0);
    double norm_dr = 0, norm_rr = 0;
    for (const PointSet& r : randoms) {
      Statistic c = s;
      c.traversal = Traversal::Cross;
      const Result x = run(c, data, &r, opt), y = run(s, r, nullptr, opt);
      for (std::size_t k = 0; k < nb; ++k) {
        dr[k] += static_cast<double>(x.counts[k]);
        rr[k] += static_cast<double>(y.counts[k]);
        if (weighted) {
          wdr[k] += x.weighted[k];
          wrr[k] += y.weighted[k];
        }
      }
      norm_dr += pair_norm(data, &r, weighted);
      norm_rr += pair_norm(r, nullptr, weighted);
      out.raw.info.seconds += x.info.seconds + y.info.seconds;
      out.raw.info.pairs_evaluated += x.info.pairs_evaluated + y.info.pairs_evaluated;
    }
    const double norm_dd = pair_norm(data, nullptr, weighted);
    for (std::size_t k = 0; k < nb; ++k)
      xi[k] = estimate(estimator, dd_of(k) / norm_dd, (weighted ? wdr[k] : dr[k]) / norm_dr,
                       (weighted ? wrr[k] : rr[k]) / norm_rr);
    out.derived.push_back({"dr", dr});
    out.derived.push_back({"rr", rr});
    if (weighted) {
      out.derived.push_back({"wdr", wdr});
      out.derived.push_back({"wrr", wrr});
    }
    out.derived.push_back({"xi", xi});
    out.note = fmt::format("{} estimator, DR and RR summed over {} random catalogue(s)", to_string(estimator),
                           randoms.size());
  }
  if (bins.kind() == Binning2D::Kind::RpPi) {
    out.per_outer.push_back({"wp", projected_wp(bins, xi)});
  } else {
    for (int ell : {0, 2, 4}) out.per_outer.push_back({fmt::format("xi{}", ell), multipoles(bins, xi, ell)});
  }
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
