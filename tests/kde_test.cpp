// Kernel sums (twobody/kde.hpp) on the CPU against the float64 brute force of
// oracle/kernel_sums.hpp: Gaussian and Epanechnikov, auto and cross, open and periodic, weighted or
// not, with and without a value column, on fresh random inputs and on adversarial ones (lattices
// with pairs exactly at the cutoff, offsets of 1e6, duplicate points, points at the box's walls).
// Each density to 1e-12 of its scale, partner counts exactly, and the same bits whatever the
// traversal, the threads or the chunking.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <sstream>

#include "oracle/kernel_sums.hpp"
#include "test_support.hpp"
#include "twobody/error.hpp"
#include "twobody/kde.hpp"
#include "twobody/table.hpp"

using namespace twobody;
using oracle::KernelSumsCase;
using testing_support::fresh_seed;
using testing_support::to_pointset;
using testing_support::uniform_points;

namespace {

RunOptions on_cpu(const char* path = "auto", int threads = 0) {
  RunOptions o;
  o.backend = "cpu";
  o.path = path;
  o.threads = threads;
  return o;
}

KdeOptions kde(KdeKernel kernel, double h) {
  KdeOptions o;
  o.kernel = kernel;
  o.bandwidth = h;
  return o;
}

KdeOptions options_of(const KernelSumsCase& c, bool default_cutoff = false) {
  KdeOptions o;
  o.kernel = c.kernel;
  o.bandwidth = c.h;
  if (!default_cutoff) o.cutoff = c.cutoff;
  o.weighted = c.weighted;
  return o;
}

std::optional<Box> box_of(const KernelSumsCase& c) {
  if (c.L.empty()) return std::nullopt;
  return Box::from_lengths(c.L);
}

std::vector<double> values_for(const oracle::Points& p, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 3.0);
  std::vector<double> y(p.x.size());
  for (auto& v : y) v = u(rng);
  return y;
}

// Runs the case auto and cross, sums and regression, and checks each against the brute force.
void expect_case(const oracle::Points& a, const oracle::Points& b, const KernelSumsCase& c, std::mt19937_64& rng,
                 const RunOptions& run = on_cpu()) {
  const PointSet A = to_pointset(a), B = to_pointset(b);
  const std::vector<double> ya = values_for(a, rng), yb = values_for(b, rng);
  const KdeOptions o = options_of(c);
  {
    SCOPED_TRACE("auto");
    oracle::expect_kernel_sums(kernel_sums(A, nullptr, o, box_of(c), run), a, nullptr, {}, {}, c);
    oracle::expect_kernel_sums(kernel_regression(A, nullptr, ya, {}, o, box_of(c), run), a, nullptr, ya, {}, c);
  }
  {
    SCOPED_TRACE("cross");
    oracle::expect_kernel_sums(kernel_sums(A, &B, o, box_of(c), run), a, &b, {}, {}, c);
    oracle::expect_kernel_sums(kernel_regression(A, &B, ya, yb, o, box_of(c), run), a, &b, ya, yb, c);
  }
}

// Every kernel, weighted or not.
void expect_every_kernel(const oracle::Points& a, const oracle::Points& b, KernelSumsCase c, double h_gauss,
                         double h_epan, std::mt19937_64& rng) {
  for (KdeKernel k : {KdeKernel::Gaussian, KdeKernel::Epanechnikov})
    for (bool weighted : {false, true}) {
      c.kernel = k;
      c.h = k == KdeKernel::Gaussian ? h_gauss : h_epan;
      c.cutoff = kde_cutoff(options_of(c, true));
      c.weighted = weighted;
      SCOPED_TRACE(std::string(to_string(k)) + (weighted ? ", weighted" : ""));
      expect_case(a, b, c, rng);
    }
}

bool same_bits(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) return false;
  for (std::size_t k = 0; k < x.size(); ++k)
    if (std::bit_cast<std::uint64_t>(x[k]) != std::bit_cast<std::uint64_t>(y[k])) return false;
  return true;
}

void expect_same_bits(const KernelSums& x, const KernelSums& y) {
  EXPECT_TRUE(same_bits(x.density_a, y.density_a));
  EXPECT_TRUE(same_bits(x.density_b, y.density_b));
  EXPECT_TRUE(same_bits(x.regression_a, y.regression_a));
  EXPECT_TRUE(same_bits(x.regression_b, y.regression_b));
  EXPECT_EQ(x.partners_a, y.partners_a);
  EXPECT_EQ(x.partners_b, y.partners_b);
  EXPECT_EQ(x.pairs, y.pairs);
}

}  // namespace

