// Random catalogues matched to a data catalogue (generate randoms --like): inside the footprint,
// uniform over it (chi-square over equal-area pixels), deterministic for a seed, of the right area
// for a cap, and for survey mocks with the data's radial distribution (Kolmogorov–Smirnov).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>

#include "twobody/error.hpp"
#include "twobody/generate.hpp"

using namespace twobody;

namespace {

constexpr double kDeg = 180.0 / std::numbers::pi;

RandomsLike on_sky(double resolution) {
  RandomsLike how;
  how.footprint = RandomsLike::Footprint::Sky;
  how.resolution_deg = resolution;
  return how;
}

// Points per pixel of `mask` (every pixel of the sphere, or its occupied ones).
std::map<std::uint64_t, double> per_pixel(const SkyMask& mask, const PointSet& p) {
  std::map<std::uint64_t, double> c;
  for (std::size_t i = 0; i < p.size(); ++i) c[mask.pixel_of(p.coord(0)[i], p.coord(1)[i])] += 1;
  return c;
}

// Σ (observed − expected)² / expected over `cells` cells sharing n points equally.
double chi_square(const std::map<std::uint64_t, double>& counts, std::size_t cells, double n) {
  const double e = n / static_cast<double>(cells);
  double chi2 = 0, seen = 0;
  for (const auto& [pixel, c] : counts) {
    chi2 += (c - e) * (c - e) / e;
    seen += 1;
  }
  return chi2 + (static_cast<double>(cells) - seen) * e;  // the empty cells
}

// The two-sample Kolmogorov–Smirnov statistic: the largest gap between the empirical CDFs.
double ks_statistic(std::vector<double> a, std::vector<double> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  double d = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const double x = std::min(a[i], b[j]);
    while (i < a.size() && a[i] <= x) ++i;
    while (j < b.size() && b[j] <= x) ++j;
    d = std::max(d, std::abs(static_cast<double>(i) / a.size() - static_cast<double>(j) / b.size()));
  }
  return d;
}

template <class F>
ErrorKind kind_of_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no error";
  return ErrorKind::Internal;
}

}  // namespace

// The pixelisation is equal-area: points uniform on the sphere (drawn by another generator) fall
// into the pixels of the whole sky as a uniform multinomial would.
TEST(SkyMask, PixelsAreEqualInArea) {
  const PointSet sky = generate_uniform_sky(400000, 21);
  const SkyMask mask(sky, 5.0);
  ASSERT_EQ(mask.occupied().size(), mask.pixels());  // every pixel of 5 deg holds ~240 of them
  const double dof = static_cast<double>(mask.pixels() - 1);
  const double chi2 = chi_square(per_pixel(mask, sky), mask.pixels(), 400000);
  EXPECT_LT(std::abs(chi2 - dof), 5 * std::sqrt(2 * dof)) << "chi2 " << chi2 << " over " << dof << " dof";
  EXPECT_NEAR(mask.pixel_area_deg2() * static_cast<double>(mask.pixels()), 4 * std::numbers::pi * kDeg * kDeg, 1e-6);
  EXPECT_NEAR(mask.pixel_area_deg2(), 25.0, 2.0);  // about resolution²
}

TEST(RandomsLike, SkyRandomsLieInTheMaskUniformly) {
  const PointSet data = generate_clustered_sky(20000, ClusterOptions{}, 3);
  const std::size_t n = 200000;
  const GeneratedRandoms r = generate_randoms_like(data, n, on_sky(3.0), 7);
  ASSERT_EQ(r.points.size(), n);
  EXPECT_FALSE(r.points.has_weights());
  const SkyMask mask(data, 3.0);
  for (std::size_t i = 0; i < data.size(); ++i) ASSERT_TRUE(mask.contains(data.coord(0)[i], data.coord(1)[i]));
  for (std::size_t i = 0; i < n; ++i) {
    const double ra = r.points.coord(0)[i], dec = r.points.coord(1)[i];
    ASSERT_TRUE(ra >= 0 && ra < 360 && dec >= -90 && dec <= 90) << ra << " " << dec;
    ASSERT_TRUE(mask.contains(ra, dec)) << "point " << i << " at " << ra << " " << dec;
  }
  // Uniform over the occupied pixels (equal areas: equal expected counts).
  const std::size_t K = mask.occupied().size();
  ASSERT_GT(K, 50u);
  const double dof = static_cast<double>(K - 1);
  const double chi2 = chi_square(per_pixel(mask, r.points), K, static_cast<double>(n));
  EXPECT_LT(std::abs(chi2 - dof), 5 * std::sqrt(2 * dof)) << "chi2 " << chi2 << " over " << dof << " dof";
  EXPECT_NE(r.note.find("deg2"), std::string::npos) << r.note;
  EXPECT_NE(r.note.find("% of the sky"), std::string::npos) << r.note;
}

