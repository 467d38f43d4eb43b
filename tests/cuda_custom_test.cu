// A user's pair function on the GPU: the same functor through the CPU and the CUDA backends gives
// the same counts, pair lists and matrices. Label: gpu.
#include <gtest/gtest.h>

#include "test_support.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/extend/run_custom.cuh"

using namespace twobody;

namespace {

// Chebyshev (L-infinity) distance in 2-D, written once for host and device.
struct Chebyshev2 {
  static constexpr int dim = 2;
  template <class T>
  TWOBODY_HD T key(const T* a, const T* b) const {
    const T dx = a[0] > b[0] ? a[0] - b[0] : b[0] - a[0];
    const T dy = a[1] > b[1] ? a[1] - b[1] : b[1] - a[1];
    return dx > dy ? dx : dy;
  }
  double key_of(double v) const { return v; }
  TWOBODY_HD double natural_of(double k) const { return k; }
};

}  // namespace

TEST(CudaCustom, UserFunctorMatchesCpu) {
  if (!make_cuda_backend()) GTEST_SKIP() << "no CUDA device";
  std::mt19937_64 rng(testing_support::fresh_seed());
  const auto A = testing_support::to_pointset(testing_support::uniform_points(3001, 2, 0, 10, rng));
  const auto B = testing_support::to_pointset(testing_support::uniform_points(777, 2, 0, 10, rng));
  Statistic s;
  s.reduction = reduce::Histogram{Binning::linear(0.0, 5.0, 40)};
  RunOptions cpu;
  cpu.backend = "cpu";
  const auto g = twobody::cuda::run_custom(Chebyshev2{}, s, A, nullptr);
  EXPECT_EQ(g.info.backend, "cuda");
  EXPECT_EQ(g.counts, run_custom(Chebyshev2{}, s, A, nullptr, cpu).counts);
  EXPECT_EQ(g.info.pairs_settled_fp64, g.info.pairs_evaluated);  // no proxy: all in float64
  s.traversal = Traversal::Cross;
  EXPECT_EQ(twobody::cuda::run_custom(Chebyshev2{}, s, A, &B).counts, run_custom(Chebyshev2{}, s, A, &B, cpu).counts);
  s.reduction = reduce::PairList{Binning::from_edges({0.0, 0.3})};
  const auto gl = twobody::cuda::run_custom(Chebyshev2{}, s, A, &B);
  const auto cl = run_custom(Chebyshev2{}, s, A, &B, cpu);
  ASSERT_EQ(gl.pairs.size(), cl.pairs.size());
  for (std::size_t k = 0; k < cl.pairs.size(); ++k) ASSERT_EQ(gl.pairs[k].value, cl.pairs[k].value);
  s.reduction = reduce::Matrix{};
  EXPECT_EQ(twobody::cuda::run_custom(Chebyshev2{}, s, B, &A).matrix, run_custom(Chebyshev2{}, s, B, &A, cpu).matrix);
}
