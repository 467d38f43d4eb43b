// The GEMM route of the dot-like matrix kernels, on the host (the GPU suite runs it on cuBLAS):
// - the prepared rows (engine/gemm_rows.hpp) with a dot product summed in the rule's order give
//   dot's, cosine's and pearson's entries bit for bit (spearman is pearson of the ranks; the
//   distances' settled entries are the rule's own loop), so the route differs from the rule only in
//   the GEMM's summation order;
// - the distances' bound (exact/gemm_bounds.hpp) holds against the true distance (long double)
//   when the dot product is off by as much as any summation order may put it (γ_d Σ|x y|, both
//   signs, and other orders), on Gaussian rows, near duplicates, huge offsets and lattices, and
//   the entries it cannot cover are flagged for settling.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <cstring>
#include <string>
#include <random>
#include <vector>

#include "test_support.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/engine/gemm_matrix_run.hpp"
#include "twobody/detail/engine/gemm_rows.hpp"
#include "twobody/detail/exact/gemm_bounds.hpp"
#include "twobody/matrices.hpp"

namespace {

using twobody::GemmForm;
using twobody::VectorSet;

VectorSet rows_of(const std::vector<std::vector<double>>& r) {
  std::vector<double> flat;
  for (const auto& x : r) flat.insert(flat.end(), x.begin(), x.end());
  return VectorSet::from_rows(std::move(flat), r.size(), static_cast<int>(r[0].size()));
}

double ordered_dot(const double* x, const double* y, int d) {
  double s = 0;
  for (int k = 0; k < d; ++k) s += x[k] * y[k];
  return s;
}

TEST(GemmRows, WithTheRulesOrderEveryNamedKernelIsTheRulesBits) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0, 1);
  const int d = 97;
  std::vector<std::vector<double>> r(41, std::vector<double>(d));
  for (std::size_t i = 0; i < r.size(); ++i)
    for (double& v : r[i]) v = (i % 3 == 0 ? 1e6 : 1) + g(rng) * (i % 5 == 0 ? 1e-3 : 1);
  r[7] = r[3];  // a duplicate
  const VectorSet v = rows_of(r);
  for (const char* kernel : {"dot", "cosine", "pearson"}) {
    SCOPED_TRACE(kernel);
    twobody::MatrixOptions m;
    m.kernel = kernel;
    const auto rule = twobody::vector_matrix(v, nullptr, m, testing_support::on("cpu"));
    const GemmForm f = *twobody::gemm_form(kernel);
    const twobody::GemmRows p = twobody::make_gemm_rows(v, f, {}, 2);
    for (std::size_t i = 0; i < v.size(); ++i)
      for (std::size_t j = 0; j < v.size(); ++j) {
        const double dot = ordered_dot(&p.rows[i * d], &p.rows[j * d], d);
        const double value = f == GemmForm::Dot      ? dot
                             : f == GemmForm::Cosine ? 1 - dot / (p.scale[i] * p.scale[j])
                                                     : dot / (p.scale[i] * p.scale[j]);
        ASSERT_EQ(std::memcmp(&value, &rule.values[i * v.size() + j], sizeof(double)), 0)
            << i << ", " << j << ": " << value << " vs " << rule.values[i * v.size() + j];
      }
  }
}

