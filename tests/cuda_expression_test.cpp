// Pair expressions on the GPU (--backend cuda: the generated kernels, src/cuda/expr) give the
// CPU's results bit for bit: every case of tests/expression_cases.hpp on every data kind (random,
// a lattice on the edges, large offsets, duplicates), auto and cross, every reduction (counts,
// pair lists, per-point counts, histograms, exact sums, per-point sums, minima and maxima), with
// sets that end inside a block of anchors and a tile of partners, on the tiles and, for the
// expressions with a cutoff, on the cell grid; the plan names the generated kernel, and a second
// run reuses the one linked before.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "expression_cases.hpp"
#include "test_support.hpp"
#include "twobody/detail/engine/backend.hpp"
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

}  // namespace
