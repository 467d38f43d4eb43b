// The Gram distance bound (exact/gram_bounds.hpp) on the tensor cores' own arithmetic: s̃ of every
// pair from the Gram tiles (cuda/gram_tiles.hpp's test entry, the join kernel's mainloop and
// epilogue) against the float64 rule's key, on adversarial rows. The bound must hold with room:
// max |s̃ − key64| / E ≤ 0.5 (its software model, tests/gram_bounds_test.cpp, is checked the same
// way on the CPU). A wrong fragment layout or scaling would miss by orders of magnitude. Label: gpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "twobody/detail/cuda/gram_tiles.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/exact/gram_bounds.hpp"

using namespace twobody;
using testing_support::fresh_seed;

namespace {

using Rows = std::vector<double>;  // n x d, row-major

double rule_key(const double* a, const double* b, int d) {
  double s = 0;
  for (int k = 0; k < d; ++k) {
    const double t = a[k] - b[k];
    s += t * t;
  }
  return s;
}

// The worst |s̃ − key64| / E over the pairs i < j, each pair checked against half its bound.
double worst_ratio(const Rows& rows, std::size_t n, int d, const std::string& what) {
  const std::vector<double> centre = cuda::gram_centre(rows.data(), n, nullptr, 0, d, 1);
  const cuda::GramRows g = cuda::make_gram_rows(rows.data(), n, d, centre, 1);
  EXPECT_EQ(g.refusal, "") << what;
  if (!g.refusal.empty()) return 0;
  // The tiles take the rows sorted by norm, as the joins do; s̃ comes back in the set's order.
  cuda::GramRows sorted = g;
  cuda::sort_by_norm(sorted);
  const std::vector<float> s = cuda::gram_distances(sorted, sorted);
  double worst = 0;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const double key = rule_key(rows.data() + i * d, rows.data() + j * d, d);
      const double e = exact::gram_distance_bound(exact::kFp16Gram, d, g.norm_up[i], g.norm_up[j], g.sigma[i], g.sigma[j]);
      const double ratio = std::fabs(static_cast<double>(s[i * n + j]) - key) / e;
      worst = std::max(worst, ratio);
      if (!(ratio <= 0.5) && bad++ < 5)
        ADD_FAILURE() << what << " d=" << d << " pair " << i << ", " << j << ": s " << s[i * n + j] << " key " << key
                      << " bound " << e;
    }
  std::cout << what << " d=" << d << ": max |s - key64| / E = " << worst << "\n";
  return worst;
}

Rows gaussian(std::size_t n, int d, std::mt19937_64& rng, double offset, double scale) {
  std::normal_distribution<double> g;
  Rows r(n * static_cast<std::size_t>(d));
  for (double& v : r) v = offset + scale * g(rng);
  return r;
}

}  // namespace

TEST(CudaGramBound, TensorCoreDistancesStayWithinHalfTheBound) {
  if (!make_cuda_backend()) GTEST_SKIP() << "no CUDA backend or device";
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  constexpr std::size_t n = 512;
  double worst = 0;
  for (int d : {16, 128, 960}) {
    const std::size_t du = static_cast<std::size_t>(d);
    worst = std::max(worst, worst_ratio(gaussian(n, d, rng, 0, 1), n, d, "gaussian"));
    worst = std::max(worst, worst_ratio(gaussian(n, d, rng, 1e6, 1), n, d, "offset 1e6"));
    // One huge coordinate and many tiny ones: FP16 subnormals after each row's scaling.
    Rows spiky = gaussian(n, d, rng, 0, 1e-7);
    for (std::size_t i = 0; i < n; ++i) spiky[i * du + rng() % du] = 3.0;
    worst = std::max(worst, worst_ratio(spiky, n, d, "spikes and subnormals"));
    // Alternating signs of magnitudes over six decades: cancellation in every MMA.
    Rows alternating(n * du);
    std::uniform_real_distribution<double> u(-3, 3);
    for (std::size_t t = 0; t < alternating.size(); ++t) alternating[t] = (t % 2 ? -1 : 1) * std::pow(10.0, u(rng));
    worst = std::max(worst, worst_ratio(alternating, n, d, "alternating signs"));
    // Norms from 1e-3 to 1e3: the two rows of a pair have different scales.
    Rows norms = gaussian(n, d, rng, 0, 1);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < du; ++k) norms[i * du + k] *= std::pow(10.0, static_cast<double>(i % 7) - 3);
    worst = std::max(worst, worst_ratio(norms, n, d, "norms 1e-3..1e3"));
    // Near-duplicates: distances far below the norms.
    Rows near = gaussian(n / 2, d, rng, 5, 1);
    std::normal_distribution<double> tiny(0, 1e-4);
    for (std::size_t t = 0, m = near.size(); t < m; ++t) near.push_back(near[t] + tiny(rng));
    worst = std::max(worst, worst_ratio(near, n, d, "near duplicates"));
  }
  RecordProperty("worst_error_over_bound", std::to_string(worst));
  EXPECT_GT(worst, 1e-6) << "the distances are suspiciously exact";
}
