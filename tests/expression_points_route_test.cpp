// Pair expressions whose value is the points' distance or its square, run on the built-in point
// paths (src/engine/expression_points_route.hpp): the same counts, bins, per-point counts and
// pairs as the generated function (the same rule written as a sum of the coordinates' terms,
// which the route does not take) and as a float64 brute force, on lattices with pairs exactly on
// the edges, large offsets and random points.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>
#include <vector>

#include "test_support.hpp"
#include "twobody/detail/engine/expression_points_route.hpp"
#include "twobody/expression.hpp"
#include "twobody/pair_table.hpp"

namespace {

using Rows = std::vector<double>;  // n x 3, row-major

twobody::PairTable table_of(const Rows& rows) {
  return twobody::PairTable(twobody::VectorSet::from_rows(rows, rows.size() / 3, 3), {}, {});
}

// Points of a cubic lattice of spacing h (side m), shifted by `offset`: many pairs at distances
// h·sqrt(k), edges at multiples of h/2 are hit exactly.
Rows lattice(int m, double h, double offset) {
  Rows r;
  for (int x = 0; x < m; ++x)
    for (int y = 0; y < m; ++y)
      for (int z = 0; z < m; ++z)
        for (double c : {x * h, y * h, z * h}) r.push_back(offset + c);
  return r;
}

Rows uniform(std::size_t n, double side, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, side);
  Rows r(3 * n);
  for (double& x : r) x = u(rng);
  return r;
}

const char* kDistance = "sqrt(sum((a-b)^2))";
const char* kDistanceByTerms = "sqrt((a[0]-b[0])^2 + (a[1]-b[1])^2 + (a[2]-b[2])^2)";
const char* kSquared = "sum((b-a)*(b-a))";
const char* kSquaredByTerms = "(a[0]-b[0])^2 + (a[1]-b[1])^2 + (a[2]-b[2])^2";

twobody::Result run(const char* text, const twobody::Statistic& s, const twobody::PairTable& a, const twobody::PairTable* b,
                    bool routed) {
  const auto f = twobody::PairExpression::parse(text, a.schema(), b ? &b->schema() : nullptr);
  twobody::RunOptions opt;
  opt.backend = "cpu";
  twobody::Result r = twobody::run_expression(f, s, a, b, opt);
  EXPECT_EQ(r.info.plan.find("route: the value is the points'") != std::string::npos, routed) << text << "\n" << r.info.plan;
  return r;
}

std::vector<std::tuple<std::uint64_t, std::uint64_t, double>> pair_set(const twobody::Result& r, bool is_auto) {
  std::vector<std::tuple<std::uint64_t, std::uint64_t, double>> v;
  for (const auto& p : r.pairs) {
    const std::uint64_t i = is_auto ? std::min(p.i, p.j) : p.i, j = is_auto ? std::max(p.i, p.j) : p.j;
    v.emplace_back(i, j, p.value);
  }
  std::sort(v.begin(), v.end());
  return v;
}

// Every output the route takes, routed and generated, equal.
void expect_same(const char* routed, const char* generated, bool squared, const twobody::PairTable& a,
                 const twobody::PairTable* b, double scale) {
  twobody::Statistic s;
  s.traversal = b ? twobody::Traversal::Cross : twobody::Traversal::Auto;
  const auto both = [&](const twobody::Statistic& st) { return std::make_pair(run(routed, st, a, b, true), run(generated, st, a, b, false)); };
  const double k = squared ? scale * scale : scale;
  s.reduction = twobody::reduce::Histogram{twobody::Binning::linear_values(0, 12 * k, 24)};
  {
    const auto [x, y] = both(s);
    EXPECT_EQ(x.counts, y.counts) << routed;
    std::uint64_t total = 0;
    for (auto c : x.counts) total += c;
    EXPECT_GT(total, 0u);
  }
  s.reduction = twobody::reduce::Count{twobody::Binning::linear_values(k, 5 * k, 1), true};  // [k, 5k]
  {
    const auto [x, y] = both(s);
    EXPECT_EQ(x.counts, y.counts) << routed;
  }
  s.reduction = twobody::reduce::PerPoint{twobody::Binning::linear_values(0, 2 * k, 1), false};
  {
    const auto [x, y] = both(s);
    EXPECT_EQ(x.per_point_a.counts, y.per_point_a.counts) << routed;
    EXPECT_FALSE(x.per_point_a.counts.empty());
    EXPECT_EQ(x.per_point_b.counts, y.per_point_b.counts) << routed;
  }
  if (!squared) {  // a square's pair list stays the generated function's (its values are squares)
    s.reduction = twobody::reduce::PairList{twobody::Binning::linear_values(0, 2 * k, 1), true};
    const auto [x, y] = both(s);
    EXPECT_EQ(pair_set(x, b == nullptr), pair_set(y, b == nullptr)) << routed;
    EXPECT_FALSE(x.pairs.empty());
  }
}

