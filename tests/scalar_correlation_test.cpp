// Scalar-field correlations (KK, NK) against an independent float64 brute force over all pairs,
// with fresh random inputs (κ of both signs, weighted and not, auto and cross, box/open/sky, both
// traversals); closed forms: constant κ = c gives ξ_κκ = c², random κ of mean 0 gives ≈ 0.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "test_support.hpp"
#include "twobody/error.hpp"
#include "twobody/generate.hpp"
#include "twobody/scalar_correlation.hpp"

using namespace twobody;

namespace {

const std::vector<double>& column(const BinnedResult& r, const std::string& name) {
  for (const auto& c : r.derived)
    if (c.name == name) return c.values;
  throw std::runtime_error("no column " + name);
}

std::vector<double> uniform(std::size_t n, double lo, double hi, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

PointSet weighted(PointSet p, std::uint64_t seed) {
  p.set_weights(uniform(p.size(), 0.2, 2.0, seed));
  return p;
}

// Separation of points i of a and j of b: Euclidean, minimum image in a box of side L, or the
// angle in degrees between (RA, Dec) in degrees.
double separation(const PointSet& a, std::size_t i, const PointSet& b, std::size_t j, CorrelationSpace space, double L) {
  if (space == CorrelationSpace::Sky) {
    constexpr double deg = std::numbers::pi / 180;
    const double r1 = a.coord(0)[i] * deg, d1 = a.coord(1)[i] * deg, r2 = b.coord(0)[j] * deg, d2 = b.coord(1)[j] * deg;
    const double x = std::cos(d1) * std::cos(r1) - std::cos(d2) * std::cos(r2);
    const double y = std::cos(d1) * std::sin(r1) - std::cos(d2) * std::sin(r2);
    const double z = std::sin(d1) - std::sin(d2);
    return 2 * std::asin(std::sqrt(x * x + y * y + z * z) / 2) / deg;
  }
  double s = 0;
  for (int d = 0; d < a.dim(); ++d) {
    double x = std::abs(a.coord(d)[i] - b.coord(d)[j]);
    if (space == CorrelationSpace::Box) x = std::min(x, L - x);
    s += x * x;
  }
  return std::sqrt(s);
}

struct Brute {
  std::vector<double> num, den, abs_num;  // Σ w w κ κ, Σ w w, Σ |w w κ κ| (the rounding scale)
  std::vector<std::uint64_t> n;
  std::vector<double> sep, log_sep;  // Σ w w s, Σ w w ln s
};

// ka/kb empty: κ = 1 on that side (NK's count catalogue).
Brute brute(const PointSet& a, const std::vector<double>& ka, const PointSet* b, const std::vector<double>& kb,
            const Binning& bins, CorrelationSpace space, double L, bool use_w) {
  const std::size_t nb = bins.nbins();
  Brute r{std::vector<double>(nb), std::vector<double>(nb), std::vector<double>(nb), std::vector<std::uint64_t>(nb),
          std::vector<double>(nb), std::vector<double>(nb)};
  const PointSet& bb = b ? *b : a;
  const std::vector<double>& kbb = b ? kb : ka;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = b ? 0 : i + 1; j < bb.size(); ++j) {
      const double s = separation(a, i, bb, j, space, L);
      if (s < bins.lo() || s >= bins.hi()) continue;
      std::size_t k = 0;
      while (k + 1 < nb && s >= bins.lo(k + 1)) ++k;
      const double w = use_w ? a.weights()[i] * bb.weights()[j] : 1.0;
      const double t = w * (ka.empty() ? 1.0 : ka[i]) * (kbb.empty() ? 1.0 : kbb[j]);
      r.num[k] += t;
      r.abs_num[k] += std::abs(t);
      r.den[k] += w;
      ++r.n[k];
      r.sep[k] += w * s;
      r.log_sep[k] += w * std::log(s);
    }
  return r;
}

void expect_matches(const BinnedResult& x, const Brute& want, const char* xi_name) {
  const auto& xi = column(x, xi_name);
  const auto& w = column(x, "weight");
  for (std::size_t k = 0; k < want.n.size(); ++k) {
    EXPECT_EQ(x.raw.counts[k], want.n[k]) << k;
    EXPECT_NEAR(w[k], want.den[k], 1e-12 * std::abs(want.den[k])) << k;
    if (want.den[k] == 0) {
      EXPECT_TRUE(std::isnan(xi[k])) << k;
      continue;
    }
    // Sums added in another order: equal to rounding of the sum of |terms|.
    EXPECT_NEAR(xi[k], want.num[k] / want.den[k], 1e-12 * (want.abs_num[k] / std::abs(want.den[k]) + 1)) << k;
  }
}

PointSet make_points(CorrelationSpace space, std::size_t n, double L, std::uint64_t seed) {
  if (space == CorrelationSpace::Sky) return generate_clustered_sky(n, ClusterOptions{}, seed);
  return generate_clustered_box(n, 3, L, ClusterOptions{}, seed);
}

}  // namespace