TEST(Kde, RandomPointsEveryDimensionAndKernel) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int dim : {1, 2, 3, 5}) {
    SCOPED_TRACE(std::to_string(dim) + "-D");
    const auto a = uniform_points(260, dim, 0, 10, rng, true), b = uniform_points(170, dim, 0, 10, rng, true);
    // About 20 partners a point in 3-D.
    expect_every_kernel(a, b, KernelSumsCase{}, dim == 1 ? 0.1 : 0.5, dim == 1 ? 0.4 : 1.6, rng);
  }
}

TEST(Kde, PeriodicBoxWithPointsAtTheWalls) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // Half the points within 0.01 of a wall, so that most of their partners are across it.
  const std::vector<double> L{10.0, 12.0, 8.0};
  const auto near_walls = [&](std::size_t n) {
    auto p = uniform_points(n, 3, 0, 1, rng, true);
    std::uniform_real_distribution<double> edge(0.0, 0.01);
    for (std::size_t i = 0; i < n; ++i)
      for (int d = 0; d < 3; ++d) {
        const double e = edge(rng);
        p.x[i][d] = i % 2 ? (rng() % 2 ? e : L[d] - e - 1e-9) : p.x[i][d] * L[d];
      }
    return p;
  };
  const auto a = near_walls(240), b = near_walls(150);
  KernelSumsCase c;
  c.L = L;
  // Default cutoffs 5h = 4 and h = 4: exactly half the shortest side.
  expect_every_kernel(a, b, c, 0.8, 4.0, rng);
}

// Spacing ½: most pairs sit at distances whose squares are exact multiples of ¼, many exactly at
// the cutoff (out: the range is [0, cutoff)).
TEST(Kde, LatticePairsExactlyAtTheCutoff) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto a = testing_support::half_lattice(6, 6, 6);
  auto b = testing_support::half_lattice(4, 5, 3);
  std::uniform_real_distribution<double> uw(0.5, 2.0);
  for (auto* p : {&a, &b})
    for (std::size_t i = 0; i < p->x.size(); ++i) p->w.push_back(uw(rng));
  // Default cutoffs 5h = 2.5 and h = 1.0, and a Gaussian cut at 1.5 (a lattice distance).
  expect_every_kernel(a, b, KernelSumsCase{}, 0.5, 1.0, rng);
  KernelSumsCase c;
  c.h = 0.4;
  c.cutoff = 1.5;
  expect_case(a, b, c, rng);
  // Periodic: the lattice fills the box [0, 3)^3, cutoff L/2.
  c.L = {3.0, 3.0, 3.0};
  expect_case(a, b, c, rng);
  c.kernel = KdeKernel::Epanechnikov;
  c.h = 1.5;
  expect_case(a, b, c, rng);
}

TEST(Kde, HugeOffsetsAndDuplicatePoints) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto a = uniform_points(200, 3, 0, 8, rng, true), b = uniform_points(120, 3, 0, 8, rng, true);
  for (auto* p : {&a, &b})
    for (auto& x : p->x)
      for (auto& v : x) v += 1e6;
  {
    SCOPED_TRACE("offset 1e6");
    expect_every_kernel(a, b, KernelSumsCase{}, 0.5, 1.6, rng);
  }
  // Every point three times: partners at r = 0 (K = 1), the point itself never.
  oracle::Points da, db;
  da.dim = db.dim = 3;
  for (int copy = 0; copy < 3; ++copy) {
    for (std::size_t i = 0; i < 90; ++i) {
      da.x.push_back(a.x[i]);
      da.w.push_back(a.w[i]);
    }
    for (std::size_t i = 0; i < 40; ++i) {
      db.x.push_back(b.x[i]);
      db.w.push_back(b.w[i]);
    }
  }
  SCOPED_TRACE("duplicates");
  expect_every_kernel(da, db, KernelSumsCase{}, 0.5, 1.6, rng);
  const KernelSums s = kernel_sums(to_pointset(da), nullptr, kde(KdeKernel::Gaussian, 1e-3), std::nullopt, on_cpu());
  for (std::size_t i = 0; i < da.x.size(); ++i) EXPECT_GE(s.partners_a[i], 2u) << i;
}

