// run_expression on the CPU against the oracle (tests/oracle/expression_oracle.hpp): every
// reduction, auto and cross, on fresh random points, a lattice whose values fall on the edges,
// points at a large offset, duplicates, and expressions that produce NaN or infinities. Every
// output must equal the oracle's exactly (sums included: both are the exact sum of the values).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "expression_cases.hpp"
#include "oracle/expression_oracle.hpp"
#include "test_support.hpp"
#include "twobody/error.hpp"
#include "twobody/detail/expr/cutoff.hpp"
#include "twobody/expression.hpp"
#include "twobody/extend/pair_function.hpp"

namespace {

using namespace expression_cases;

void check_case(const Case& c, const oracle::Rows& ra, const oracle::Rows* rb, int threads, const char* path = "auto") {
  const twobody::PairTable ta = table_of(ra);
  const twobody::PairTable tb = rb ? table_of(*rb) : twobody::PairTable();
  const twobody::PairTable* b = rb ? &tb : nullptr;
  twobody::ExpressionParams p;
  p.scalars = {{"p", kP}, {"h", kH}};
  const auto f = twobody::PairExpression::parse(c.text, ta.schema(), b ? &tb.schema() : nullptr, p, c.where);
  const auto all = oracle::all_pairs(c.f, ra, rb);
  twobody::RunOptions opt;
  opt.threads = threads;
  opt.path = path;
  twobody::Statistic s;
  s.traversal = b ? twobody::Traversal::Cross : twobody::Traversal::Auto;
  // The range and bins: from the values' own spread, with edges on lattice values.
  double lo = INFINITY, hi = -INFINITY;
  std::vector<double> values;
  for (const auto& v : all) {
    values.push_back(v.v);
    if (v.v == v.v && std::isfinite(v.v)) lo = std::fmin(lo, v.v), hi = std::fmax(hi, v.v);
  }
  if (!(hi > lo)) lo = 0, hi = 1;
  const double rlo = std::floor(lo), rhi = std::ceil((lo + hi) / 2) + 0.5;
  const auto in_range = [&](double v) { return c.predicate ? v == 1.0 : (v >= rlo && v < rhi); };
  const twobody::Binning range = c.predicate ? twobody::Binning() : twobody::Binning::linear_values(rlo, rhi, 1);
  // Count
  s.reduction = twobody::reduce::Count{range};
  std::uint64_t count = 0;
  for (const auto& v : all) count += in_range(v.v);
  EXPECT_EQ(twobody::run_expression(f, s, ta, b, opt).counts.at(0), count) << "count";
  // PairList
  s.reduction = twobody::reduce::PairList{range};
  const auto pairs = twobody::run_expression(f, s, ta, b, opt).pairs;
  std::vector<oracle::Valued> want;
  for (const auto& v : all)
    if (in_range(v.v)) want.push_back(v);
  ASSERT_EQ(pairs.size(), want.size()) << "pairs";
  for (std::size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(pairs[k].i, want[k].i);
    EXPECT_EQ(pairs[k].j, want[k].j);
    EXPECT_EQ(pairs[k].value, want[k].v);
  }
  // PerPoint
  s.reduction = twobody::reduce::PerPoint{range};
  const auto pp = twobody::run_expression(f, s, ta, b, opt);
  std::vector<std::uint64_t> ca(ra.n, 0), cb(rb ? rb->n : 0, 0);
  for (const auto& v : all)
    if (in_range(v.v)) ++ca[v.i], ++(rb ? cb[v.j] : ca[v.j]);
  EXPECT_EQ(pp.per_point_a.counts, ca);
  if (rb) EXPECT_EQ(pp.per_point_b.counts, cb);
  if (c.predicate) return;
  // Histogram: ten bins over [rlo, rhi).
  s.reduction = twobody::reduce::Histogram{twobody::Binning::linear_values(rlo, rhi, 10)};
  const auto edges = twobody::Binning::linear_values(rlo, rhi, 10).edges();
  std::vector<std::uint64_t> h(10, 0);
  for (const auto& v : all)
    for (int k = 0; k < 10; ++k)
      if (v.v >= edges[k] && v.v < edges[k + 1]) ++h[k];
  EXPECT_EQ(twobody::run_expression(f, s, ta, b, opt).counts, h) << "histogram";
  // Sum: the exact sum of the values, and how many there were.
  s.reduction = twobody::reduce::Sum{};
  const auto sum = twobody::run_expression(f, s, ta, b, opt);
  const auto [total, n] = oracle::exact_sum(values);
  EXPECT_EQ(sum.value_sum.at(0), total) << "sum";
  EXPECT_EQ(sum.counts.at(0), n);
  // Per-point sums, minima and maxima.
  for (auto of : {twobody::reduce::PerPointValue::Of::Sum, twobody::reduce::PerPointValue::Of::Min,
                  twobody::reduce::PerPointValue::Of::Max}) {
    s.reduction = twobody::reduce::PerPointValue{of};
    const auto r = twobody::run_expression(f, s, ta, b, opt);
    const auto per_point = [&](std::size_t n_points, bool second) {
      std::vector<std::vector<double>> mine(n_points);
      for (const auto& v : all) {
        if (v.v != v.v) continue;
        if (!second) mine[v.i].push_back(v.v);
        if (second || !rb) mine[v.j].push_back(v.v);
      }
      double m = 0;
      for (double x : values)
        if (x == x) m = std::fmax(m, std::fabs(x));
      const twobody::SumGrid g = twobody::SumGrid::for_bound(m);
      std::vector<double> out(n_points);
      for (std::size_t k = 0; k < n_points; ++k) {
        if (of == twobody::reduce::PerPointValue::Of::Sum) {
          twobody::FixedSum t = 0;
          for (double x : mine[k]) t += g.steps(x);
          out[k] = g.value(t);
        } else if (mine[k].empty()) {
          out[k] = kNone;
        } else {
          double e = mine[k][0];
          for (double x : mine[k]) {
            const bool smaller = x < e || (x == e && std::signbit(x) && !std::signbit(e));
            const bool larger = x > e || (x == e && !std::signbit(x) && std::signbit(e));
            if (of == twobody::reduce::PerPointValue::Of::Min ? smaller : larger) e = x;
          }
          out[k] = e;
        }
      }
      return out;
    };
    const auto same = [](const std::vector<double>& x, const std::vector<double>& y) {
      if (x.size() != y.size()) return false;
      for (std::size_t k = 0; k < x.size(); ++k)
        if (!(x[k] == y[k] || (std::isnan(x[k]) && std::isnan(y[k])))) return false;
      return true;
    };
    EXPECT_TRUE(same(r.per_point_a.values, per_point(ra.n, false))) << "per-point values " << static_cast<int>(of);
    if (rb) EXPECT_TRUE(same(r.per_point_b.values, per_point(rb->n, true))) << "per-point values b";
  }
}

TEST(ExpressionRun, EveryOutputEqualsTheOracle) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int kind = 0; kind < 4; ++kind) {
    const oracle::Rows a = make_rows(kind, 150 + rng() % 200, rng);
    const oracle::Rows b = make_rows(kind, 1 + rng() % 300, rng);
    for (const Case& c : cases()) {
      SCOPED_TRACE(std::string(c.text) + " where " + c.where + ", data kind " + std::to_string(kind));
      check_case(c, a, nullptr, 2);
      check_case(c, a, &b, 1 + static_cast<int>(rng() % 3));
      // The cell grid wherever the expression gives a cutoff (src/expr/cutoff.hpp): the same results.
      check_case(c, a, nullptr, 1 + static_cast<int>(rng() % 3), "grid");
      check_case(c, a, &b, 2, "grid");
    }
  }
}

