// Automatic jackknife regions fitted on the random catalogues (as TreeCorr's patches): on
// clustered data they hold about equal areas (volumes) of the footprint, where regions fitted on
// the data follow its clustering; every region holds points; the leave-one-out samples equal a
// recount with the same labels; the regions are the same for any thread count.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "jackknife_recount.hpp"
#include "twobody/correlation.hpp"
#include "twobody/error.hpp"
#include "twobody/generate.hpp"
#include "twobody/jackknife.hpp"

using namespace twobody;
using jackknife_recount::cpu_options;
using jackknife_recount::expect_equals_recount;

namespace {

// The relative spread of the points per region: standard deviation over mean.
double spread(const std::vector<std::int32_t>& labels, int R) {
  std::vector<double> n(R, 0.0);
  for (auto l : labels) n[l] += 1;
  const double mean = std::accumulate(n.begin(), n.end(), 0.0) / R;
  double var = 0;
  for (double x : n) var += (x - mean) * (x - mean);
  return std::sqrt(var / R) / mean;
}

// A survey's footprint, the cap Dec > 30: most galaxies in Soneira–Peebles clusters, a fifth
// spread over the cap (a footprint of disjoint islands would make any k-means regions unequal).
PointSet clustered_cap(std::uint64_t seed) {
  const PointSet clustered = generate_clustered_sky(60000, ClusterOptions{}, seed);
  const PointSet spread_out = generate_uniform_sky(15000, seed + 1);
  std::vector<double> ra, dec;
  for (const PointSet* p : {&clustered, &spread_out})
    for (std::size_t i = 0; i < p->size(); ++i)
      if (p->coord(1)[i] > 30) {
        ra.push_back(p->coord(0)[i]);
        dec.push_back(p->coord(1)[i]);
      }
  PointSet cap(2, ra.size());
  std::copy(ra.begin(), ra.end(), cap.coord(0).begin());
  std::copy(dec.begin(), dec.end(), cap.coord(1).begin());
  return cap;
}

}  // namespace

TEST(RegionsOnRandoms, SkyRegionsOnRandomsAreCloserToEqualArea) {
  const PointSet data = clustered_cap(31);
  RandomsLike how;
  how.footprint = RandomsLike::Footprint::Sky;
  how.resolution_deg = 4.0;
  const PointSet randoms = generate_randoms_like(data, 60000, how, 32).points;
  const int R = 10;
  const PointSet ur = sky_to_unit_vectors(randoms), ud = sky_to_unit_vectors(data);
  const double on_data = spread(nearest_centre(ur, sky_region_centres(ud, R, 1)), R);
  const double on_randoms = spread(nearest_centre(ur, sky_region_centres(ur, R, 1)), R);
  EXPECT_LT(on_randoms, 0.25) << "fitted on the data: " << on_data;
  EXPECT_LT(on_randoms, 0.6 * on_data) << "fitted on the randoms: " << on_randoms;

  // The library fits them so: its regions are those from the randoms, each holding data and randoms.
  const Binning bins = Binning::logarithmic(0.5, 5.0, 3);
  JackknifeRequest jk;
  jk.regions = R;
  const CorrelationResult x =
      correlation(data, {randoms}, bins, CorrelationSpace::Sky, std::nullopt, false, cpu_options(), jk);
  ASSERT_TRUE(x.jackknife);
  EXPECT_FALSE(x.jackknife->fitted_on_data);
  EXPECT_EQ(x.jackknife->centres, sky_region_centres(ur, R, 1));
  for (std::size_t r = 0; r < x.jackknife->regions; ++r) {
    EXPECT_GT(x.jackknife->n_data[r], 0u) << "region " << r;
    EXPECT_GT(x.jackknife->n_randoms[r], 0u) << "region " << r;
  }
}

