// Pair expressions on the GPU (--backend cuda: the generated kernels, src/cuda/expr) give the
// CPU's results bit for bit: every case of tests/expression_cases.hpp on every data kind (random,
// a lattice on the edges, large offsets, duplicates), auto and cross, every reduction (counts,
// pair lists, per-point counts, histograms, exact sums, per-point sums, minima and maxima), with
// sets that end inside a block of anchors and a tile of partners, on the tiles and, for the
// expressions with a cutoff, on the cell grid; the plan names the generated kernel, and a second
// run reuses the one linked before.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <tuple>
#include <random>

#include "expression_cases.hpp"
#include "test_support.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/device_memory.hpp"
#include "twobody/expression.hpp"

namespace {

using namespace expression_cases;

bool same_bits(double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0 || (x != x && y != y); }

void expect_same(const twobody::Result& cpu, const twobody::Result& gpu, const std::string& what) {
  EXPECT_EQ(cpu.counts, gpu.counts) << what;
  ASSERT_EQ(cpu.pairs.size(), gpu.pairs.size()) << what;
  for (std::size_t k = 0; k < cpu.pairs.size(); ++k) {
    ASSERT_EQ(cpu.pairs[k].i, gpu.pairs[k].i) << what << " pair " << k;
    ASSERT_EQ(cpu.pairs[k].j, gpu.pairs[k].j) << what << " pair " << k;
    ASSERT_TRUE(same_bits(cpu.pairs[k].value, gpu.pairs[k].value)) << what << " pair " << k;
  }
  EXPECT_EQ(cpu.per_point_a.counts, gpu.per_point_a.counts) << what;
  EXPECT_EQ(cpu.per_point_b.counts, gpu.per_point_b.counts) << what;
  const auto same_all = [&](const std::vector<double>& x, const std::vector<double>& y, const char* name) {
    ASSERT_EQ(x.size(), y.size()) << what << " " << name;
    for (std::size_t k = 0; k < x.size(); ++k) ASSERT_TRUE(same_bits(x[k], y[k])) << what << " " << name << "[" << k << "]";
  };
  same_all(cpu.value_sum, gpu.value_sum, "value_sum");
  same_all(cpu.per_point_a.values, gpu.per_point_a.values, "per_point_a.values");
  same_all(cpu.per_point_b.values, gpu.per_point_b.values, "per_point_b.values");
  EXPECT_TRUE(cpu.exact.value_sum == gpu.exact.value_sum) << what;
  EXPECT_TRUE(cpu.exact.point_value_a == gpu.exact.point_value_a) << what;
  EXPECT_TRUE(cpu.exact.point_value_b == gpu.exact.point_value_b) << what;
  EXPECT_EQ(gpu.info.backend, "cuda") << what;
}

class CudaExpression : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!twobody::make_cuda_backend()) GTEST_SKIP() << "no CUDA backend or device";
    ASSERT_EQ(twobody::expression_gpu_unavailable(), "") << "the GPU suite needs NVRTC and nvJitLink";
  }
};

TEST_F(CudaExpression, EveryCaseEveryReductionEqualsTheCpu) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  twobody::RunOptions cpu, gpu;
  cpu.backend = "cpu";
  gpu.backend = "cuda";
  twobody::RunOptions gpu_grid = gpu;
  gpu_grid.path = "grid";
  for (int kind = 0; kind < 4; ++kind) {
    // 300 anchors: two full blocks and part of a third; 1100 partners: two tiles and part of a third.
    const oracle::Rows ra = make_rows(kind, 300, rng), rb = make_rows(kind, 1100, rng);
    const twobody::PairTable ta = table_of(ra), tb = table_of(rb);
    for (const Case& c : cases()) {
      for (const bool cross : {false, true}) {
        const std::string what = std::string(c.text) + " where " + c.where + ", kind " + std::to_string(kind) +
                                 (cross ? ", cross" : ", auto");
        SCOPED_TRACE(what);
        twobody::ExpressionParams p;
        p.scalars = {{"p", kP}, {"h", kH}};
        const twobody::PairTable* b = cross ? &tb : nullptr;
        const auto f = twobody::PairExpression::parse(c.text, ta.schema(), b ? &tb.schema() : nullptr, p, c.where);
        twobody::Statistic s;
        s.traversal = cross ? twobody::Traversal::Cross : twobody::Traversal::Auto;
        // A range from the values of a CPU histogram's first pass: [0, 3) catches lattice edges.
        const twobody::Binning range = c.predicate ? twobody::Binning() : twobody::Binning::linear_values(-1, 3, 1);
        std::vector<twobody::Reduction> reductions = {
            twobody::reduce::Count{range}, twobody::reduce::PairList{range}, twobody::reduce::PerPoint{range}};
        if (!c.predicate) {
          reductions.push_back(twobody::reduce::Histogram{twobody::Binning::linear_values(-4, 6, 40)});
          reductions.push_back(twobody::reduce::Histogram{twobody::Binning::linear_values(-4, 6, 12000)});  // global counts
          reductions.push_back(twobody::reduce::Sum{});
          reductions.push_back(twobody::reduce::PerPointValue{twobody::reduce::PerPointValue::Of::Sum});
          reductions.push_back(twobody::reduce::PerPointValue{twobody::reduce::PerPointValue::Of::Min});
          reductions.push_back(twobody::reduce::PerPointValue{twobody::reduce::PerPointValue::Of::Max});
        }
        for (std::size_t r = 0; r < reductions.size(); ++r) {
          s.reduction = reductions[r];
          twobody::Result want, got;
          try {
            want = twobody::run_expression(f, s, ta, b, cpu);
          } catch (const twobody::Error& e) {
            // (an infinite value's sum): the GPU refuses it the same way
            EXPECT_THROW(twobody::run_expression(f, s, ta, b, gpu), twobody::Error) << e.what();
            continue;
          }
          got = twobody::run_expression(f, s, ta, b, gpu);
          expect_same(want, got, what + ", reduction " + std::to_string(r));
          // The cell grid wherever the expression gives a cutoff (the tiles elsewhere): the same.
          expect_same(want, twobody::run_expression(f, s, ta, b, gpu_grid), what + ", grid, reduction " + std::to_string(r));
        }
      }
    }
  }
}

