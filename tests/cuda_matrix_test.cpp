// Matrices of vectors with a GPU present: the CUDA backend does not take them yet (issue 23's GEMM
// route is to come), so backend "cuda" is a clear Error(Backend) and "auto" runs them on the CPU,
// giving the CPU's bits (matrix_test.cpp tests those against the float64 rule). Label: gpu.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "test_support.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/matrices.hpp"

namespace {

using twobody::VectorSet;

TEST(CudaVectorMatrix, AutoRunsOnTheCpuAndCudaIsRefused) {
  if (!twobody::make_cuda_backend()) GTEST_SKIP() << "no CUDA backend or device";
  std::mt19937_64 rng(testing_support::fresh_seed());
  std::normal_distribution<double> g;
  std::vector<double> x(200 * 5419);
  for (double& v : x) v = g(rng);
  const VectorSet a = VectorSet::from_rows(std::move(x), 200, 5419);
  for (const char* k : {"pearson", "l2", "cosine", "spearman", "sum(abs(a - b))"}) {
    twobody::MatrixOptions m;
    m.kernel = k;
    const auto cpu = twobody::vector_matrix(a, nullptr, m, testing_support::on("cpu"));
    const auto any = twobody::vector_matrix(a, nullptr, m, testing_support::on("auto"));
    EXPECT_EQ(any.info.backend, "cpu") << k;
    EXPECT_NE(any.info.plan.find("GPU route is to come"), std::string::npos) << any.info.plan;
    ASSERT_EQ(0, std::memcmp(cpu.values.data(), any.values.data(), cpu.values.size() * sizeof(double))) << k;
    testing_support::expect_error(twobody::ErrorKind::Backend, "CPU",
                                  [&] { twobody::vector_matrix(a, nullptr, m, testing_support::on("cuda")); });
  }
}

}  // namespace