// Which expressions are symmetric bit for bit (src/expr/cutoff.hpp's is_symmetric).
TEST(ExpressionRun, SymmetricExpressions) {
  twobody::Schema s;
  s.dim = 3;
  s.names = {"t", "q"};
  s.exact_in_float32 = {false, false};
  twobody::ExpressionParams p;
  p.scalars = {{"h", 0.5}, {"p", 3}};
  const auto symmetric = [&](const char* text, const char* where = "") {
    return twobody::expr::is_symmetric(twobody::PairExpression::parse(text, s, nullptr, p, where).compiled());
  };
  for (const char* text : {"sqrt(sum((a-b)^2))", "a.t * b.t / norm(a - b)", "exp(-dot(a-b, a-b)/h)",
                           "abs(a[0] - b[0]) + abs(b[1] - a[1])", "a.t + b.t", "(a.t - b.t)^2", "a.t == b.t",
                           "sum(abs(a - b)^p)^(1/p)", "(b.q - a.q) * (b.q - a.q) + (a.t * b.q + b.t * a.q)",
                           "a.t > b.t or b.t > a.t"})
    EXPECT_TRUE(symmetric(text)) << text;
  EXPECT_TRUE(symmetric("a.q * b.q", "norm(b - a) < h and a.t == b.t"));
  for (const char* text : {"a.t - b.t", "a.t < b.t", "min(a.t, b.t)", "a[0] * b[1]", "(a.t - b.t)^3", "dot(a, b - a)",
                           "abs(a.t) - abs(b.t)", "a.t / norm(a - b)",
                           "a.t * b.t + a.t * b.q + b.t * a.q"})  // ((s + x) + y) swaps to ((s + y) + x): not the same bits
    EXPECT_FALSE(symmetric(text)) << text;
  EXPECT_FALSE(symmetric("a.q * b.q", "a.t < b.t"));
}

