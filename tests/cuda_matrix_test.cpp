// Matrices of vectors and of pair expressions on the GPU (--backend cuda: the generated matrix
// kernel, src/cuda/expr): every named kernel and an expression give the CPU's entries bit for bit
// (matrix_test.cpp tests the CPU's against the float64 rule), A x B and A x A (a symmetric kernel's
// half computed and mirrored), with blocks of rows that end inside the matrix, in memory and into
// .npy; "auto" stays on the CPU and says so; mutual information is refused on the GPU. The GEMM
// route of the dot-like kernels (cuBLAS): every entry within its bound of the CPU's
// (exact/gemm_bounds.hpp), settled entries (the diagonal, duplicates) the CPU's bits, A x A
// symmetric bit for bit, auto's choice by d. Label: gpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <unistd.h>

#include "test_support.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/exact/gemm_bounds.hpp"
#include "twobody/io.hpp"
#include "twobody/matrices.hpp"

namespace {

using twobody::VectorSet;

VectorSet gaussian(std::size_t n, int d, std::mt19937_64& rng, double offset = 0) {
  std::normal_distribution<double> g;
  std::vector<double> x(n * static_cast<std::size_t>(d));
  for (double& v : x) v = offset + g(rng);
  return VectorSet::from_rows(std::move(x), n, d);
}

bool same(const twobody::MatrixValues& x, const twobody::MatrixValues& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
}

TEST(CudaVectorMatrix, EveryKernelEqualsTheCpu) {
  if (!twobody::make_cuda_backend()) GTEST_SKIP() << "no CUDA backend or device";
  ASSERT_EQ(twobody::expression_gpu_unavailable(), "");
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const VectorSet a = gaussian(203, 517, rng), b = gaussian(389, 517, rng, 1e3);
  for (const char* k : {"pearson", "l2", "sqeuclidean", "cosine", "spearman", "dot", "l1", "chebyshev", "lp",
                        "sum(abs(a - b)^3) + max(a * b)"}) {
    for (const bool cross : {false, true}) {
      for (const std::size_t block : {std::size_t{0}, std::size_t{37}}) {
        SCOPED_TRACE(std::string(k) + (cross ? " cross" : " self") + " block " + std::to_string(block));
        twobody::MatrixOptions m;
        m.kernel = k;
        m.p = 3;
        m.block_rows = block;
        m.summation = twobody::MatrixSummation::Ordered;
        const auto cpu = twobody::vector_matrix(a, cross ? &b : nullptr, m, testing_support::on("cpu"));
        const auto gpu = twobody::vector_matrix(a, cross ? &b : nullptr, m, testing_support::on("cuda"));
        EXPECT_EQ(gpu.info.backend, "cuda");
        EXPECT_NE(gpu.info.plan.find("nvJitLink"), std::string::npos) << gpu.info.plan;
        ASSERT_TRUE(same(cpu.values, gpu.values));
      }
    }
  }
}

TEST(CudaVectorMatrix, NpyFilesAutoAndMutualInformation) {
  if (!twobody::make_cuda_backend()) GTEST_SKIP() << "no CUDA backend or device";
  std::mt19937_64 rng(testing_support::fresh_seed());
  const VectorSet a = gaussian(300, 64, rng);
  twobody::MatrixOptions m;
  m.kernel = "cosine";
  m.block_rows = 70;
  m.summation = twobody::MatrixSummation::Ordered;
  const auto host = twobody::vector_matrix(a, nullptr, m, testing_support::on("cuda"));
  const std::filesystem::path file = std::filesystem::temp_directory_path() / ("twobody-cuda-matrix-" + std::to_string(::getpid()) + ".npy");
  m.output = file.string();
  twobody::vector_matrix(a, nullptr, m, testing_support::on("cuda"));
  const VectorSet back = twobody::read_vectors(file.string());
  std::filesystem::remove(file);
  ASSERT_EQ(back.size(), 300u);
  for (std::size_t i = 0; i < 300; ++i) {
    std::vector<double> row(300);
    back.row_f64(i, row.data());
    ASSERT_EQ(0, std::memcmp(row.data(), host.values.data() + i * 300, 300 * sizeof(double))) << "row " << i;
  }
  m.output.clear();
  const auto any = twobody::vector_matrix(a, nullptr, m, testing_support::on("auto"));
  EXPECT_EQ(any.info.backend, "cpu");
  EXPECT_NE(any.info.plan.find("--backend cuda runs a generated GPU kernel"), std::string::npos) << any.info.plan;
  ASSERT_TRUE(same(any.values, host.values));
  m.kernel = "mi";
  testing_support::expect_error(twobody::ErrorKind::Backend, "CPU",
                                [&] { twobody::vector_matrix(a, nullptr, m, testing_support::on("cuda")); });
}

// The largest |gpu − cpu| each kernel's bound allows at (i, j): the route's bound plus the rule's
// own (both are within their bound of the exact value).
double allowed(const std::string& k, const VectorSet& a, const VectorSet& b, std::size_t i, std::size_t j, double cpu) {
  const int d = a.dim();
  namespace ex = twobody::exact;
  if (k == "dot") {
    std::vector<double> x(d), y(d);
    a.row_f64(i, x.data());
    b.row_f64(j, y.data());
    double s = 0;
    for (int t = 0; t < d; ++t) s += std::fabs(x[t] * y[t]);
    return 2.05 * ex::gemm_dot_bound(d) * s;
  }
  if (k == "l2") return 1.01 * (ex::gemm_distance_tolerance(d) + ex::rule_distance_error(d)) * std::fabs(cpu);
  if (k == "sqeuclidean") return 1.01 * (ex::gemm_squared_tolerance(d) + ex::rule_squared_error(d)) * std::fabs(cpu);
  return 2.05 * ex::gemm_unit_bound(d);  // cosine and the correlations, absolute
}

TEST(CudaVectorMatrix, GemmRouteWithinItsBoundsSettledEntriesExact) {
  if (!twobody::make_cuda_backend()) GTEST_SKIP() << "no CUDA backend or device";
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int d = 517;
  VectorSet a = gaussian(203, d, rng, 3), b = gaussian(389, d, rng, 1e3);
  {  // a duplicate row in a, and a row of b that is one of a's: settled, exact zeros
    std::vector<double> x(203 * static_cast<std::size_t>(d)), y(389 * static_cast<std::size_t>(d));
    for (std::size_t i = 0; i < 203; ++i) a.row_f64(i, x.data() + i * d);
    for (std::size_t i = 0; i < 389; ++i) b.row_f64(i, y.data() + i * d);
    std::copy(x.begin() + 5 * d, x.begin() + 6 * d, x.begin() + 100 * d);
    std::copy(x.begin() + 6 * d, x.begin() + 7 * d, x.begin() + 101 * d);  // 1e-7 from row 6: settled
    x[101 * d + 17] += 1e-7;
    std::copy(x.begin() + 7 * d, x.begin() + 8 * d, y.begin() + 11 * d);
    a = VectorSet::from_rows(std::move(x), 203, d);
    b = VectorSet::from_rows(std::move(y), 389, d);
  }
  for (const std::string k : {"dot", "cosine", "pearson", "spearman", "l2", "sqeuclidean"}) {
    for (const bool cross : {false, true}) {
      for (const std::size_t block : {std::size_t{0}, std::size_t{37}}) {
        SCOPED_TRACE(k + (cross ? " cross" : " self") + " block " + std::to_string(block));
        twobody::MatrixOptions m;
        m.kernel = k;
        m.block_rows = block;
        const auto cpu = twobody::vector_matrix(a, cross ? &b : nullptr, m, testing_support::on("cpu"));
        m.summation = twobody::MatrixSummation::Gemm;
        const auto gpu = twobody::vector_matrix(a, cross ? &b : nullptr, m, testing_support::on("cuda"));
        ASSERT_NE(gpu.info.plan.find("GEMM route"), std::string::npos) << gpu.info.plan;
        const VectorSet& bb = cross ? b : a;
        const std::size_t n = gpu.cols;
        // (Spearman's bound is over the ranks: the same form, absolute)
        for (std::size_t i = 0; i < gpu.rows; ++i)
          for (std::size_t j = 0; j < n; ++j) {
            const double c = cpu.values[i * n + j], g = gpu.values[i * n + j];
            ASSERT_LE(std::fabs(g - c), allowed(k, a, bb, i, j, c)) << i << ", " << j << ": " << g << " vs " << c;
            if (!cross) {
              const double t = gpu.values[j * n + i];
              ASSERT_EQ(std::memcmp(&g, &t, sizeof g), 0) << "not symmetric at " << i << ", " << j;
            }
          }
        if (k == "l2" || k == "sqeuclidean") {
          if (!cross) {
            for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(gpu.values[i * n + i], 0.0) << i;
            EXPECT_EQ(gpu.values[5 * n + 100], 0.0);
            EXPECT_EQ(std::memcmp(&gpu.values[6 * n + 101], &cpu.values[6 * n + 101], sizeof(double)), 0)
                << gpu.values[6 * n + 101] << " vs " << cpu.values[6 * n + 101];
            EXPECT_GT(cpu.values[6 * n + 101], 0.0);
            EXPECT_GE(gpu.info.pairs_settled_fp64, 203u);
          } else {
            EXPECT_EQ(gpu.values[7 * n + 11], 0.0);
            EXPECT_GE(gpu.info.pairs_settled_fp64, 1u);
          }
          EXPECT_NE(gpu.info.plan.find("settled: "), std::string::npos);
        }
      }
    }
  }
}

// Zero and constant rows (NaN cosines and correlations, as the rule's 0/0), one row, d = 1 and 2,
// blocks of one row: the route's NaNs where the CPU's are, its values within their bounds.
TEST(CudaVectorMatrix, GemmRouteNaNsAndSmallShapes) {
  if (!twobody::make_cuda_backend()) GTEST_SKIP() << "no CUDA backend or device";
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const int d : {1, 2, 65}) {
    VectorSet a = gaussian(9, d, rng, 1);
    {
      std::vector<double> x(9 * static_cast<std::size_t>(d));
      for (std::size_t i = 0; i < 9; ++i) a.row_f64(i, x.data() + i * d);
      std::fill(x.begin(), x.begin() + d, 0.0);          // a zero row
      std::fill(x.begin() + d, x.begin() + 2 * d, 7.25);  // a constant row
      a = VectorSet::from_rows(std::move(x), 9, d);
    }
    const VectorSet one = a.slice(3, 1);
    std::vector<float> rows32(9 * static_cast<std::size_t>(d));
    for (std::size_t i = 0; i < 9; ++i) {
      std::vector<double> row(static_cast<std::size_t>(d));
      a.row_f64(i, row.data());
      std::copy(row.begin(), row.end(), rows32.begin() + static_cast<std::ptrdiff_t>(i * d));
    }
    const VectorSet a32 = VectorSet::from_rows(std::move(rows32), 9, d);  // (raw rows copied, not viewed)
    for (const std::string k : {"dot", "cosine", "pearson", "spearman", "l2", "sqeuclidean"}) {
      for (const int shape : {0, 1, 2, 3}) {  // A x A, A x one, one x one, float32 A x A
        SCOPED_TRACE(k + " d " + std::to_string(d) + " shape " + std::to_string(shape));
        const VectorSet& x = shape == 2 ? one : shape == 3 ? a32 : a;
        const VectorSet* y = shape == 0 || shape == 3 ? nullptr : &one;
        twobody::MatrixOptions m;
        m.kernel = k;
        m.block_rows = 1;
        const auto cpu = twobody::vector_matrix(x, y, m, testing_support::on("cpu"));
        m.summation = twobody::MatrixSummation::Gemm;
        const auto gpu = twobody::vector_matrix(x, y, m, testing_support::on("cuda"));
        ASSERT_EQ(gpu.values.size(), cpu.values.size());
        for (std::size_t e = 0; e < cpu.values.size(); ++e) {
          const double c = cpu.values[e], g = gpu.values[e];
          ASSERT_EQ(std::isnan(c), std::isnan(g)) << e << ": " << g << " vs " << c;
          if (std::isnan(c)) ASSERT_EQ(std::memcmp(&c, &g, sizeof c), 0) << "the CPU's NaN, bit for bit";
          if (!std::isnan(c))
            ASSERT_LE(std::fabs(g - c), allowed(k, x, y ? *y : x, e / gpu.cols, e % gpu.cols, c)) << e << ": " << g << " vs " << c;
        }
      }
    }
  }
}