TEST_F(CudaExpression, SmallSetsThePlanAndTheKernelCache) {
  std::mt19937_64 rng(testing_support::fresh_seed());
  twobody::RunOptions cpu, gpu;
  cpu.backend = "cpu";
  gpu.backend = "cuda";
  twobody::Statistic s;
  s.reduction = twobody::reduce::Sum{};
  for (std::size_t n : {2, 3, 127, 128, 129, 513}) {
    const oracle::Rows r = make_rows(0, n, rng);
    const twobody::PairTable t = table_of(r);
    const auto f = twobody::PairExpression::parse("sqrt(sum((a - b)^2)) * a.t", t.schema());
    const auto want = twobody::run_expression(f, s, t, nullptr, cpu);
    const auto got = twobody::run_expression(f, s, t, nullptr, gpu);
    expect_same(want, got, "n " + std::to_string(n));
    EXPECT_NE(got.info.plan.find("nvJitLink"), std::string::npos) << got.info.plan;
    EXPECT_NE(twobody::explain_expression(f, s, t, nullptr, gpu).find("linked earlier in this process"), std::string::npos);
  }
}

}  // namespace

namespace {

// 2·10^5 points with a --where on the distance: auto takes the grid, with the CPU's sum and
// per-point counts and far fewer evaluations.
TEST_F(CudaExpression, TheGridPaysAndAgrees) {
  std::mt19937_64 rng(testing_support::fresh_seed());
  const oracle::Rows r = make_rows(0, 200000, rng);
  const twobody::PairTable t = table_of(r);
  const auto f = twobody::PairExpression::parse("a.t * b.t / (1 + sum((a-b)^2))", t.schema(), nullptr, {}, "norm(a - b) < 0.1");
  twobody::RunOptions cpu, gpu;
  cpu.backend = "cpu";
  gpu.backend = "cuda";
  twobody::Statistic s;
  s.reduction = twobody::reduce::Sum{};
  const auto want = twobody::run_expression(f, s, t, nullptr, cpu), got = twobody::run_expression(f, s, t, nullptr, gpu);
  expect_same(want, got, "sum");
  EXPECT_NE(got.info.plan.find("traversal: a cell grid"), std::string::npos) << got.info.plan;
  EXPECT_LT(got.info.pairs_evaluated, 200000ull * 199999 / 2 / 100);
  s.reduction = twobody::reduce::PerPointValue{twobody::reduce::PerPointValue::Of::Max};
  expect_same(twobody::run_expression(f, s, t, nullptr, cpu), twobody::run_expression(f, s, t, nullptr, gpu), "per-point max");
}

// The distance itself (and predicates on it) on the built-in point paths, on the GPU: the counting
// tiles (equal-width histograms), the FP64 tensor-core histogram, the tensor-core counts, the
// generic agent and the pair pool, on key edges t(e), give the CPU's bins and the GPU's generated
// function's (the same rule written term by term), on a lattice with pairs exactly on the edges,
// with large offsets, auto and cross; and in chunks under a device-memory budget.
TEST_F(CudaExpression, TheDistanceOnThePointPathsEqualsTheCpuAndTheGeneratedFunction) {
  const auto lattice = [](int m, double h, double offset) {
    std::vector<double> r;
    for (int x = 0; x < m; ++x)
      for (int y = 0; y < m; ++y)
        for (int z = 0; z < m; ++z)
          for (double c : {x * h, y * h, z * h}) r.push_back(offset + c);
    return twobody::PairTable(twobody::VectorSet::from_rows(r, r.size() / 3, 3), {}, {});
  };
  const twobody::PairTable t = lattice(24, 0.5, 0), far = lattice(12, 0.25, 1e6), u = lattice(20, 0.5, 0.25);
  twobody::RunOptions cpu, gpu;
  cpu.backend = "cpu";
  gpu.backend = "cuda";
  const char* routed_distance = "sqrt(sum((a-b)^2))";
  const char* generated_distance = "sqrt((a[0]-b[0])^2 + (a[1]-b[1])^2 + (a[2]-b[2])^2)";
  const auto check = [&](const char* routed, const char* generated, const twobody::Statistic& s, const twobody::PairTable& a,
                         const twobody::PairTable* b, const std::string& what) {
    const auto parse = [&](const char* text) { return twobody::PairExpression::parse(text, a.schema(), b ? &b->schema() : nullptr); };
    // (pair lists compared as sets: the paths may list them in different orders)
    const auto run = [&](const char* text, const twobody::RunOptions& o) {
      twobody::Result r = twobody::run_expression(parse(text), s, a, b, o);
      std::sort(r.pairs.begin(), r.pairs.end(), [](const auto& x, const auto& y) { return std::tie(x.i, x.j) < std::tie(y.i, y.j); });
      return r;
    };
    const auto on_gpu = run(routed, gpu);
    EXPECT_NE(on_gpu.info.plan.find("route: the value is the points'"), std::string::npos) << what << on_gpu.info.plan;
    expect_same(run(routed, cpu), on_gpu, what + " (cpu, routed)");
    expect_same(run(generated, gpu), on_gpu, what + " (gpu, generated)");
  };
  for (const twobody::PairTable* b : {static_cast<const twobody::PairTable*>(nullptr), &u}) {
    twobody::Statistic s;
    s.traversal = b ? twobody::Traversal::Cross : twobody::Traversal::Auto;
    const std::string side = b ? "cross" : "auto";
    for (const int bins : {10, 50, 400}) {  // edges at multiples of 0.5, 0.1 and 0.025 out to 5 (and all pairs)
      s.reduction = twobody::reduce::Histogram{twobody::Binning::linear_values(0, 5, static_cast<std::size_t>(bins))};
      check(routed_distance, generated_distance, s, t, b, side + " histogram " + std::to_string(bins));
      s.reduction = twobody::reduce::Histogram{twobody::Binning::linear_values(0, 21, static_cast<std::size_t>(bins))};
      check(routed_distance, generated_distance, s, t, b, side + " histogram of every pair " + std::to_string(bins));
    }
    s.reduction = twobody::reduce::Count{twobody::Binning::linear_values(0.5, 2, 1), true};
    check(routed_distance, generated_distance, s, t, b, side + " count [0.5, 2]");
    s.reduction = twobody::reduce::PerPoint{twobody::Binning::linear_values(0, 1.5, 1), false};
    check("norm(a - b)", generated_distance, s, t, b, side + " per point [0, 1.5)");
    s.reduction = twobody::reduce::PairList{twobody::Binning::linear_values(0, 1, 1), true};
    check(routed_distance, generated_distance, s, t, b, side + " pairs [0, 1]");
    s.reduction = twobody::reduce::Histogram{twobody::Binning::linear_values(0, 9, 36)};
    check("sum((a-b)^2)", "(a[0]-b[0])^2 + (a[1]-b[1])^2 + (a[2]-b[2])^2", s, t, b, side + " squared");
    s.reduction = twobody::reduce::Count{};
    check("norm(a - b) <= 1.5", "sqrt((a[0]-b[0])^2 + (a[1]-b[1])^2 + (a[2]-b[2])^2) <= 1.5", s, t, b, side + " predicate");
  }
  twobody::Statistic s;
  s.reduction = twobody::reduce::Histogram{twobody::Binning::linear_values(0, 2, 16)};
  check(routed_distance, generated_distance, s, far, nullptr, "offset 1e6");
  // In chunks under a budget of device memory: the same bins.
  const twobody::PairTable big = lattice(70, 0.5, 0);
  s.reduction = twobody::reduce::Histogram{twobody::Binning::linear_values(0, 3, 12)};
  const auto f = twobody::PairExpression::parse(routed_distance, big.schema());
  const auto whole = twobody::run_expression(f, s, big, nullptr, gpu);
  twobody::set_device_memory_limit(16u << 20);
  const auto budget = twobody::run_expression(f, s, big, nullptr, gpu);
  twobody::set_device_memory_limit(0);
  EXPECT_NE(budget.info.plan.find("in chunks"), std::string::npos) << budget.info.plan;
  EXPECT_EQ(budget.counts, whole.counts);
  EXPECT_EQ(whole.counts, twobody::run_expression(f, s, big, nullptr, cpu).counts);
}

}  // namespace