// Which expressions give a cutoff, and the plan says the grid was taken and why.
TEST(ExpressionRun, CutoffsAndTheGridInThePlan) {
  std::mt19937_64 rng(testing_support::fresh_seed());
  const oracle::Rows r = make_rows(0, 3000, rng);
  const twobody::PairTable t = table_of(r);
  twobody::ExpressionParams p;
  p.scalars = {{"h", 0.25}};
  twobody::Statistic s;
  s.reduction = twobody::reduce::Sum{};
  const auto plan = [&](const char* text, const char* where, const twobody::Statistic& st) {
    return twobody::explain_expression(twobody::PairExpression::parse(text, t.schema(), nullptr, p, where), st, t, nullptr);
  };
  // A --where on the distance: the grid pays at 3000 points in a box of 4 with a cutoff of 0.25.
  EXPECT_NE(plan("a.t * b.t", "norm(a - b) < h", s).find("cpu kernel: a cell grid: the cutoff 0.25 "), std::string::npos)
      << plan("a.t * b.t", "norm(a - b) < h", s);
  EXPECT_NE(plan("a.t * b.t", "a.t > 0 and h >= sqrt(sum((a - b)*(a - b)))", s).find("a cell grid"), std::string::npos);
  EXPECT_NE(plan("a.t", "sum((b-a)^2) < h^2", s).find("the cutoff 0.25 "), std::string::npos);
  // None: an or, a part of the coordinates, a bound of the wrong side, a row-dependent bound.
  for (const char* where : {"norm(a - b) < h or a.t > 1", "sqrt((a[0]-b[0])^2 + (a[1]-b[1])^2) < h", "norm(a - b) > h",
                            "norm(a - b) < a.t", "norm(a - b) < -1"})
    EXPECT_NE(plan("a.t * b.t", where, s).find("no cutoff"), std::string::npos) << where;
  // A value that is the distance, binned below hi: its pairs are within hi. (Written as sums of
  // the coordinates' terms: sum((a-b)^2) and its root take the built-in point paths instead.)
  const char* distance = "sqrt((a[0]-b[0])^2 + (a[1]-b[1])^2 + (a[2]-b[2])^2)";
  const char* squared = "(a[0]-b[0])^2 + (a[1]-b[1])^2 + (a[2]-b[2])^2";
  s.reduction = twobody::reduce::Histogram{twobody::Binning::linear_values(0, 0.3, 6)};
  EXPECT_NE(plan(distance, "", s).find("the cutoff 0.3"), std::string::npos);
  EXPECT_NE(plan("sqrt(sum((a-b)^2))", "", s).find("route: the value is the points' Euclidean distance"), std::string::npos);
  s.reduction = twobody::reduce::Count{twobody::Binning::linear_values(0, 0.09, 1)};
  EXPECT_NE(plan(squared, "", s).find("the cutoff 0.3"), std::string::npos);
  EXPECT_NE(plan("dot(a - b, a - b)", "", s).find("route: the value is the points' squared Euclidean distance"),
            std::string::npos);
  // A symmetric expression's auto run takes the half shell; an asymmetric one both orientations.
  s.reduction = twobody::reduce::Sum{};
  EXPECT_NE(plan("a.t * b.t / norm(a - b)", "norm(a - b) < h", s).find("the half shell"), std::string::npos);
  EXPECT_NE(plan("a.t / norm(a - b)", "norm(a - b) < h", s).find("both orientations"), std::string::npos);
  // Brute force when asked, and the same counts.
  s.reduction = twobody::reduce::Count{twobody::Binning::linear_values(0, 0.09, 1)};
  twobody::RunOptions brute, grid;
  brute.path = "brute";
  grid.path = "grid";
  const auto f = twobody::PairExpression::parse(squared, t.schema(), nullptr, p);
  const auto x = twobody::run_expression(f, s, t, nullptr, brute), y = twobody::run_expression(f, s, t, nullptr, grid);
  EXPECT_EQ(x.counts, y.counts);
  EXPECT_NE(x.info.plan.find("brute-force tiles (requested)"), std::string::npos) << x.info.plan;
  EXPECT_NE(y.info.plan.find("a cell grid"), std::string::npos) << y.info.plan;
  EXPECT_LT(y.info.pairs_evaluated, x.info.pairs_evaluated / 4);
  twobody::RunOptions bad;
  bad.path = "tree";
  EXPECT_THROW(twobody::run_expression(f, s, t, nullptr, bad), twobody::Error);
  twobody::RunOptions hybrid;
  hybrid.backend = "hybrid";
  testing_support::expect_error(twobody::ErrorKind::Backend, "on one GPU", [&] { twobody::run_expression(f, s, t, nullptr, hybrid); });
}