TEST(RegionsOnRandoms, SpaceRegionsOnRandomsAreCloserToEqualVolume) {
  const double L = 300;
  const PointSet data = generate_clustered_box(20000, 3, L, ClusterOptions{}, 41);
  RandomsLike how;
  how.box = {L, L, L};
  const PointSet randoms = generate_randoms_like(data, 60000, how, 42).points;
  const int R = 8;
  const double on_data = spread(nearest_space_centre(randoms, space_region_centres(data, R, 1)), R);
  const double on_randoms = spread(nearest_space_centre(randoms, space_region_centres(randoms, R, 1)), R);
  EXPECT_LT(on_randoms, 0.2) << "fitted on the data: " << on_data;
  EXPECT_LT(on_randoms, 0.6 * on_data) << "fitted on the randoms: " << on_randoms;
  // Regions fitted on the randoms hold data too (equal cells of a clustered catalogue's box need not).
  const Binning bins = Binning::logarithmic(2.0, 20.0, 3);
  JackknifeRequest jk;
  jk.regions = R;
  const CorrelationResult x =
      correlation(data, {randoms}, bins, CorrelationSpace::Open, std::nullopt, false, cpu_options(), jk);
  ASSERT_TRUE(x.jackknife);
  for (std::size_t r = 0; r < x.jackknife->regions; ++r) {
    EXPECT_GT(x.jackknife->n_data[r], 0u) << "region " << r;
    EXPECT_GT(x.jackknife->n_randoms[r], 0u) << "region " << r;
  }
}

// The leave-one-region-out samples of clustered data with regions fitted on its randoms equal a
// recount without each region, sky and open space.
TEST(RegionsOnRandoms, ClusteredSamplesEqualRecount) {
  {
    const PointSet data = generate_clustered_sky(700, ClusterOptions{}, 51);
    RandomsLike how;
    how.footprint = RandomsLike::Footprint::Sky;
    how.resolution_deg = 6.0;
    const std::vector<PointSet> rs = {generate_randoms_like(data, 1500, how, 52).points};
    JackknifeRequest jk;
    jk.regions = 5;
    const Binning bins = Binning::logarithmic(1.0, 20.0, 4);
    const CorrelationResult x =
        correlation(data, rs, bins, CorrelationSpace::Sky, std::nullopt, false, cpu_options(), jk);
    const auto centres = sky_region_centres(sky_to_unit_vectors(rs[0]), 5, jk.seed);
    expect_equals_recount(x, data, nearest_centre(sky_to_unit_vectors(data), centres), rs,
                          {nearest_centre(sky_to_unit_vectors(rs[0]), centres)}, bins, CorrelationSpace::Sky,
                          std::nullopt, false, Estimator::LandySzalay);
  }
  {
    const PointSet data = generate_clustered_box(700, 3, 100.0, ClusterOptions{}, 53);
    RandomsLike how;
    how.box = {100, 100, 100};
    const std::vector<PointSet> rs = {generate_randoms_like(data, 1500, how, 54).points};
    JackknifeRequest jk;
    jk.regions = 6;
    jk.estimator = Estimator::Hamilton;
    const Binning bins = Binning::logarithmic(2.0, 20.0, 4);
    const CorrelationResult x =
        correlation(data, rs, bins, CorrelationSpace::Open, std::nullopt, false, cpu_options(), jk);
    const auto centres = space_region_centres(rs[0], 6, jk.seed);
    expect_equals_recount(x, data, nearest_space_centre(data, centres), rs, {nearest_space_centre(rs[0], centres)},
                          bins, CorrelationSpace::Open, std::nullopt, false, Estimator::Hamilton);
  }
}

// Same seed, same regions, whatever the number of threads (k-means' parallel assignment writes
// each point's label only).
TEST(RegionsOnRandoms, IndependentOfTheThreadCount) {
  const PointSet p = generate_clustered_box(30000, 3, 100.0, ClusterOptions{}, 61);
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto one = space_region_centres(p, 12, 5);
  const auto sky_one = sky_region_centres(sky_to_unit_vectors(generate_clustered_sky(30000, ClusterOptions{}, 62)), 12, 5);
  omp_set_num_threads(std::max(2, before));
  const auto many = space_region_centres(p, 12, 5);
  const auto sky_many = sky_region_centres(sky_to_unit_vectors(generate_clustered_sky(30000, ClusterOptions{}, 62)), 12, 5);
  omp_set_num_threads(before);
  EXPECT_EQ(one, many);
  EXPECT_EQ(sky_one, sky_many);
  EXPECT_EQ(space_region_centres(p, 12, 5), one);
  EXPECT_NE(space_region_centres(p, 12, 6), one);
  EXPECT_THROW(space_region_centres(p, 1, 5), Error);
}