TEST(ScalarCorrelation, KKAndNKEqualBruteForceInEverySpace) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const double L = 100.0;
  for (CorrelationSpace space : {CorrelationSpace::Box, CorrelationSpace::Open, CorrelationSpace::Sky}) {
    const Binning bins = space == CorrelationSpace::Sky ? Binning::logarithmic(0.1, 20.0, 7) : Binning::logarithmic(1.0, 40.0, 7);
    const std::optional<Box> box = space == CorrelationSpace::Box ? std::optional<Box>(Box::cube(3, L)) : std::nullopt;
    for (bool use_w : {false, true})
      for (const char* path : {"brute", "grid"}) {
        SCOPED_TRACE(std::string(path) + (use_w ? " weighted " : " unweighted ") + std::to_string(int(space)));
        RunOptions opt;
        opt.backend = "cpu";
        opt.path = path;
        PointSet a = make_points(space, 700, L, seed), b = make_points(space, 500, L, seed + 1);
        if (use_w) {
          a = weighted(std::move(a), seed + 2);
          b = weighted(std::move(b), seed + 3);
        }
        const std::vector<double> ka = uniform(a.size(), -1.0, 2.0, seed + 4), kb = uniform(b.size(), -3.0, 1.0, seed + 5);
        const ScalarCatalogue A{a, ka}, B{b, kb};
        expect_matches(kk_correlation(A, nullptr, bins, space, box, use_w, opt), brute(a, ka, nullptr, {}, bins, space, L, use_w),
                       "xi_kk");
        expect_matches(kk_correlation(A, &B, bins, space, box, use_w, opt), brute(a, ka, &b, kb, bins, space, L, use_w), "xi_kk");
        const BinnedResult nk = nk_correlation(a, B, nullptr, bins, space, box, use_w, opt);
        expect_matches(nk, brute(a, {}, &b, kb, bins, space, L, use_w), "xi_nk");
        // Compensated: NK − RK, each against its own brute force.
        const PointSet r = use_w ? weighted(make_points(space, 600, L, seed + 6), seed + 7) : make_points(space, 600, L, seed + 6);
        const BinnedResult c = nk_correlation(a, B, &r, bins, space, box, use_w, opt);
        const Brute rk = brute(r, {}, &b, kb, bins, space, L, use_w), nkb = brute(a, {}, &b, kb, bins, space, L, use_w);
        for (std::size_t k = 0; k < bins.nbins(); ++k) {
          if (rk.den[k] == 0 || nkb.den[k] == 0) continue;
          const double want = nkb.num[k] / nkb.den[k] - rk.num[k] / rk.den[k];
          const double scale = nkb.abs_num[k] / std::abs(nkb.den[k]) + rk.abs_num[k] / std::abs(rk.den[k]) + 1;
          EXPECT_NEAR(column(c, "xi_nk")[k], want, 1e-12 * scale) << k;
          EXPECT_EQ(column(c, "rk_npairs")[k], double(rk.n[k])) << k;
        }
      }
  }
}

// --ravg on kk and nk (TreeCorr's meanr, meanlogr): Σ w_i w_j s / Σ w_i w_j per bin against the
// brute force, weighted and not, auto and cross, box and sky.
TEST(ScalarCorrelation, MeanSeparationsEqualBruteForce) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const double L = 100.0;
  for (CorrelationSpace space : {CorrelationSpace::Box, CorrelationSpace::Sky})
    for (bool use_w : {false, true}) {
      const Binning bins = space == CorrelationSpace::Sky ? Binning::logarithmic(0.1, 20.0, 5) : Binning::logarithmic(1.0, 40.0, 5);
      const std::optional<Box> box = space == CorrelationSpace::Box ? std::optional<Box>(Box::cube(3, L)) : std::nullopt;
      RunOptions opt;
      opt.backend = "cpu";
      opt.mean_separation = true;
      PointSet a = make_points(space, 600, L, seed), b = make_points(space, 400, L, seed + 1);
      if (use_w) {
        a = weighted(std::move(a), seed + 2);
        b = weighted(std::move(b), seed + 3);
      }
      const std::vector<double> ka = uniform(a.size(), -1.0, 2.0, seed + 4), kb = uniform(b.size(), -3.0, 1.0, seed + 5);
      const ScalarCatalogue A{a, ka}, B{b, kb};
      const auto check = [&](const BinnedResult& x, const Brute& want) {
        const auto& r = column(x, "ravg");
        const auto& lr = column(x, "meanlogr");
        for (std::size_t k = 0; k < want.n.size(); ++k) {
          if (want.den[k] == 0) {
            EXPECT_TRUE(std::isnan(r[k])) << k;
            continue;
          }
          EXPECT_NEAR(r[k], want.sep[k] / want.den[k], 1e-12 * (1 + want.sep[k] / want.den[k])) << k;
          EXPECT_NEAR(lr[k], want.log_sep[k] / want.den[k], 1e-11 * (1 + std::abs(want.log_sep[k] / want.den[k]))) << k;
        }
      };
      check(kk_correlation(A, nullptr, bins, space, box, use_w, opt), brute(a, ka, nullptr, {}, bins, space, L, use_w));
      check(kk_correlation(A, &B, bins, space, box, use_w, opt), brute(a, ka, &b, kb, bins, space, L, use_w));
      check(nk_correlation(a, B, nullptr, bins, space, box, use_w, opt), brute(a, {}, &b, kb, bins, space, L, use_w));
      const PointSet r = make_points(space, 300, L, seed + 6);
      check(nk_correlation(a, B, use_w ? nullptr : &r, bins, space, box, use_w, opt), brute(a, {}, &b, kb, bins, space, L, use_w));
    }
}