TEST(ExpressionPointsRoute, TheLeastKeyOfARoot) {
  std::mt19937_64 rng(testing_support::fresh_seed());
  std::uniform_real_distribution<double> mantissa(1, 2);
  std::uniform_int_distribution<int> exponent(-500, 500);
  std::vector<double> es = {1, 2, 3, 5, 0.5, 1e-150, 1e150, std::sqrt(2.0), std::nextafter(1.0, 2.0), std::nextafter(1.0, 0.0)};
  for (int k = 0; k < 2000; ++k) es.push_back(std::ldexp(mantissa(rng), exponent(rng)));
  for (double e : es) {
    const double t = twobody::least_key_of_root(e);
    ASSERT_TRUE(std::isfinite(t)) << e;
    EXPECT_GE(std::sqrt(t), e) << e;
    EXPECT_LT(std::sqrt(std::nextafter(t, 0.0)), e) << e;
  }
  EXPECT_TRUE(std::isinf(twobody::least_key_of_root(1e200)));  // no finite square reaches it
}

TEST(ExpressionPointsRoute, LatticesOnTheEdgesAutoAndCross) {
  // Spacing 0.5: distances 0.5·sqrt(k), the edges multiples of 0.5 (squares: multiples of 0.25).
  const Rows l = lattice(7, 0.5, 0);
  const twobody::PairTable t = table_of(l);
  expect_same(kDistance, kDistanceByTerms, false, t, nullptr, 0.5);
  expect_same(kSquared, kSquaredByTerms, true, t, nullptr, 0.5);
  // Cross: the lattice against itself shifted by half a spacing along x.
  Rows m = lattice(6, 0.5, 0);
  for (std::size_t i = 0; i < m.size(); i += 3) m[i] += 0.25;
  const twobody::PairTable u = table_of(m);
  expect_same("norm(a - b)", kDistanceByTerms, false, t, &u, 0.5);
  expect_same(kSquared, kSquaredByTerms, true, t, &u, 0.5);
}

TEST(ExpressionPointsRoute, LargeOffsetsAndRandomPoints) {
  std::mt19937_64 rng(testing_support::fresh_seed());
  const twobody::PairTable offset = table_of(lattice(6, 0.25, 1e6));
  expect_same(kDistance, kDistanceByTerms, false, offset, nullptr, 0.25);
  expect_same(kSquared, kSquaredByTerms, true, offset, nullptr, 0.25);
  const twobody::PairTable random = table_of(uniform(3000, 10, rng));
  expect_same(kDistance, kDistanceByTerms, false, random, nullptr, 0.4);
  expect_same(kSquared, kSquaredByTerms, true, random, nullptr, 0.4);
}