// auto: the CPU for a run it estimates within the GPU's start-up and link, and the plan says so;
// beyond that the GPU where one runs generated kernels (this explanation starts no run).
TEST(ExpressionRun, AutoWeighsTheGpuByTheCpusEstimate) {
  std::mt19937_64 rng(testing_support::fresh_seed());
  twobody::Statistic s;
  s.reduction = twobody::reduce::Sum{};
  const auto explain = [&](std::size_t n, const char* where) {
    const twobody::PairTable t = table_of(make_rows(0, n, rng));
    return twobody::explain_expression(twobody::PairExpression::parse("exp(-dot(a-b, a-b)) * a.t", t.schema(), nullptr, {}, where),
                                       s, t, nullptr);
  };
  EXPECT_NE(explain(500, "").find("auto: the cpu (the cpu's estimate about"), std::string::npos) << explain(500, "");
  const std::string large = explain(200000, "");
  EXPECT_TRUE(large.find("auto: the GPU (the cpu's estimate") != std::string::npos ||
              large.find("no GPU for generated kernels") != std::string::npos)
      << large;
  // A cutoff that leaves few pairs to evaluate keeps it on the CPU.
  EXPECT_NE(explain(200000, "norm(a - b) < 0.01").find("within the 3 s"), std::string::npos);
}