TEST(ScalarCorrelation, ConstantKappaGivesItsSquare) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PointSet p = weighted(generate_uniform_box(800, 3, 50.0, seed), seed + 1);
  const std::vector<double> c(p.size(), -1.75);
  RunOptions opt;
  opt.backend = "cpu";
  for (bool use_w : {false, true}) {
    const BinnedResult x =
        kk_correlation({p, c}, nullptr, Binning::linear(0.0, 20.0, 5), CorrelationSpace::Box, Box::cube(3, 50.0), use_w, opt);
    for (std::size_t k = 0; k < 5; ++k) {
      ASSERT_GT(x.raw.counts[k], 0u);
      EXPECT_NEAR(column(x, "xi_kk")[k], 1.75 * 1.75, 1e-12) << k;
      EXPECT_LT(column(x, "varxi")[k], 1e-20) << k;  // κ has no scatter (to rounding)
    }
    const BinnedResult n = nk_correlation(p, {p, c}, nullptr, Binning::linear(0.0, 20.0, 5), CorrelationSpace::Open,
                                          std::nullopt, use_w, opt);
    for (std::size_t k = 0; k < 5; ++k) EXPECT_NEAR(column(n, "xi_nk")[k], -1.75, 1e-12) << k;
  }
}

TEST(ScalarCorrelation, UncorrelatedKappaIsConsistentWithZero) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PointSet p = generate_uniform_box(3000, 3, 100.0, seed);
  std::mt19937_64 rng(seed + 1);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<double> k(p.size());
  for (auto& x : k) x = g(rng);
  RunOptions opt;
  opt.backend = "cpu";
  const BinnedResult x =
      kk_correlation({p, k}, nullptr, Binning::linear(5.0, 30.0, 5), CorrelationSpace::Box, Box::cube(3, 100.0), false, opt);
  for (std::size_t b = 0; b < 5; ++b) {
    // Pairs share points, so the shot noise underestimates the scatter a little: allow 6σ.
    const double sigma = std::sqrt(column(x, "varxi")[b]);
    EXPECT_GT(sigma, 0.0);
    EXPECT_LT(std::abs(column(x, "xi_kk")[b]), 6 * sigma) << b;
  }
}

TEST(ScalarCorrelation, BadInput) {
  const PointSet p = generate_uniform_box(50, 3, 10.0, 1);
  const std::vector<double> short_k(49, 1.0);
  std::vector<double> nan_k(50, 1.0);
  nan_k[7] = std::nan("");
  const Binning bins = Binning::linear(0.0, 3.0, 3);
  const auto kind = [](auto f) {
    try {
      f();
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::Internal;
  };
  EXPECT_EQ(kind([&] { kk_correlation({p, short_k}, nullptr, bins, CorrelationSpace::Open, std::nullopt, false); }),
            ErrorKind::Input);
  EXPECT_EQ(kind([&] { kk_correlation({p, nan_k}, nullptr, bins, CorrelationSpace::Open, std::nullopt, false); }),
            ErrorKind::Input);
  const std::vector<double> k(50, 1.0);
  EXPECT_EQ(kind([&] { kk_correlation({p, k}, nullptr, bins, CorrelationSpace::Open, std::nullopt, true); }),
            ErrorKind::Config);
  EXPECT_EQ(kind([&] { kk_correlation({p, k}, nullptr, bins, CorrelationSpace::Box, std::nullopt, false); }),
            ErrorKind::Config);
}
