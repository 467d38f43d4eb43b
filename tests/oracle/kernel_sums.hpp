#pragma once
// Kernel sums by brute force, for the kde tests of both backends: every ordered pair of points,
// d² from the coordinates (brute_force.hpp's d2_open / d2_periodic, the binning rule), in range when
// d² < cutoff·cutoff, K = exp(−d²/2h²) or 1 − d²/h² (0 from d² ≥ h²), sums in float64 in partner
// order. It shares nothing with src/statistics/kde.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "oracle/brute_force.hpp"
#include "twobody/kde.hpp"

namespace oracle {

struct KernelSumsSide {
  std::vector<double> density, num;
  std::vector<double> magnitude, num_magnitude;  // Σ|w K| and Σ|w K y|: the scale of each sum
  std::vector<double> weight_sum;                // Σ|w| over the partners: the scale of K's absolute error
  std::vector<std::uint64_t> partners;
};

struct KernelSumsCase {
  twobody::KdeKernel kernel = twobody::KdeKernel::Gaussian;
  double h = 1, cutoff = 5;
  std::vector<double> L;  // a periodic box's sides; empty: open
  bool weighted = false;
};

// The sums of the points of `to` over their partners in `from` (the same set for auto: i ≠ j).
inline KernelSumsSide kernel_sums_of(const Points& to, const Points& from, bool same, const std::vector<double>& y_from,
                                     const KernelSumsCase& c) {
  const std::size_t n = to.x.size();
  KernelSumsSide s{std::vector<double>(n, 0.0), std::vector<double>(n, 0.0), std::vector<double>(n, 0.0),
                   std::vector<double>(n, 0.0), std::vector<double>(n, 0.0), std::vector<std::uint64_t>(n, 0)};
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < from.x.size(); ++j) {
      if (same && i == j) continue;
      const double d2 = c.L.empty() ? d2_open(to.x[i], from.x[j]) : d2_periodic(to.x[i], from.x[j], c.L);
      if (!(d2 < c.cutoff * c.cutoff)) continue;
      const double k = c.kernel == twobody::KdeKernel::Gaussian ? std::exp(-d2 / (2 * c.h * c.h))
                       : d2 < c.h * c.h                         ? 1 - d2 / (c.h * c.h)
                                                                : 0.0;
      const double w = c.weighted ? from.w[j] : 1.0;
      s.density[i] += w * k;
      s.magnitude[i] += std::abs(w * k);
      s.weight_sum[i] += std::abs(w);
      if (!y_from.empty()) {
        s.num[i] += w * k * y_from[j];
        s.num_magnitude[i] += std::abs(w * k * y_from[j]);
      }
      ++s.partners[i];
    }
  return s;
}

// Checks one side of a result: partners exactly, each density to 1e-12 of its scale, each
// regression to what those errors allow (NaN exactly where the density is 0). An Epanechnikov
// term just inside the support is computed by kde.cpp from r = sqrt(d²), which is d² to one ulp:
// K there is good to a few ulp absolutely, not relatively, hence the weight_sum term.
inline void expect_side(const std::vector<double>& density, const std::vector<std::uint64_t>& partners,
                        const std::vector<double>& regression, const KernelSumsSide& o, const std::vector<double>& y,
                        const KernelSumsCase& c, const std::string& what) {
  ASSERT_EQ(density.size(), o.density.size()) << what;
  ASSERT_EQ(partners, o.partners) << what;
  double y_max = 0;
  for (double v : y) y_max = std::max(y_max, std::abs(v));
  for (std::size_t i = 0; i < density.size(); ++i) {
    const double slack = c.kernel == twobody::KdeKernel::Epanechnikov ? 2e-15 * o.weight_sum[i] : 0.0;
    const double tol = 1e-12 * o.magnitude[i] + slack;
    ASSERT_NEAR(density[i], o.density[i], tol) << what << ": point " << i;
    if (y.empty()) continue;
    ASSERT_EQ(regression.size(), density.size()) << what;
    if (o.density[i] == 0) {
      ASSERT_TRUE(std::isnan(regression[i])) << what << ": point " << i << " has no partner, m = " << regression[i];
      continue;
    }
    const double m = o.num[i] / o.density[i], den = std::abs(o.density[i]);
    const double tol_m = (1e-12 * o.num_magnitude[i] + slack * y_max) / den + std::abs(m) * tol / den;
    ASSERT_NEAR(regression[i], m, tol_m) << what << ": point " << i;
  }
}

// The whole result against the brute force: the first set's rows, and (cross) the second's.
inline void expect_kernel_sums(const twobody::KernelSums& s, const Points& a, const Points* b,
                               const std::vector<double>& y_a, const std::vector<double>& y_b,
                               const KernelSumsCase& c) {
  const Points& other = b ? *b : a;
  const std::vector<double>& y_other = b ? y_b : y_a;
  expect_side(s.density_a, s.partners_a, s.regression_a, kernel_sums_of(a, other, b == nullptr, y_other, c), y_other, c,
              "first set");
  if (!b) {
    EXPECT_TRUE(s.density_b.empty());
    return;
  }
  expect_side(s.density_b, s.partners_b, s.regression_b, kernel_sums_of(*b, a, false, y_a, c), y_a, c, "second set");
}

}  // namespace oracle