// The distances' raw rows: the set's own float64 rows where contiguous (no copy), else the rows
// promoted (float32) or gathered (a strided view), the same values either way.
TEST(GemmRows, RawRowsAreTheSetsOwnWhereContiguous) {
  std::vector<double> x(6 * 5);
  for (std::size_t k = 0; k < x.size(); ++k) x[k] = 0.25 * static_cast<double>(k) - 3;
  const VectorSet f64 = VectorSet::from_rows(x, 6, 5);
  const twobody::GemmRows own = twobody::make_gemm_rows(f64, GemmForm::Distance, std::vector<double>(5, 0.5), 2);
  EXPECT_TRUE(own.raw.empty());
  EXPECT_EQ(own.raw_rows(), static_cast<const double*>(f64.row(0)));
  EXPECT_EQ(own.raw_size(), 30u);
  const std::vector<float> xf(x.begin(), x.end());
  const VectorSet f32 = VectorSet::from_rows(xf, 6, 5);
  const auto strided_owner = std::make_shared<std::vector<double>>(x);
  // rows 0, 2, 4 of the 6 x 5 array, each 10 elements apart
  const VectorSet strided = VectorSet::borrow(strided_owner->data(), twobody::Element::F64, 3, 5, 10, strided_owner);
  for (const VectorSet* v : {&f32, &strided}) {
    const twobody::GemmRows copy = twobody::make_gemm_rows(*v, GemmForm::SquaredDistance, std::vector<double>(5, 0.5), 2);
    EXPECT_EQ(copy.raw_view, nullptr);
    ASSERT_EQ(copy.raw_size(), v->size() * 5);
    for (std::size_t i = 0; i < v->size(); ++i) {
      std::vector<double> row(5);
      v->row_f64(i, row.data());
      for (int k = 0; k < 5; ++k) EXPECT_EQ(copy.raw_rows()[i * 5 + k], row[k]);
    }
  }
  EXPECT_EQ(twobody::make_gemm_rows(f64, GemmForm::Cosine, {}, 2).raw_size(), 0u);
}

// cuBLAS is opened at run time (the library loads without it): in a CUDA build it is found and
// every function the route calls is bound, with or without a device.
TEST(GemmRows, CublasIsFoundAtRunTimeInACudaBuild) {
  const std::string why = twobody::gemm_route_unavailable();
  if (twobody::cuda_unavailable_reason().find("no CUDA support") != std::string::npos) {
    EXPECT_NE(why, "");
    return;
  }
  EXPECT_EQ(why, "");
}

// The true distance of two rows, in long double (64-bit mantissa: 2^-64 against bounds near 2^-40).
long double true_distance(const std::vector<double>& x, const std::vector<double>& y) {
  long double s = 0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    const long double t = static_cast<long double>(x[k]) - y[k];
    s += t * t;
  }
  return std::sqrt(s);
}

struct Case {
  const char* name;
  std::vector<std::vector<double>> rows;
};

std::vector<Case> cases(std::mt19937_64& rng) {
  std::normal_distribution<double> g(0, 1);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<Case> out;
  const auto make = [&](const char* name, int n, int d, auto gen) {
    Case c{name, std::vector<std::vector<double>>(n, std::vector<double>(d))};
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < d; ++k) c.rows[i][k] = gen(i, k);
    out.push_back(std::move(c));
  };
  make("gaussian d=300", 40, 300, [&](int, int) { return g(rng); });
  make("positive, mean 10 d=1000", 30, 1000, [&](int, int) { return 10 + g(rng); });
  make("near duplicates", 30, 200, [&](int i, int k) { return std::sin(k * 0.37) + (i % 2) * 1e-9 * g(rng); });
  make("huge offset", 30, 64, [&](int, int) { return 1e8 + u(rng); });
  make("lattice", 27, 3 * 25, [&](int i, int k) { return static_cast<double>((i / (k % 3 == 0 ? 1 : k % 3 == 1 ? 3 : 9)) % 3); });
  make("clusters", 40, 128, [&](int i, int) { return (i % 4) * 100.0 + 1e-4 * g(rng); });
  make("d=5", 40, 5, [&](int, int) { return g(rng); });
  make("tiny rows", 20, 64, [&](int, int) { return 1e-158 * g(rng); });
  return out;
}

