#include <gtest/gtest.h>

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