TEST(RandomsLike, SameSeedSameRandomsOtherSeedOthers) {
  const PointSet sky = generate_clustered_sky(5000, ClusterOptions{}, 4);
  const PointSet a = generate_randoms_like(sky, 3000, on_sky(2.0), 9).points;
  const PointSet b = generate_randoms_like(sky, 3000, on_sky(2.0), 9).points;
  const PointSet c = generate_randoms_like(sky, 3000, on_sky(2.0), 10).points;
  for (int d = 0; d < 2; ++d) {
    EXPECT_TRUE(std::equal(a.coord(d).begin(), a.coord(d).end(), b.coord(d).begin()));
    EXPECT_FALSE(std::equal(a.coord(d).begin(), a.coord(d).end(), c.coord(d).begin()));
  }
  const PointSet box = generate_clustered_box(5000, 3, 100.0, ClusterOptions{}, 4);
  const PointSet x = generate_randoms_like(box, 3000, RandomsLike{}, 9).points;
  const PointSet y = generate_randoms_like(box, 3000, RandomsLike{}, 9).points;
  const PointSet z = generate_randoms_like(box, 3000, RandomsLike{}, 10).points;
  EXPECT_TRUE(std::equal(x.coord(2).begin(), x.coord(2).end(), y.coord(2).begin()));
  EXPECT_FALSE(std::equal(x.coord(2).begin(), x.coord(2).end(), z.coord(2).begin()));
}

// Data filling the cap Dec > 30: randoms only there, and the mask's area that of the cap within
// the pixels the cap's edge crosses (its circumference times a pixel side).
TEST(RandomsLike, CapFootprintHasTheCapsArea) {
  const PointSet sky = generate_uniform_sky(400000, 5);
  std::vector<double> ra, dec;
  for (std::size_t i = 0; i < sky.size(); ++i)
    if (sky.coord(1)[i] > 30) {
      ra.push_back(sky.coord(0)[i]);
      dec.push_back(sky.coord(1)[i]);
    }
  PointSet cap(2, ra.size());
  std::copy(ra.begin(), ra.end(), cap.coord(0).begin());
  std::copy(dec.begin(), dec.end(), cap.coord(1).begin());
  const double res = 1.0;
  const SkyMask mask(cap, res);
  const double cap_area = 2 * std::numbers::pi * (1 - std::sin(30 / kDeg)) * kDeg * kDeg;  // 10 313 deg2
  const double edge = 2 * std::numbers::pi * std::cos(30 / kDeg) * kDeg * res;            // ~312 deg2
  EXPECT_NEAR(mask.area_deg2(), cap_area, edge);
  EXPECT_NEAR(mask.sky_fraction(), 0.25, edge / (4 * std::numbers::pi * kDeg * kDeg));
  const PointSet r = generate_randoms_like(cap, 100000, on_sky(res), 6).points;
  for (std::size_t i = 0; i < r.size(); ++i) ASSERT_GT(r.coord(1)[i], 30 - 2 * res);
  // The fraction of randoms below Dec 30 is that of the edge pixels' area there: small.
  std::size_t below = 0;
  for (std::size_t i = 0; i < r.size(); ++i) below += r.coord(1)[i] < 30;
  EXPECT_LT(static_cast<double>(below) / r.size(), edge / cap_area);
}