// A point with no partner within the cutoff: density 0, regression NaN ("nan" in the table).
TEST(Kde, RegressionOfAnIsolatedPointIsNan) {
  std::mt19937_64 rng(fresh_seed());
  auto a = uniform_points(50, 2, 0, 1, rng, true);
  a.x.push_back({100.0, 100.0});
  a.w.push_back(1.0);
  const auto y = values_for(a, rng);
  KdeOptions o = kde(KdeKernel::Epanechnikov, 0.3);
  o.weighted = true;
  const KernelSums s = kernel_regression(to_pointset(a), nullptr, y, {}, o, std::nullopt, on_cpu());
  EXPECT_EQ(s.density_a.back(), 0.0);
  EXPECT_EQ(s.partners_a.back(), 0u);
  EXPECT_TRUE(std::isnan(s.regression_a.back()));
  KernelSumsCase c;
  c.kernel = KdeKernel::Epanechnikov;
  c.h = c.cutoff = 0.3;
  c.weighted = true;
  oracle::expect_kernel_sums(s, a, nullptr, y, {}, c);
  std::ostringstream csv;
  write_table(csv, kde_table(s), TableFormat::Csv);
  EXPECT_NE(csv.str().find("\n1,50,0,nan\n"), std::string::npos) << csv.str();
}

// A cutoff beyond the Epanechnikov support adds partners with K = 0 and leaves the sums' bits.
TEST(Kde, EpanechnikovCutoffBeyondItsSupportAddsZeros) {
  std::mt19937_64 rng(fresh_seed());
  const PointSet A = to_pointset(uniform_points(400, 3, 0, 6, rng, true));
  KdeOptions o = kde(KdeKernel::Epanechnikov, 1.0);
  o.weighted = true;
  const KernelSums at_support = kernel_sums(A, nullptr, o, std::nullopt, on_cpu());
  EXPECT_EQ(at_support.cutoff, 1.0);
  EXPECT_TRUE(at_support.default_cutoff);
  o.cutoff = 2.0;
  const KernelSums beyond = kernel_sums(A, nullptr, o, std::nullopt, on_cpu());
  EXPECT_TRUE(same_bits(at_support.density_a, beyond.density_a));
  EXPECT_GT(beyond.pairs, at_support.pairs);
}

// The sums' bits do not depend on the traversal, the threads, or the chunks a small memory budget
// cuts the first set into (RunOptions::max_pairs far below the pairs does not stop it).
TEST(Kde, SameBitsWhateverTheTraversalThreadsAndChunks) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto a = uniform_points(900, 3, 0, 10, rng, true), b = uniform_points(400, 3, 0, 10, rng, true);
  const PointSet A = to_pointset(a), B = to_pointset(b);
  const auto ya = values_for(a, rng), yb = values_for(b, rng);
  for (bool periodic : {false, true})
    for (bool cross : {false, true}) {
      SCOPED_TRACE(std::string(periodic ? "periodic" : "open") + (cross ? " cross" : " auto"));
      KdeOptions o = kde(KdeKernel::Gaussian, 0.4);
      o.weighted = true;
      const std::optional<Box> box = periodic ? std::optional<Box>(Box::cube(3, 10.0)) : std::nullopt;
      const PointSet* pb = cross ? &B : nullptr;
      const std::span<const double> yB = cross ? std::span<const double>(yb) : std::span<const double>();
      const KernelSums one = kernel_regression(A, pb, ya, yB, o, box, on_cpu("brute", 1));
      EXPECT_EQ(one.runs, 1u);
      KernelSumsCase c;
      c.h = 0.4;
      c.cutoff = 2.0;
      c.weighted = true;
      if (periodic) c.L = {10.0, 10.0, 10.0};
      oracle::expect_kernel_sums(one, a, cross ? &b : nullptr, ya, cross ? yb : std::vector<double>{}, c);
      for (const char* path : {"brute", "grid"})
        for (int threads : {1, 2})
          for (std::size_t budget : {std::size_t(1) << 24, std::size_t(4000), std::size_t(300), std::size_t(1)}) {
            SCOPED_TRACE(std::string(path) + ", " + std::to_string(threads) + " threads, " + std::to_string(budget) +
                         " pairs in memory");
            // Chunks of a few points, and of one: on one path and thread, the runs are many.
            if (budget < 4000 && (threads == 2 || path[0] == 'b')) continue;
            o.pairs_in_memory = budget;
            RunOptions run = on_cpu(path, threads);
            run.max_pairs = 10;
            double last = 0;
            bool backwards = false;
            run.progress = [&](double f) {
              backwards = backwards || f < last || f > 1.0;
              last = f;
            };
            const KernelSums s = kernel_regression(A, pb, ya, yB, o, box, run);
            expect_same_bits(s, one);
            EXPECT_FALSE(backwards);
            if (budget <= 4000) {
              EXPECT_GT(s.runs, 1u) << s.info.plan;
              EXPECT_NE(s.info.plan.find("pair-list runs over chunks"), std::string::npos) << s.info.plan;
            }
          }
    }
}

