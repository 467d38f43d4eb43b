#include "twobody/scalar_correlation.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "twobody/error.hpp"

namespace twobody {

namespace {

void check_kappa(const ScalarCatalogue& c, const char* which) {
  if (c.kappa.size() != c.points.size())
    throw_input(fmt::format("{}: {} kappa values for {} points", which, c.kappa.size(), c.points.size()));
  for (std::size_t i = 0; i < c.kappa.size(); ++i)
    if (!std::isfinite(c.kappa[i])) throw_input(fmt::format("{}: point {} has a non-finite kappa", which, i + 1));
}

void check_weights(const PointSet& p, bool weighted, const char* which) {
  if (weighted && !p.has_weights()) throw_config(fmt::format("weighted correlations need a weight for every point ({})", which));
}

// The engine's declaration for one space; sums are always weighted (by w, κ or wκ).
Statistic scalar_statistic(const Binning& bins, CorrelationSpace space, const std::optional<Box>& box) {
  if (space == CorrelationSpace::Box && !box) throw_config("a periodic correlation function needs the box");
  Statistic s;
  s.metric = metric_of(space);
  if (space == CorrelationSpace::Box) s.box = *box;
  s.reduction = reduce::Histogram{bins};
  s.weighted = true;
  return s;
}

// The points as the engine sees them (unit vectors on the sky) with per-point weights
// w·κ (kappa given) or w (weighted, no kappa) or κ (unweighted).
PointSet with_point_weights(const PointSet& p, CorrelationSpace space, bool weighted, std::span<const double> kappa) {
  PointSet q = space == CorrelationSpace::Sky ? sky_to_unit_vectors(p) : p;
  std::vector<double> w(p.size(), 1.0);
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (weighted) w[i] = p.weights()[i];
    if (!kappa.empty()) w[i] *= kappa[i];
  }
  q.set_weights(std::move(w));
  return q;
}

Result count(const Statistic& s, const PointSet& a, const PointSet* b, const RunOptions& opt) {
  Statistic t = s;
  t.traversal = b ? Traversal::Cross : Traversal::Auto;
  return run(t, a, b, opt);
}

// Σ w_i w_j per bin: the weighted sums when weighted, the pair counts otherwise.
std::vector<double> weight_sums(const Result& r, bool weighted) {
  if (weighted) return r.weighted;
  return {r.counts.begin(), r.counts.end()};
}

std::vector<double> ratio(const std::vector<double>& num, const std::vector<double>& den) {
  std::vector<double> x(num.size());
  for (std::size_t k = 0; k < num.size(); ++k)
    x[k] = den[k] != 0 ? num[k] / den[k] : std::numeric_limits<double>::quiet_NaN();
  return x;
}

void add_info(Result& into, const Result& x) {
  into.info.seconds += x.info.seconds;
  into.info.pairs_evaluated += x.info.pairs_evaluated;
  into.info.pairs_settled_fp64 += x.info.pairs_settled_fp64;
}

// Mean ξ of one pair set (NK or RK): the numerator run with w·κ on the field, and the
// denominator from its counts (unweighted) or a second run with w. With opt.mean_separation the
// run with w (or with weights 1, an extra run when unweighted) also sums Σ w_i w_j s per bin:
// TreeCorr's meanr and meanlogr.
struct FieldMean {
  Result raw;  // counts, and the weighted denominators when weighted; separation sums when asked
  std::vector<double> weight, xi;
};

FieldMean field_mean(const Statistic& s, const PointSet& a, std::span<const double> kappa_a, const PointSet* b,
                     std::span<const double> kappa_b, CorrelationSpace space, bool weighted, const RunOptions& opt) {
  const PointSet na = with_point_weights(a, space, weighted, kappa_a);
  const PointSet nb = b ? with_point_weights(*b, space, weighted, kappa_b) : PointSet();
  const Result num = count(s, na, b ? &nb : nullptr, opt);
  FieldMean f;
  f.raw = num;
  if (weighted || opt.mean_separation) {
    Statistic w = s;
    w.set_mean_separation(opt.mean_separation);
    const PointSet da = with_point_weights(a, space, weighted, {});
    const PointSet db = b ? with_point_weights(*b, space, weighted, {}) : PointSet();
    Result den = count(w, da, b ? &db : nullptr, opt);
    if (weighted) {
      add_info(den, num);
      f.raw = std::move(den);
    } else {
      f.raw.separation_sum = std::move(den.separation_sum);
      f.raw.log_separation_sum = std::move(den.log_separation_sum);
      add_info(f.raw, den);
    }
  }
  if (!weighted) f.raw.weighted.clear();
  f.weight = weight_sums(f.raw, weighted);
  f.xi = ratio(num.weighted, f.weight);
  f.raw.weighted.clear();  // the table's weight column holds Σ w_i w_j in both cases
  return f;
}

// meanr and meanlogr (named ravg and meanlogr, as the other commands' --ravg) from the separation
// sums over Σ w_i w_j; NaN in an empty bin.
void add_mean_separations(BinnedResult& out, const FieldMean& f) {
  if (f.raw.separation_sum.empty()) return;
  out.derived.push_back({"ravg", ratio(f.raw.separation_sum, f.weight)});
  out.derived.push_back({"meanlogr", ratio(f.raw.log_separation_sum, f.weight)});
}

std::vector<double> shot_noise(double numerator, const std::vector<double>& weight) {
  std::vector<double> v(weight.size(), 0.0);
  for (std::size_t k = 0; k < weight.size(); ++k)
    if (weight[k] != 0) v[k] = numerator / weight[k];
  return v;
}

}  // namespace