// Mocks: angles over the mask, the radial column the data's own values (with replacement), each
// with the weight of the point that lent it.
TEST(RandomsLike, MocksTakeTheDatasRadialDistribution) {
  const PointSet sky = generate_clustered_sky(8000, ClusterOptions{}, 12);
  PointSet data(3, sky.size());
  std::vector<double> w(sky.size());
  for (std::size_t i = 0; i < sky.size(); ++i) {
    data.coord(0)[i] = sky.coord(0)[i];
    data.coord(1)[i] = sky.coord(1)[i];
    const double u = static_cast<double>((i * 7919) % 8000) / 8000.0;
    data.coord(2)[i] = 20000 + 30000 * u * u;  // cz in km/s, skewed
    w[i] = data.coord(2)[i] / 1000;
  }
  data.set_weights(w);
  RandomsLike how = on_sky(2.0);
  how.footprint = RandomsLike::Footprint::Mocks;
  const std::size_t n = 40000;
  const GeneratedRandoms r = generate_randoms_like(data, n, how, 13);
  ASSERT_EQ(r.points.dim(), 3);
  ASSERT_TRUE(r.points.has_weights());
  const SkyMask mask(sky, 2.0);
  std::vector<double> radial_data(data.coord(2).begin(), data.coord(2).end());
  std::vector<double> radial(r.points.coord(2).begin(), r.points.coord(2).end());
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(mask.contains(r.points.coord(0)[i], r.points.coord(1)[i]));
    ASSERT_EQ(r.points.weights()[i], r.points.coord(2)[i] / 1000);
  }
  const double ks = ks_statistic(radial_data, radial);
  const double bound = 1.95 * std::sqrt((8000.0 + n) / (8000.0 * n));  // 0.1 % level
  EXPECT_LT(ks, bound) << "KS " << ks;
  EXPECT_NE(r.note.find("with replacement"), std::string::npos) << r.note;
}

TEST(RandomsLike, BoxRandomsInTheBoxOrTheBoundingBox) {
  const double L = 200;
  const PointSet data = generate_clustered_box(5000, 3, L, ClusterOptions{}, 2);
  RandomsLike in_box;
  in_box.box = {L, L, L};
  const GeneratedRandoms a = generate_randoms_like(data, 20000, in_box, 3);
  for (int d = 0; d < 3; ++d)
    for (double x : a.points.coord(d)) ASSERT_TRUE(x >= 0 && x < L);
  EXPECT_NE(a.note.find("uniform in the box"), std::string::npos) << a.note;
  const GeneratedRandoms b = generate_randoms_like(data, 20000, RandomsLike{}, 3);
  EXPECT_NE(b.note.find("bounding box"), std::string::npos) << b.note;
  for (int d = 0; d < 3; ++d) {
    const auto [lo, hi] = joint_range(data, data, d);
    for (double x : b.points.coord(d)) ASSERT_TRUE(x >= lo && x < hi);
    // Uniform: the mean near the middle (σ of the mean (hi − lo)/√(12 n)).
    double mean = 0;
    for (double x : b.points.coord(d)) mean += x;
    mean /= 20000;
    EXPECT_NEAR(mean, 0.5 * (lo + hi), 5 * (hi - lo) / std::sqrt(12.0 * 20000));
  }
}

TEST(RandomsLike, Errors) {
  const PointSet sky = generate_uniform_sky(100, 1);
  const PointSet box = generate_uniform_box(100, 3, 10.0, 1);
  EXPECT_EQ(kind_of_error([&] { generate_randoms_like(sky, 0, on_sky(1.0), 1); }), ErrorKind::Config);
  EXPECT_EQ(kind_of_error([&] { generate_randoms_like(PointSet(2, 0), 10, on_sky(1.0), 1); }), ErrorKind::Input);
  EXPECT_EQ(kind_of_error([&] { generate_randoms_like(box, 10, on_sky(1.0), 1); }), ErrorKind::Config);
  EXPECT_EQ(kind_of_error([&] { generate_randoms_like(sky, 10, on_sky(0.0), 1); }), ErrorKind::Config);
  PointSet bad = sky;
  bad.coord(1)[5] = 95;
  EXPECT_EQ(kind_of_error([&] { generate_randoms_like(bad, 10, on_sky(1.0), 1); }), ErrorKind::Input);
  RandomsLike few = on_sky(1.0);
  few.min_count = 1000;  // no pixel holds 1000 of 100 points
  EXPECT_EQ(kind_of_error([&] { generate_randoms_like(sky, 10, few, 1); }), ErrorKind::Input);
  RandomsLike small_box;
  small_box.box = {5, 5, 5};  // the data reach 10
  EXPECT_EQ(kind_of_error([&] { generate_randoms_like(box, 10, small_box, 1); }), ErrorKind::Input);
  small_box.box = {10, 10};
  EXPECT_EQ(kind_of_error([&] { generate_randoms_like(box, 10, small_box, 1); }), ErrorKind::Config);
}