TEST(Kde, BadOptionsAreConfigErrors) {
  std::mt19937_64 rng(fresh_seed());
  const PointSet A = to_pointset(uniform_points(30, 3, 0, 1, rng, false));
  const PointSet W = to_pointset(uniform_points(30, 3, 0, 1, rng, true));
  const auto config_error = [&](const KdeOptions& o, const std::string& says, const std::optional<Box>& box = {},
                                const PointSet* p = nullptr) {
    try {
      kernel_sums(p ? *p : W, nullptr, o, box, on_cpu());
      ADD_FAILURE() << "no error for: " << says;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Config) << e.what();
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (double h : {0.0, -1.0, inf, nan}) config_error(kde(KdeKernel::Gaussian, h), "bandwidth must be positive");
  for (double c : {0.0, -0.5, inf, nan}) {
    KdeOptions o = kde(KdeKernel::Epanechnikov, 0.1);
    o.cutoff = c;
    config_error(o, "cutoff must be positive");
  }
  KdeOptions o = kde(KdeKernel::Gaussian, 0.2);
  config_error(o, "kde cutoff 1 (the default 5h) exceeds half the periodic box (0.9)", Box::cube(3, 1.8));
  o.cutoff = 0.95;
  config_error(o, "kde cutoff 0.95 exceeds half the periodic box", Box::cube(3, 1.8));
  o.cutoff.reset();
  o.weighted = true;
  config_error(o, "need a weight for every point", std::nullopt, &A);
  o.weighted = false;
  o.pairs_in_memory = 0;
  config_error(o, "pairs_in_memory");
  EXPECT_THROW(parse_kde_kernel("triangular"), Error);
  EXPECT_EQ(parse_kde_kernel("epanechnikov"), KdeKernel::Epanechnikov);
  const std::vector<double> short_y(29, 1.0), y(30, 1.0);
  EXPECT_THROW(kernel_regression(W, nullptr, short_y, {}, kde(KdeKernel::Gaussian, 0.1), std::nullopt), Error);
  EXPECT_THROW(kernel_regression(W, &W, y, short_y, kde(KdeKernel::Gaussian, 0.1), std::nullopt), Error);
  EXPECT_THROW(kernel_regression(W, nullptr, {}, {}, kde(KdeKernel::Gaussian, 0.1), std::nullopt), Error);
}

TEST(Kde, TableColumnsAndMetadata) {
  std::mt19937_64 rng(fresh_seed());
  const auto a = uniform_points(40, 3, 0, 2, rng, true), b = uniform_points(25, 3, 0, 2, rng, true);
  const auto ya = values_for(a, rng), yb = values_for(b, rng);
  const PointSet A = to_pointset(a), B = to_pointset(b);
  const KernelSums s = kernel_regression(A, &B, ya, yb, kde(KdeKernel::Gaussian, 0.1), std::nullopt, on_cpu());
  const Table t = kde_table(s);
  ASSERT_EQ(t.columns.size(), 4u);
  EXPECT_EQ(t.columns[0].name, "set");
  EXPECT_EQ(t.columns[1].name, "index");
  EXPECT_EQ(t.columns[2].name, "density");
  EXPECT_EQ(t.columns[3].name, "regression");
  EXPECT_EQ(t.rows(), 65u);
  EXPECT_EQ(std::get<std::vector<std::uint64_t>>(t.columns[0].values)[40], 2u);
  EXPECT_EQ(std::get<std::vector<std::uint64_t>>(t.columns[1].values)[40], 0u);
  EXPECT_EQ(t.meta["kernel"], "gaussian");
  EXPECT_EQ(t.meta["cutoff"], 0.5);
  EXPECT_EQ(t.meta["cutoff_rule"], "5h");
  EXPECT_EQ(t.meta["bandwidth"], 0.1);
  EXPECT_EQ(t.meta["backend"], "cpu");
  EXPECT_EQ(t.meta["runs"], 1);
  EXPECT_EQ(t.meta["n_points2"], 25);
  const Table plain = kde_table(kernel_sums(A, nullptr, kde(KdeKernel::Gaussian, 0.1), std::nullopt, on_cpu()));
  ASSERT_EQ(plain.columns.size(), 3u);
  EXPECT_EQ(plain.rows(), 40u);
  // The statistic for explain(): the pair list within the cutoff.
  const Statistic st = kernel_sum_statistic(true, kde(KdeKernel::Epanechnikov, 0.3), Box::cube(3, 2.0));
  EXPECT_EQ(st.traversal, Traversal::Cross);
  EXPECT_EQ(st.metric, Metric::Periodic);
  EXPECT_EQ(st.binning().hi(), 0.3);
}