double kappa_variance(const ScalarCatalogue& c, bool weighted) {
  double sw = 0, swk = 0;
  for (std::size_t i = 0; i < c.kappa.size(); ++i) {
    const double w = weighted ? c.points.weights()[i] : 1.0;
    sw += w;
    swk += w * c.kappa[i];
  }
  if (sw == 0) return 0;
  const double mean = swk / sw;
  double v = 0;
  for (std::size_t i = 0; i < c.kappa.size(); ++i) {
    const double w = weighted ? c.points.weights()[i] : 1.0;
    v += w * w * (c.kappa[i] - mean) * (c.kappa[i] - mean);
  }
  return v / sw;
}

BinnedResult kk_correlation(const ScalarCatalogue& a, const ScalarCatalogue* b, const Binning& bins,
                            CorrelationSpace space, const std::optional<Box>& box, bool weighted,
                            const RunOptions& opt) {
  check_kappa(a, "first catalogue");
  check_weights(a.points, weighted, "first catalogue");
  if (b) {
    check_kappa(*b, "second catalogue");
    check_weights(b->points, weighted, "second catalogue");
  }
  const Statistic s = scalar_statistic(bins, space, box);
  FieldMean f = field_mean(s, a.points, a.kappa, b ? &b->points : nullptr, b ? b->kappa : std::span<const double>{},
                           space, weighted, opt);
  const double va = kappa_variance(a, weighted), vb = b ? kappa_variance(*b, weighted) : va;
  BinnedResult out{bins, f.raw, {}};
  out.derived.push_back({"weight", f.weight});
  out.derived.push_back({"xi_kk", std::move(f.xi)});
  out.derived.push_back({"varxi", shot_noise(va * vb, f.weight)});
  add_mean_separations(out, f);
  return out;
}

BinnedResult nk_correlation(const PointSet& n, const ScalarCatalogue& k, const PointSet* randoms,
                            const Binning& bins, CorrelationSpace space, const std::optional<Box>& box,
                            bool weighted, const RunOptions& opt) {
  check_kappa(k, "field catalogue");
  check_weights(n, weighted, "count catalogue");
  check_weights(k.points, weighted, "field catalogue");
  if (randoms) check_weights(*randoms, weighted, "random catalogue");
  const Statistic s = scalar_statistic(bins, space, box);
  FieldMean nk = field_mean(s, n, {}, &k.points, k.kappa, space, weighted, opt);
  const double vk = kappa_variance(k, weighted);
  std::vector<double> varxi = shot_noise(vk, nk.weight);
  BinnedResult out{bins, nk.raw, {}};
  out.derived.push_back({"weight", nk.weight});
  if (!randoms) {
    out.derived.push_back({"xi_nk", std::move(nk.xi)});
    out.derived.push_back({"varxi", std::move(varxi)});
    add_mean_separations(out, nk);
    return out;
  }
  RunOptions no_means = opt;  // (the mean separations are the NK pairs')
  no_means.mean_separation = false;
  const FieldMean rk = field_mean(s, *randoms, {}, &k.points, k.kappa, space, weighted, no_means);
  add_info(out.raw, rk.raw);
  // TreeCorr's compensated estimator and its variance: NK − RK, var(NK) + var(RK).
  std::vector<double> xi(nk.xi.size());
  const std::vector<double> rk_var = shot_noise(vk, rk.weight);
  for (std::size_t q = 0; q < xi.size(); ++q) {
    xi[q] = nk.xi[q] - rk.xi[q];
    varxi[q] += rk_var[q];
  }
  out.derived.push_back({"xi_nk", std::move(xi)});
  out.derived.push_back({"varxi", std::move(varxi)});
  out.derived.push_back({"xi_nk_raw", std::move(nk.xi)});
  out.derived.push_back({"rk_npairs", {rk.raw.counts.begin(), rk.raw.counts.end()}});
  out.derived.push_back({"rk_weight", rk.weight});
  out.derived.push_back({"xi_rk", rk.xi});
  add_mean_separations(out, nk);
  return out;
}

}  // namespace twobody