// A generated sum((a-b)^2) is the built-in Euclidean key, bit for bit.
TEST(ExpressionRun, SquaredDistanceIsTheBuiltInKey) {
  std::mt19937_64 rng(testing_support::fresh_seed());
  oracle::Rows r = make_rows(0, 200, rng);
  const twobody::PairTable t = table_of(r);
  const auto f = twobody::PairExpression::parse("sum((a-b)^2)", t.schema());
  twobody::Statistic s;
  s.reduction = twobody::reduce::PairList{twobody::Binning::linear_values(0, 1e9, 1)};
  const auto pairs = twobody::run_expression(f, s, t, nullptr).pairs;
  ASSERT_EQ(pairs.size(), 200u * 199 / 2);
  for (const auto& p : pairs) EXPECT_EQ(p.value, twobody::Euclidean<3>{}.key(r.row(p.i), r.row(p.j)));
}

TEST(ExpressionRun, SumsAreTheSameOnAnyThreadCount) {
  std::mt19937_64 rng(testing_support::fresh_seed());
  const oracle::Rows r = make_rows(0, 700, rng);
  const twobody::PairTable t = table_of(r);
  const auto f = twobody::PairExpression::parse("exp(-dot(a-b, a-b)) * a.t - b.x", t.schema());
  twobody::Statistic s;
  s.reduction = twobody::reduce::Sum{};
  twobody::RunOptions one, three;
  one.threads = 1;
  three.threads = 3;
  EXPECT_EQ(twobody::run_expression(f, s, t, nullptr, one).value_sum, twobody::run_expression(f, s, t, nullptr, three).value_sum);
}

TEST(ExpressionRun, ClearErrors) {
  std::mt19937_64 rng(1);
  const oracle::Rows r = make_rows(0, 20, rng);
  const twobody::PairTable t = table_of(r);
  twobody::Statistic s;
  const auto kind_of = [&](const char* text, twobody::Reduction red) {
    s.reduction = red;
    try {
      twobody::run_expression(twobody::PairExpression::parse(text, t.schema()), s, t, nullptr);
    } catch (const twobody::Error& e) {
      return e.kind();
    }
    return twobody::ErrorKind::Internal;
  };
  using twobody::ErrorKind;
  EXPECT_EQ(kind_of("1 / (a.t - b.t)^0", twobody::reduce::Sum{}), ErrorKind::Internal);  // x^0 = 1: fine
  EXPECT_EQ(kind_of("1 / (a.x - a.x + b.x - b.x)", twobody::reduce::Sum{}), ErrorKind::Input);  // infinite values
  EXPECT_EQ(kind_of("a.x - b.x", twobody::reduce::Count{}), ErrorKind::Config);  // a value needs a range
  EXPECT_EQ(kind_of("a.x < b.x", twobody::reduce::Histogram{twobody::Binning::linear(0, 1, 2)}), ErrorKind::Config);
  EXPECT_EQ(kind_of("a.x < b.x", twobody::reduce::Sum{}), ErrorKind::Config);
  EXPECT_EQ(kind_of("a.x - b.x", twobody::reduce::Matrix{}), ErrorKind::Config);
  twobody::RunOptions cuda;
  cuda.backend = "cuda";
  s.reduction = twobody::reduce::Sum{};
  EXPECT_THROW(twobody::run_expression(twobody::PairExpression::parse("a.x", t.schema()), s, t, nullptr, cuda), twobody::Error);
  // A table other than the one the expression was parsed for.
  const twobody::PairTable other(twobody::VectorSet::from_rows(r.x, r.n, 3), {}, {});
  EXPECT_THROW(twobody::run_expression(twobody::PairExpression::parse("a.x - b.x", t.schema()), s, other, nullptr), twobody::Error);
}

}  // namespace
