// Matrices of vectors and of pair expressions on the GPU (--backend cuda: the generated matrix
// kernel, src/cuda/expr): every named kernel and an expression give the CPU's entries bit for bit
// (matrix_test.cpp tests the CPU's against the float64 rule), A x B and A x A (a symmetric kernel's
// half computed and mirrored), with blocks of rows that end inside the matrix, in memory and into
// .npy; "auto" stays on the CPU and says so; mutual information is refused on the GPU. Label: gpu.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <unistd.h>

#include "test_support.hpp"
#include "twobody/detail/engine/backend.hpp"
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

}  // namespace