// Predicates on the distance (D < K, D <= K, K > D, K >= D, and the squares): counts and per-point
// counts on a lattice where pairs sit exactly at K, routed and generated equal.
TEST(ExpressionPointsRoute, PredicatesOnTheDistance) {
  const twobody::PairTable t = table_of(lattice(6, 0.5, 0));
  const Rows shifted = lattice(5, 0.5, 0.25);
  const twobody::PairTable u = table_of(shifted);
  struct Case {
    const char *routed, *generated;
  };
  const Case cases[] = {
      {"norm(a - b) < 1.5", "sqrt((a[0]-b[0])^2 + (a[1]-b[1])^2 + (a[2]-b[2])^2) < 1.5"},
      {"sqrt(sum((a-b)^2)) <= 1.5", "sqrt((a[0]-b[0])^2 + (a[1]-b[1])^2 + (a[2]-b[2])^2) <= 1.5"},
      {"1.5 > norm(b - a)", "1.5 > sqrt((a[0]-b[0])^2 + (a[1]-b[1])^2 + (a[2]-b[2])^2)"},
      {"2.25 >= sum((a-b)^2)", "2.25 >= (a[0]-b[0])^2 + (a[1]-b[1])^2 + (a[2]-b[2])^2"},
      {"dot(a-b, a-b) < 2.25", "(a[0]-b[0])^2 + (a[1]-b[1])^2 + (a[2]-b[2])^2 < 2.25"},
  };
  for (const twobody::PairTable* b : {static_cast<const twobody::PairTable*>(nullptr), &u}) {
    twobody::Statistic s;
    s.traversal = b ? twobody::Traversal::Cross : twobody::Traversal::Auto;
    for (const Case& c : cases) {
      s.reduction = twobody::reduce::Count{};
      const auto x = run(c.routed, s, t, b, true), y = run(c.generated, s, t, b, false);
      EXPECT_EQ(x.counts, y.counts) << c.routed;
      EXPECT_GT(x.counts.at(0), 0u);
      s.reduction = twobody::reduce::PerPoint{};
      const auto p = run(c.routed, s, t, b, true), q = run(c.generated, s, t, b, false);
      EXPECT_EQ(p.per_point_a.counts, q.per_point_a.counts) << c.routed;
      EXPECT_EQ(p.per_point_b.counts, q.per_point_b.counts) << c.routed;
    }
  }
  // D <= K and D < K differ by the pairs at exactly K (on this lattice, many).
  twobody::Statistic s;
  s.reduction = twobody::reduce::Count{};
  EXPECT_GT(run("norm(a - b) <= 1.5", s, t, nullptr, true).counts.at(0), run("norm(a - b) < 1.5", s, t, nullptr, true).counts.at(0));
}

// The routed histogram against a float64 brute force of the expression's rule.
TEST(ExpressionPointsRoute, HistogramEqualsAFloat64BruteForce) {
  std::mt19937_64 rng(testing_support::fresh_seed());
  Rows r = lattice(6, 1, 0);
  const Rows extra = uniform(400, 6, rng);
  r.insert(r.end(), extra.begin(), extra.end());
  const twobody::PairTable t = table_of(r);
  const auto bins = twobody::Binning::linear_values(0, 5, 10);
  twobody::Statistic s;
  s.reduction = twobody::reduce::Histogram{bins};
  const auto got = run(kDistance, s, t, nullptr, true);
  std::vector<std::uint64_t> want(10, 0);
  const std::size_t n = r.size() / 3;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      double key = 0;
      for (int d = 0; d < 3; ++d) {
        const double x = r[3 * i + d] - r[3 * j + d];
        key = key + x * x;
      }
      const double v = std::sqrt(key);
      for (int k = 0; k < 10; ++k)
        if (bins.lo(k) <= v && v < bins.hi(k)) ++want[k];
    }
  EXPECT_EQ(got.counts, want);
}

// What the route leaves to the generated function: a --where, sums, a square's pair list, a
// range below zero, coordinates that are not finite.
TEST(ExpressionPointsRoute, WhatItLeavesToTheGeneratedFunction) {
  const twobody::PairTable t = table_of(lattice(4, 1, 0));
  twobody::Statistic s;
  s.reduction = twobody::reduce::Sum{};
  run(kDistance, s, t, nullptr, false);
  s.reduction = twobody::reduce::PairList{twobody::Binning::linear_values(0, 2, 1), false};
  run(kSquared, s, t, nullptr, false);
  s.reduction = twobody::reduce::Histogram{twobody::Binning::linear_values(-1, 2, 3)};
  run(kDistance, s, t, nullptr, false);
  // A coordinate that is not finite (the C++ API's tables take them; the point paths do not): the
  // generated function, which bins it nowhere.
  Rows nan_rows = lattice(3, 1, 0);
  nan_rows[4] = std::nan("");
  const twobody::PairTable with_nan = table_of(nan_rows);
  s.reduction = twobody::reduce::Histogram{twobody::Binning::linear_values(0, 2, 4)};
  EXPECT_EQ(run(kDistance, s, with_nan, nullptr, false).counts, run(kDistanceByTerms, s, with_nan, nullptr, false).counts);
  s.reduction = twobody::reduce::Count{twobody::Binning::linear_values(0, 2, 1), false};
  const auto f = twobody::PairExpression::parse(kDistance, t.schema(), nullptr, {}, "a[0] < b[0]");
  twobody::RunOptions opt;
  opt.backend = "cpu";
  EXPECT_EQ(twobody::run_expression(f, s, t, nullptr, opt).info.plan.find("route:"), std::string::npos);
}

}  // namespace