TEST(CudaVectorMatrix, SummationAutoTakesTheGemmFromD64AndSaysWhy) {
  if (!twobody::make_cuda_backend()) GTEST_SKIP() << "no CUDA backend or device";
  std::mt19937_64 rng(testing_support::fresh_seed());
  twobody::MatrixOptions m;
  m.kernel = "pearson";
  const VectorSet wide = gaussian(150, 64, rng), narrow = gaussian(150, 63, rng);
  EXPECT_NE(twobody::explain_vector_matrix(wide, nullptr, m, testing_support::on("cuda")).find("auto: a dot-like kernel, d = 64"),
            std::string::npos);
  const std::string tiles = twobody::explain_vector_matrix(narrow, nullptr, m, testing_support::on("cuda"));
  EXPECT_EQ(tiles.find("GEMM route ("), std::string::npos) << tiles;
  EXPECT_NE(tiles.find("summation: ordered, the generated tiles (auto: d = 63 < 64"), std::string::npos) << tiles;
  m.summation = twobody::MatrixSummation::Ordered;
  const auto ordered = twobody::vector_matrix(wide, nullptr, m, testing_support::on("cuda"));
  EXPECT_EQ(ordered.info.plan.find("GEMM"), std::string::npos);
  m.summation = twobody::MatrixSummation::Gemm;
  testing_support::expect_error(twobody::ErrorKind::Backend, "--backend cuda",
                                [&] { twobody::vector_matrix(wide, nullptr, m, testing_support::on("cpu")); });
  m.kernel = "l1";
  testing_support::expect_error(twobody::ErrorKind::Config, "dot-like",
                                [&] { twobody::vector_matrix(wide, nullptr, m, testing_support::on("cuda")); });
}

}  // namespace
