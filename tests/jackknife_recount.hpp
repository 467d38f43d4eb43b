#pragma once
// The jackknife by hand, for the tests of automatic and given regions: every region's points
// removed from every catalogue, the correlation function recounted, and the samples, mean, errors
// and covariance written out here, against a CorrelationResult's jackknife.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "twobody/correlation.hpp"

namespace jackknife_recount {

using namespace twobody;
using testing_support::without_region;

inline RunOptions cpu_options() {
  RunOptions o;
  o.backend = "cpu";
  return o;
}

inline void expect_near_rel(double got, double want, double tol, const std::string& what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what;
    return;
  }
  EXPECT_NEAR(got, want, tol * (1 + std::abs(want))) << what;
}

inline const std::vector<double>& column(const BinnedResult& r, const std::string& name) {
  for (const auto& c : r.derived)
    if (c.name == name) return c.values;
  // w(θ)'s estimates are named w_* (estimate_name): the same column under its sky name.
  if (name.rfind("xi_", 0) == 0)
    for (const auto& c : r.derived)
      if (c.name == "w_" + name.substr(3)) return c.values;
  throw std::runtime_error("no column " + name);
}

inline const char* estimator_column(Estimator e) {
  switch (e) {
    case Estimator::Natural: return "xi_natural";
    case Estimator::DavisPeebles: return "xi_davis_peebles";
    case Estimator::Hamilton: return "xi_hamilton";
    case Estimator::LandySzalay: return "xi_landy_szalay";
  }
  return "";
}

// The jackknife by hand: every region's points removed from every catalogue and everything
// recounted; then mean, (R−1)/R-scaled errors and covariance written out here.
inline void expect_equals_recount(const CorrelationResult& x, const PointSet& data, const std::vector<std::int32_t>& ld,
                           const std::vector<PointSet>& randoms, const std::vector<std::vector<std::int32_t>>& lr,
                           const Binning& bins, CorrelationSpace space, const std::optional<Box>& box, bool weighted,
                           Estimator est) {
  ASSERT_TRUE(x.jackknife.has_value());
  const JackknifeResult& J = *x.jackknife;
  const std::size_t R = J.regions, nb = bins.nbins();
  std::vector<double> samples(R * nb);
  for (std::size_t r = 0; r < R; ++r) {
    std::vector<PointSet> rs;
    for (std::size_t i = 0; i < randoms.size(); ++i) rs.push_back(without_region(randoms[i], lr[i], static_cast<int>(r)));
    const BinnedResult y =
        correlation(without_region(data, ld, static_cast<int>(r)), rs, bins, space, box, weighted, cpu_options());
    const auto& col = column(y, estimator_column(est));
    for (std::size_t k = 0; k < nb; ++k) {
      samples[r * nb + k] = col[k];
      expect_near_rel(J.samples[r * nb + k], col[k], 1e-9, "sample r=" + std::to_string(r) + " k=" + std::to_string(k));
    }
  }
  for (std::size_t k = 0; k < nb; ++k) {
    double mean = 0;
    for (std::size_t r = 0; r < R; ++r) mean += samples[r * nb + k];
    mean /= static_cast<double>(R);
    expect_near_rel(J.mean[k], mean, 1e-9, "mean k=" + std::to_string(k));
    for (std::size_t l = 0; l < nb; ++l) {
      double ml = 0;
      for (std::size_t r = 0; r < R; ++r) ml += samples[r * nb + l];
      ml /= static_cast<double>(R);
      double c = 0;
      for (std::size_t r = 0; r < R; ++r) c += (samples[r * nb + k] - mean) * (samples[r * nb + l] - ml);
      c *= static_cast<double>(R - 1) / static_cast<double>(R);
      // Differences of nearly equal samples: compare on the scale of the variances.
      const double scale = std::sqrt(std::abs(J.covariance[k * nb + k] * J.covariance[l * nb + l]));
      if (std::isnan(c)) {
        EXPECT_TRUE(std::isnan(J.covariance[k * nb + l]));
        continue;
      }
      EXPECT_NEAR(J.covariance[k * nb + l], c, 1e-7 * (scale + std::abs(c)) + 1e-300) << "cov " << k << "," << l;
      if (k == l) expect_near_rel(J.sigma[k], std::sqrt(c), 1e-7, "sigma k=" + std::to_string(k));
    }
  }
  for (std::size_t k = 0; k < nb; ++k) {
    expect_near_rel(column(x, "xi_jk_mean")[k], J.mean[k], 0, "mean column");
    expect_near_rel(column(x, "xi_jk_sigma")[k], J.sigma[k], 0, "sigma column");
  }
}


}  // namespace jackknife_recount