TEST(GemmBounds, DistancesWithinTheBoundOrFlaggedWhateverTheSummationOrder) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const Case& c : cases(rng)) {
    SCOPED_TRACE(c.name);
    const VectorSet v = rows_of(c.rows);
    const int d = v.dim();
    const std::vector<double> centre = twobody::gemm_centre(v, nullptr, 2);
    for (const GemmForm f : {GemmForm::Distance, GemmForm::SquaredDistance}) {
      const twobody::GemmRows p = twobody::make_gemm_rows(v, f, centre, 2);
      const bool squared = f == GemmForm::SquaredDistance;
      std::size_t covered = 0, flagged = 0;
      for (std::size_t i = 0; i < v.size(); ++i)
        for (std::size_t j = 0; j < v.size(); ++j) {
          const double* x = &p.rows[i * d];
          const double* y = &p.rows[j * d];
          long double exact = 0, abs_sum = 0;
          double reversed = 0;
          for (int k = 0; k < d; ++k) {
            exact += static_cast<long double>(x[k]) * y[k];
            abs_sum += std::fabs(static_cast<long double>(x[k]) * y[k]);
          }
          for (int k = d - 1; k >= 0; --k) reversed += x[k] * y[k];
          const double worst = static_cast<double>(twobody::exact::gemm_gamma(d) * abs_sum);
          const long double truth = true_distance(c.rows[i], c.rows[j]);
          for (const double dot : {ordered_dot(x, y, d), reversed, static_cast<double>(exact + worst),
                                   static_cast<double>(exact - worst)}) {
            const auto r = twobody::exact::gemm_distance(p.scale[i], p.scale[j], dot, d, squared);
            if (r.settle) {
              ++flagged;
              continue;
            }
            ++covered;
            const long double want = squared ? truth * truth : truth;
            const double tol = squared ? twobody::exact::gemm_squared_tolerance(d) : twobody::exact::gemm_distance_tolerance(d);
            ASSERT_GT(want, 0) << i << ", " << j << ": a zero distance was not flagged";
            ASSERT_LE(std::fabs(static_cast<long double>(r.value) - want) / want, tol)
                << i << ", " << j << " dot " << dot << " value " << r.value;
          }
          if (i == j) {
            const auto r = twobody::exact::gemm_distance(p.scale[i], p.scale[j], ordered_dot(x, y, d), d, squared);
            EXPECT_TRUE(r.settle) << "the diagonal is a cancellation: settled";
          }
        }
      // (every case but the ones built to cancel leaves most entries to the GEMM)
      if (std::string(c.name).find("gaussian") != std::string::npos) {
        EXPECT_GT(covered, 5 * flagged) << covered << " covered, " << flagged << " flagged";
      }
      if (std::string(c.name) == "near duplicates") EXPECT_GT(flagged, 0u);
      if (std::string(c.name) == "tiny rows") EXPECT_EQ(covered, 0u) << "rows that may underflow are settled whole";
    }
  }
}

// A × B: one centre for both sets (the mean of their union), sets far apart and of different
// spreads; every covered entry within its bound whatever the dot product's order.
TEST(GemmBounds, CrossSetsShareOneCentre) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0, 1);
  const int d = 150;
  std::vector<std::vector<double>> ra(25, std::vector<double>(d)), rb(17, std::vector<double>(d));
  for (auto& r : ra)
    for (double& v : r) v = 3 + g(rng);
  for (auto& r : rb)
    for (double& v : r) v = 1e3 + 5 * g(rng);
  rb[4] = ra[2];  // a shared row: distance 0, settled
  const VectorSet a = rows_of(ra), b = rows_of(rb);
  const std::vector<double> centre = twobody::gemm_centre(a, &b, 2);
  const twobody::GemmRows pa = twobody::make_gemm_rows(a, GemmForm::Distance, centre, 2);
  const twobody::GemmRows pb = twobody::make_gemm_rows(b, GemmForm::Distance, centre, 2);
  std::size_t covered = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < b.size(); ++j) {
      const double* x = &pa.rows[i * d];
      const double* y = &pb.rows[j * d];
      long double exact = 0, abs_sum = 0;
      for (int k = 0; k < d; ++k) {
        exact += static_cast<long double>(x[k]) * y[k];
        abs_sum += std::fabs(static_cast<long double>(x[k]) * y[k]);
      }
      const double worst = static_cast<double>(twobody::exact::gemm_gamma(d) * abs_sum);
      const long double truth = true_distance(ra[i], rb[j]);
      for (const double dot : {ordered_dot(x, y, d), static_cast<double>(exact + worst), static_cast<double>(exact - worst)}) {
        const auto r = twobody::exact::gemm_distance(pa.scale[i], pb.scale[j], dot, d, false);
        if (i == 2 && j == 4) EXPECT_TRUE(r.settle);
        if (r.settle) continue;
        ++covered;
        ASSERT_LE(std::fabs(static_cast<long double>(r.value) - truth) / truth, twobody::exact::gemm_distance_tolerance(d))
            << i << ", " << j;
      }
    }
  // (b's row 4 sits among a's rows, 17 apart against a centre 400 away: those pairs settle; no other)
  EXPECT_EQ(covered, 3 * a.size() * (b.size() - 1));
}

}  // namespace
