#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "twobody/error.hpp"
#include "twobody/generate.hpp"
#include "twobody/statistics.hpp"

using namespace twobody;

TEST(Generate, DeterministicForASeed) {
  const auto a = generate_clustered_sky(5000, ClusterOptions{}, 42);
  const auto b = generate_clustered_sky(5000, ClusterOptions{}, 42);
  const auto c = generate_clustered_sky(5000, ClusterOptions{}, 43);
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a.coord(0)[i], b.coord(0)[i]);
  EXPECT_NE(a.coord(0)[0], c.coord(0)[0]);
}

TEST(Generate, CataloguesLieWhereTheySay) {
  for (auto kind : {ClusterOptions::Kind::GaussianBlobs, ClusterOptions::Kind::SoneiraPeebles}) {
    ClusterOptions c;
    c.kind = kind;
    const auto box = generate_clustered_box(20000, 3, 500.0, c, 7);
    ASSERT_EQ(box.size(), 20000u);
    for (int d = 0; d < 3; ++d)
      for (double x : box.coord(d)) ASSERT_TRUE(x >= 0.0 && x < 500.0);
    const auto sky = generate_clustered_sky(20000, c, 7);
    for (std::size_t i = 0; i < sky.size(); ++i) {
      ASSERT_TRUE(sky.coord(0)[i] >= 0.0 && sky.coord(0)[i] < 360.0);
      ASSERT_LE(std::abs(sky.coord(1)[i]), 90.0);
    }
  }
}

// Clustered catalogues must be clustered: many more close pairs than a uniform one.
TEST(Generate, ClusteredSkyHasExcessSmallScalePairs) {
  const auto clustered = generate_clustered_sky(6000, ClusterOptions{}, 11);
  const auto uniform = generate_uniform_sky(6000, 11);
  const auto bins = Binning::from_edges({0.0, 1.0});
  RunOptions o;
  o.backend = "cpu";
  const auto dc = angular(clustered, nullptr, bins, false, o).raw.counts[0];
  const auto du = angular(uniform, nullptr, bins, false, o).raw.counts[0];
  EXPECT_GT(dc, 10 * du);
}

// Issue 3's non-uniform catalogue: 90 % of the points in one cube of 1 % of the volume (the first
// round(0.9 n) points), the rest outside that cube, everything inside the box.
TEST(Generate, ConcentratedPutsTheFractionInTheVolume) {
  const std::size_t n = 20001;
  const double side = 1000.0;
  const auto p = generate_concentrated_box(n, 3, side, 0.9, 0.01, 5);
  ASSERT_EQ(p.size(), n);
  const std::size_t m = 18001;  // round(0.9 * 20001)
  std::array<double, 3> lo{}, hi{};
  for (int d = 0; d < 3; ++d) {
    const auto x = p.coord(d);
    for (double v : x) ASSERT_TRUE(v >= 0.0 && v < side);
    lo[d] = *std::min_element(x.begin(), x.begin() + m);
    hi[d] = *std::max_element(x.begin(), x.begin() + m);
    EXPECT_LE(hi[d] - lo[d], side * std::cbrt(0.01) * (1 + 1e-12));
    EXPECT_GT(hi[d] - lo[d], 0.95 * side * std::cbrt(0.01));  // the cube is filled, not a smaller one
  }
  std::size_t inside = 0;
  for (std::size_t i = 0; i < n; ++i) {
    bool in = true;
    for (int d = 0; d < 3; ++d) in = in && p.coord(d)[i] >= lo[d] && p.coord(d)[i] <= hi[d];
    inside += in;
  }
  EXPECT_EQ(inside, m);
  const auto q = generate_concentrated_box(n, 3, side, 0.9, 0.01, 5);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(p.coord(2)[i], q.coord(2)[i]);
  EXPECT_THROW(generate_concentrated_box(n, 3, side, 1.5, 0.01, 5), Error);
  EXPECT_THROW(generate_concentrated_box(n, 3, side, 0.9, 1.0, 5), Error);
}
