// Saved correlation counts (issue 5): the file reads back to the same counts, a run that reuses a
// saved RR equals a full run exactly (counts, normalisations, estimators, jackknife), and counts
// from another setting are refused; for ξ, w(θ) and the 2-D estimators (ξ(r_p, π), w_p, ξ(s, μ)).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "test_support.hpp"
#include "twobody/clustering2d.hpp"
#include "twobody/correlation.hpp"
#include "twobody/error.hpp"
#include "twobody/generate.hpp"
#include "twobody/jackknife.hpp"
#include "twobody/statistics.hpp"

using namespace twobody;
using testing_support::expect_error;

namespace {

// One thread: weighted sums are then summed in one order, run after run, so "equal" means equal.
RunOptions cpu_opts() {
  RunOptions o;
  o.backend = "cpu";
  o.threads = 1;
  return o;
}

PointSet with_weights(PointSet p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  std::vector<double> w(p.size());
  for (auto& x : w) x = u(rng);
  p.set_weights(std::move(w));
  return p;
}

void expect_same(const CorrelationResult& a, const CorrelationResult& b) {
  EXPECT_EQ(a.raw.counts, b.raw.counts);
  EXPECT_EQ(a.raw.weighted, b.raw.weighted);
  EXPECT_EQ(a.norm_dd, b.norm_dd);
  EXPECT_EQ(a.norm_dr, b.norm_dr);
  EXPECT_EQ(a.norm_rr, b.norm_rr);
  ASSERT_EQ(a.derived.size(), b.derived.size());
  for (std::size_t c = 0; c < a.derived.size(); ++c) {
    EXPECT_EQ(a.derived[c].name, b.derived[c].name);
    const auto& x = a.derived[c].values;
    const auto& y = b.derived[c].values;
    ASSERT_EQ(x.size(), y.size());
    for (std::size_t k = 0; k < x.size(); ++k)  // NaN estimators (empty bins) compare equal too
      EXPECT_TRUE(x[k] == y[k] || (std::isnan(x[k]) && std::isnan(y[k]))) << a.derived[c].name << " bin " << k;
  }
  ASSERT_EQ(bool(a.jackknife), bool(b.jackknife));
  if (!a.jackknife) return;
  EXPECT_EQ(a.jackknife->rr, b.jackknife->rr);
  EXPECT_EQ(a.jackknife->wrr, b.jackknife->wrr);
  EXPECT_EQ(a.jackknife->norm_rr, b.jackknife->norm_rr);
  EXPECT_EQ(a.jackknife->covariance, b.jackknife->covariance);
  EXPECT_EQ(a.jackknife->samples, b.jackknife->samples);
}

void expect_same(const SavedCounts& a, const SavedCounts& b) {
  EXPECT_EQ(a.space, b.space);
  EXPECT_EQ(bool(a.box), bool(b.box));
  if (a.box && b.box) EXPECT_EQ(a.box->length, b.box->length);
  EXPECT_EQ(a.weighted, b.weighted);
  EXPECT_EQ(a.binning.edges(), b.binning.edges());
  EXPECT_EQ(a.binning2d.kind(), b.binning2d.kind());
  EXPECT_EQ(a.binning2d.line_of_sight(), b.binning2d.line_of_sight());
  EXPECT_EQ(a.binning2d.outer().edges(), b.binning2d.outer().edges());
  EXPECT_EQ(a.binning2d.inner().edges(), b.binning2d.inner().edges());
  EXPECT_EQ(a.n_data, b.n_data);
  EXPECT_EQ(a.n_randoms, b.n_randoms);
  EXPECT_EQ(a.norm_dd, b.norm_dd);
  EXPECT_EQ(a.norm_dr, b.norm_dr);
  EXPECT_EQ(a.norm_rr, b.norm_rr);
  EXPECT_EQ(a.dd, b.dd);
  EXPECT_EQ(a.wdd, b.wdd);
  EXPECT_EQ(a.dr, b.dr);
  EXPECT_EQ(a.rr, b.rr);
  EXPECT_EQ(a.wdr, b.wdr);
  EXPECT_EQ(a.wrr, b.wrr);
  ASSERT_EQ(bool(a.jackknife), bool(b.jackknife));
  if (!a.jackknife) return;
  const auto &x = *a.jackknife, &y = *b.jackknife;
  EXPECT_EQ(x.regions, y.regions);
  EXPECT_EQ(x.layout, y.layout);
  EXPECT_EQ(x.labels, y.labels);
  EXPECT_EQ(x.n_data, y.n_data);
  EXPECT_EQ(x.n_randoms, y.n_randoms);
  EXPECT_EQ(x.dd, y.dd);
  EXPECT_EQ(x.dr, y.dr);
  EXPECT_EQ(x.rr, y.rr);
  EXPECT_EQ(x.wdd, y.wdd);
  EXPECT_EQ(x.wdr, y.wdr);
  EXPECT_EQ(x.wrr, y.wrr);
  EXPECT_EQ(x.norm_dd, y.norm_dd);
  EXPECT_EQ(x.norm_dr, y.norm_dr);
  EXPECT_EQ(x.norm_rr, y.norm_rr);
}

bool same_values(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) return false;
  for (std::size_t k = 0; k < x.size(); ++k)  // NaN estimators (empty bins) compare equal too
    if (!(x[k] == y[k] || (std::isnan(x[k]) && std::isnan(y[k])))) return false;
  return true;
}

void expect_same(const Binned2DResult& a, const Binned2DResult& b) {
  EXPECT_EQ(a.raw.counts, b.raw.counts);
  EXPECT_EQ(a.raw.weighted, b.raw.weighted);
  EXPECT_EQ(a.norm_dd, b.norm_dd);
  EXPECT_EQ(a.norm_dr, b.norm_dr);
  EXPECT_EQ(a.norm_rr, b.norm_rr);
  for (const auto* cols : {&a.derived, &a.per_outer}) {
    const auto& other = cols == &a.derived ? b.derived : b.per_outer;
    ASSERT_EQ(cols->size(), other.size());
    for (std::size_t c = 0; c < cols->size(); ++c) {
      EXPECT_EQ((*cols)[c].name, other[c].name);
      EXPECT_TRUE(same_values((*cols)[c].values, other[c].values)) << (*cols)[c].name;
    }
  }
  ASSERT_EQ(bool(a.jackknife), bool(b.jackknife));
  if (!a.jackknife) return;
  EXPECT_EQ(a.jackknife->rr, b.jackknife->rr);
  EXPECT_EQ(a.jackknife->norm_rr, b.jackknife->norm_rr);
  EXPECT_TRUE(same_values(a.jackknife->samples, b.jackknife->samples));
  EXPECT_TRUE(same_values(a.per_outer_samples, b.per_outer_samples));
  EXPECT_TRUE(same_values(a.per_outer_jackknife.covariance, b.per_outer_jackknife.covariance));
}

}  // namespace

TEST(SavedCounts, ReusedRREqualsFullRunBoxOpenAndSky) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const double L = 60.0;
  const Box box = Box::cube(3, L);
  for (CorrelationSpace space : {CorrelationSpace::Box, CorrelationSpace::Open, CorrelationSpace::Sky})
    for (bool weighted : {false, true})
      for (int regions : {0, 4}) {
        SCOPED_TRACE(::testing::Message() << "space " << int(space) << " weighted " << weighted << " regions "
                                          << regions);
        const bool sky = space == CorrelationSpace::Sky;
        // Uniform data: every jackknife region holds some.
        PointSet d = sky ? generate_uniform_sky(1500, seed) : generate_uniform_box(1500, 3, L, seed);
        std::vector<PointSet> rs;
        for (std::uint64_t q = 1; q <= 2; ++q)
          rs.push_back(sky ? generate_uniform_sky(1800, seed + q) : generate_uniform_box(1800, 3, L, seed + q));
        if (weighted) {
          d = with_weights(d, seed + 3);
          for (std::size_t q = 0; q < rs.size(); ++q) rs[q] = with_weights(rs[q], seed + 4 + q);
        }
        const Binning bins = sky ? Binning::logarithmic(0.5, 10.0, 6) : Binning::logarithmic(0.5, 12.0, 6);
        const std::optional<Box> b = space == CorrelationSpace::Box ? std::optional<Box>(box) : std::nullopt;
        JackknifeRequest jk;
        jk.regions = regions;
        const CorrelationResult full = correlation(d, rs, bins, space, b, weighted, cpu_opts(), jk);
        const SavedCounts saved = saved_counts(full, space, b, weighted);
        const std::string path = ::testing::TempDir() + "counts.json";
        write_counts(path, saved);
        {
          // An auto-correlation's counts stay version 1 (cross-correlations': 2).
          std::ifstream in(path);
          EXPECT_EQ(nlohmann::json::parse(in).at("version").get<int>(), 1);
        }
        const SavedCounts back = read_counts(path);
        expect_same(saved, back);
        // Another data catalogue of the same randoms: RR from the file, DD and DR counted.
        const CorrelationResult reused = correlation(d, rs, bins, space, b, weighted, cpu_opts(), jk, {&back});
        expect_same(full, reused);
      }
}

// Sky regions by k-means come from the data: a saved RR reused with another data catalogue must
// keep the regions it was counted in, not those k-means would fit on the new data. The centres
// travel with the counts; the reusing run labels its data and randoms by them, so its region
// counts and jackknife equal a full run whose region labels are the nearest saved centre. A file
// without centres (from before they were kept) is refused.
TEST(SavedCounts, SkyRegionsOfAReusedRRAreItsOwn) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PointSet d1 = generate_uniform_sky(1500, seed), d2 = generate_uniform_sky(1700, seed + 100);
  const std::vector<PointSet> rs = {generate_uniform_sky(1800, seed + 1), generate_uniform_sky(1600, seed + 2)};
  const Binning bins = Binning::logarithmic(0.5, 10.0, 6);
  JackknifeRequest jk;
  jk.regions = 4;
  const CorrelationResult full1 = correlation(d1, rs, bins, CorrelationSpace::Sky, std::nullopt, false, cpu_opts(), jk);
  ASSERT_TRUE(full1.jackknife);
  ASSERT_EQ(full1.jackknife->centres.size(), 4u);
  const std::string path = ::testing::TempDir() + "sky_counts.json";
  write_counts(path, saved_counts(full1, CorrelationSpace::Sky, std::nullopt, false));
  const SavedCounts back = read_counts(path);
  ASSERT_TRUE(back.jackknife);
  EXPECT_EQ(back.jackknife->centres, full1.jackknife->centres);  // bit for bit through the JSON

  const CorrelationResult reused = correlation(d2, rs, bins, CorrelationSpace::Sky, std::nullopt, false, cpu_opts(), jk, {&back});
  ASSERT_TRUE(reused.jackknife);
  EXPECT_EQ(reused.jackknife->centres, back.jackknife->centres);
  // k-means on d2 alone would have fitted other centres.
  EXPECT_NE(sky_region_centres(sky_to_unit_vectors(d2), 4, jk.seed), back.jackknife->centres);

  // The reference: every catalogue labelled by its nearest saved centre, counted in full.
  const auto labelled = [&](PointSet p) {
    p.set_regions(nearest_centre(sky_to_unit_vectors(p), back.jackknife->centres));
    return p;
  };
  std::vector<PointSet> rs_l;
  for (const PointSet& r : rs) rs_l.push_back(labelled(r));
  JackknifeRequest by_labels;
  by_labels.use_labels = true;
  const CorrelationResult ref = correlation(labelled(d2), rs_l, bins, CorrelationSpace::Sky, std::nullopt, false, cpu_opts(), by_labels);
  ASSERT_TRUE(ref.jackknife);
  EXPECT_EQ(reused.raw.counts, ref.raw.counts);
  EXPECT_EQ(reused.jackknife->n_data, ref.jackknife->n_data);
  EXPECT_EQ(reused.jackknife->n_randoms, ref.jackknife->n_randoms);
  EXPECT_EQ(reused.jackknife->dd, ref.jackknife->dd);
  EXPECT_EQ(reused.jackknife->dr, ref.jackknife->dr);
  EXPECT_EQ(reused.jackknife->rr, ref.jackknife->rr);
  EXPECT_TRUE(same_values(reused.jackknife->samples, ref.jackknife->samples));
  EXPECT_TRUE(same_values(reused.jackknife->covariance, ref.jackknife->covariance));

  SavedCounts old = back;
  old.jackknife->centres.clear();
  expect_error(ErrorKind::Config, "centres", [&] {
    correlation(d2, rs, bins, CorrelationSpace::Sky, std::nullopt, false, cpu_opts(), jk, {&old});
  });
}

TEST(SavedCounts, MismatchesAreConfigErrors) {
  const auto seed = testing_support::fresh_seed();
  const double L = 40.0;
  const Box box = Box::cube(3, L);
  const PointSet d = generate_uniform_box(400, 3, L, seed);
  const std::vector<PointSet> rs = {generate_uniform_box(500, 3, L, seed + 1)};
  const Binning bins = Binning::linear(0, 5, 4);
  const CorrelationResult full = correlation(d, rs, bins, CorrelationSpace::Box, box, false, cpu_opts());
  const SavedCounts c = saved_counts(full, CorrelationSpace::Box, box, false);
  const ReusedCounts reuse{&c};
  expect_error(ErrorKind::Config, "edges must be equal", [&] {
    correlation(d, rs, Binning::linear(0, 5, 5), CorrelationSpace::Box, box, false, cpu_opts(), {}, reuse);
  });
  expect_error(ErrorKind::Config, "open space", [&] {
    correlation(d, rs, bins, CorrelationSpace::Open, std::nullopt, false, cpu_opts(), {}, reuse);
  });
  expect_error(ErrorKind::Config, "box", [&] {
    correlation(d, rs, bins, CorrelationSpace::Box, Box::cube(3, 41.0), false, cpu_opts(), {}, reuse);
  });
  expect_error(ErrorKind::Config, "unweighted", [&] {
    correlation(with_weights(d, 1), {with_weights(rs[0], 2)}, bins, CorrelationSpace::Box, box, true, cpu_opts(), {},
                reuse);
  });
  expect_error(ErrorKind::Config, "counted with 500 random points, this run has 600", [&] {
    correlation(d, {generate_uniform_box(600, 3, L, seed + 2)}, bins, CorrelationSpace::Box, box, false, cpu_opts(), {},
                reuse);
  });
  JackknifeRequest jk;
  jk.regions = 8;
  expect_error(ErrorKind::Config, "no jackknife regions", [&] {
    correlation(d, rs, bins, CorrelationSpace::Box, box, false, cpu_opts(), jk, reuse);
  });
  const CorrelationResult j8 = correlation(d, rs, bins, CorrelationSpace::Box, box, false, cpu_opts(), jk);
  const SavedCounts c8 = saved_counts(j8, CorrelationSpace::Box, box, false);
  jk.regions = 27;
  expect_error(ErrorKind::Config, "jackknife regions", [&] {
    correlation(d, rs, bins, CorrelationSpace::Box, box, false, cpu_opts(), jk, {&c8});
  });
}

TEST(SavedCounts, BadFilesAreInputErrors) {
  const std::string dir = ::testing::TempDir();
  expect_error(ErrorKind::Input, "cannot open", [&] { read_counts(dir + "no-such-counts.json"); });
  std::ofstream(dir + "notjson.json") << "hello";
  expect_error(ErrorKind::Input, "not a readable counts file", [&] { read_counts(dir + "notjson.json"); });
  std::ofstream(dir + "other.json") << R"({"format": "something"})";
  expect_error(ErrorKind::Input, "not a twobody counts file", [&] { read_counts(dir + "other.json"); });
  std::ofstream(dir + "v9.json") << R"({"format": "twobody-counts", "version": 9})";
  expect_error(ErrorKind::Input, "version 9", [&] { read_counts(dir + "v9.json"); });
}

TEST(SavedCounts2D, ReusedRREqualsFullRunRpPiAndSMu) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const double L = 50.0;
  for (bool periodic : {true, false})
    for (bool weighted : {false, true})
      for (int regions : {0, 4}) {
        SCOPED_TRACE(::testing::Message() << "periodic " << periodic << " weighted " << weighted << " regions "
                                          << regions);
        PointSet d = generate_uniform_box(1500, 3, L, seed);
        std::vector<PointSet> rs = {generate_uniform_box(1200, 3, L, seed + 1), generate_uniform_box(900, 3, L, seed + 2)};
        if (weighted) {
          d = with_weights(d, seed + 3);
          for (std::size_t q = 0; q < rs.size(); ++q) rs[q] = with_weights(rs[q], seed + 4 + q);
        }
        const std::optional<Box> box = periodic ? std::optional<Box>(Box::cube(3, L)) : std::nullopt;
        JackknifeRequest jk;
        jk.regions = regions;
        for (const Binning2D& bins : {Binning2D::rp_pi(Binning::logarithmic(0.5, 10.0, 4), 8.0, 4),
                                      Binning2D::s_mu(Binning::linear(1.0, 9.0, 3), 0.8, 4)}) {
          const Binned2DResult full =
              correlation_2d(d, rs, bins, box, weighted, Estimator::LandySzalay, cpu_opts(), jk);
          const SavedCounts saved = saved_counts(full, box, weighted);
          const std::string path = ::testing::TempDir() + "counts2d.json";
          write_counts(path, saved);
          const SavedCounts back = read_counts(path);
          expect_same(saved, back);
          const Binned2DResult reused =
              correlation_2d(d, rs, bins, box, weighted, Estimator::LandySzalay, cpu_opts(), jk, {&back});
          expect_same(full, reused);
        }
      }
}

TEST(SavedCounts2D, MismatchesAreConfigErrors) {
  const auto seed = testing_support::fresh_seed();
  const double L = 40.0;
  const Box box = Box::cube(3, L);
  const PointSet d = generate_uniform_box(400, 3, L, seed);
  const std::vector<PointSet> rs = {generate_uniform_box(500, 3, L, seed + 1)};
  const Binning rp = Binning::linear(1, 6, 3);
  const Binning2D bins = Binning2D::rp_pi(rp, 5.0, 5);
  const Binned2DResult full = correlation_2d(d, rs, bins, box, false, Estimator::LandySzalay, cpu_opts());
  const SavedCounts c = saved_counts(full, box, false);
  const ReusedCounts reuse{&c};
  const auto run2d = [&](const Binning2D& b, const std::optional<Box>& bx, const JackknifeRequest& jk = {}) {
    correlation_2d(d, rs, b, bx, false, Estimator::LandySzalay, cpu_opts(), jk, reuse);
  };
  for (const Binning2D& other : {Binning2D::rp_pi(rp, 5.0, 10), Binning2D::rp_pi(rp, 4.0, 5),
                                 Binning2D::rp_pi(Binning::linear(1, 6, 4), 5.0, 5), Binning2D::s_mu(rp, 1.0, 5)})
    expect_error(ErrorKind::Config, "saved RR cannot be reused: counted in (r_p, pi): 3 r_p bins", [&] { run2d(other, box); });
  expect_error(ErrorKind::Config, "open space", [&] { run2d(bins, std::nullopt); });
  expect_error(ErrorKind::Config, "box", [&] { run2d(bins, Box::cube(3, 41.0)); });
  JackknifeRequest jk;
  jk.regions = 8;
  expect_error(ErrorKind::Config, "no jackknife regions", [&] { run2d(bins, box, jk); });
  expect_error(ErrorKind::Config, "unweighted", [&] {
    correlation_2d(with_weights(d, 1), {with_weights(rs[0], 2)}, bins, box, true, Estimator::LandySzalay, cpu_opts(),
                   {}, reuse);
  });
  // 1-D counts into a 2-D run and back, the mock line of sight against the z axis.
  const CorrelationResult xi = correlation(d, rs, rp, CorrelationSpace::Box, box, false, cpu_opts());
  const SavedCounts c1 = saved_counts(xi, CorrelationSpace::Box, box, false);
  expect_error(ErrorKind::Config, "counted in 3 bins [1, 6], this run's are (r_p, pi)", [&] {
    correlation_2d(d, rs, bins, box, false, Estimator::LandySzalay, cpu_opts(), {}, {&c1});
  });
  expect_error(ErrorKind::Config, "counted in (r_p, pi)", [&] {
    correlation(d, rs, rp, CorrelationSpace::Box, box, false, cpu_opts(), {}, reuse);
  });
  const Binned2DResult open = correlation_2d(d, rs, bins, std::nullopt, false, Estimator::LandySzalay, cpu_opts());
  const SavedCounts co = saved_counts(open, std::nullopt, false);
  expect_error(ErrorKind::Config, "midpoint line of sight", [&] {
    correlation_2d(d, rs, Binning2D::rp_pi(rp, 5.0, 5, LineOfSight::PairMidpoint), std::nullopt, false,
                   Estimator::LandySzalay, cpu_opts(), {}, {&co});
  });
  // The analytic RR of a box: nothing counted to save, nothing to replace.
  const Binned2DResult analytic = correlation_2d(d, {}, bins, box, false, Estimator::LandySzalay, cpu_opts());
  expect_error(ErrorKind::Config, "analytic RR is not counted", [&] { saved_counts(analytic, box, false); });
  expect_error(ErrorKind::Config, "without random catalogues", [&] {
    correlation_2d(d, {}, bins, box, false, Estimator::LandySzalay, cpu_opts(), {}, reuse);
  });
}

TEST(SavedCounts2D, FileHoldsTheBinsAndBadBinsAreInputErrors) {
  const auto seed = testing_support::fresh_seed();
  const double L = 40.0;
  const Box box = Box::cube(3, L);
  const PointSet d = generate_uniform_box(300, 3, L, seed);
  const std::vector<PointSet> rs = {generate_uniform_box(300, 3, L, seed + 1)};
  const Binning2D bins = Binning2D::s_mu(Binning::linear(1, 6, 3), 0.9, 6);
  const std::string path = ::testing::TempDir() + "counts-smu.json";
  write_counts(path, saved_counts(correlation_2d(d, rs, bins, box, false, Estimator::Natural, cpu_opts()), box, false));
  nlohmann::json j;
  std::ifstream(path) >> j;
  EXPECT_EQ(j["statistic"], "xi-smu");
  EXPECT_EQ(j["bins2d"]["kind"], "smu");
  EXPECT_EQ(j["bins2d"]["s_edges"].get<std::vector<double>>(), bins.outer().edges());
  EXPECT_EQ(j["bins2d"]["mu_max"], 0.9);
  EXPECT_EQ(j["bins2d"]["nmu_bins"], 6);
  EXPECT_EQ(j["bins2d"]["line_of_sight"], "z-axis");
  EXPECT_FALSE(j.contains("edges"));
  j["bins2d"]["kind"] = "cubes";
  std::ofstream(path) << j.dump();
  expect_error(ErrorKind::Input, "unknown 2-D bins 'cubes'", [&] { read_counts(path); });
  j["bins2d"]["kind"] = "smu";
  j["bins2d"]["line_of_sight"] = "sideways";
  std::ofstream(path) << j.dump();
  expect_error(ErrorKind::Input, "unknown line of sight", [&] { read_counts(path); });
}

// Cross-correlations (1-D in a box, open space and on the sky; 2-D (r_p, π) and (s, μ)): the file
// holds D1D2, ΣD1R2, ΣR1D2 and ΣR1R2 with their normalisations and region counts and reads back to
// them; a run that takes R1R2 from it equals a full run exactly (every column, the jackknife's
// samples and covariance); an auto-correlation's RR is refused for a cross run, and a
// cross-correlation's R1R2 for an auto run.
TEST(SavedCounts, CrossCorrelationR1R2IsReusedExactly) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const double L = 60.0;
  for (CorrelationSpace space : {CorrelationSpace::Box, CorrelationSpace::Open, CorrelationSpace::Sky})
    for (bool weighted : {false, true})
      for (int regions : {0, 4}) {
        SCOPED_TRACE(::testing::Message() << "space " << int(space) << " weighted " << weighted << " regions " << regions);
        const bool sky = space == CorrelationSpace::Sky;
        const auto make = [&](std::size_t n, std::uint64_t s) {
          PointSet p = sky ? generate_uniform_sky(n, s) : generate_uniform_box(n, 3, L, s);
          return weighted ? with_weights(std::move(p), s + 100) : p;
        };
        const PointSet d1 = make(1200, seed), d2 = make(900, seed + 1);
        const std::vector<PointSet> r1 = {make(1300, seed + 2), make(700, seed + 3)}, r2 = {make(1100, seed + 4)};
        const Binning bins = sky ? Binning::logarithmic(0.5, 10.0, 6) : Binning::logarithmic(0.5, 12.0, 6);
        const std::optional<Box> b = space == CorrelationSpace::Box ? std::optional<Box>(Box::cube(3, L)) : std::nullopt;
        JackknifeRequest jk;
        jk.regions = regions;
        const CorrelationResult full = cross_correlation(d1, d2, r1, r2, bins, space, b, weighted, cpu_opts(), jk);
        const SavedCounts saved = saved_counts(full, space, b, weighted);
        EXPECT_TRUE(saved.cross);
        EXPECT_EQ(saved.n_data2, d2.size());
        const std::string path = ::testing::TempDir() + "cross-counts.json";
        write_counts(path, saved);
        {
          // Version 2: an older twobody (auto-correlations only) refuses the file instead of reading
          // R1R2 as an RR.
          std::ifstream in(path);
          EXPECT_EQ(nlohmann::json::parse(in).at("version").get<int>(), 2);
        }
        const SavedCounts back = read_counts(path);
        expect_same(saved, back);
        EXPECT_TRUE(back.cross);
        EXPECT_EQ(back.rd, saved.rd);
        EXPECT_EQ(back.wrd, saved.wrd);
        EXPECT_EQ(back.norm_rd, saved.norm_rd);
        EXPECT_EQ(back.n_data2, saved.n_data2);
        if (regions) {
          EXPECT_EQ(back.jackknife->rd, saved.jackknife->rd);
          EXPECT_EQ(back.jackknife->norm_rd, saved.jackknife->norm_rd);
          EXPECT_EQ(back.jackknife->wrd, saved.jackknife->wrd);
        }
        const CorrelationResult reused = cross_correlation(d1, d2, r1, r2, bins, space, b, weighted, cpu_opts(), jk, {&back});
        EXPECT_NE(reused.raw.info.plan.find("R1R2 from the saved counts"), std::string::npos) << reused.raw.info.plan;
        expect_same(full, reused);
        // Auto and cross counts do not stand in for each other.
        expect_error(ErrorKind::Config, "this run is an auto-correlation",
                     [&] { correlation(d1, r1, bins, space, b, weighted, cpu_opts(), jk, {&back}); });
        const SavedCounts autos = saved_counts(correlation(d1, r1, bins, space, b, weighted, cpu_opts(), jk), space, b, weighted);
        expect_error(ErrorKind::Config, "this run is a cross-correlation",
                     [&] { cross_correlation(d1, d2, r1, r2, bins, space, b, weighted, cpu_opts(), jk, {&autos}); });
      }
  // 2-D.
  PointSet d1 = generate_uniform_box(1200, 3, 50.0, seed + 7), d2 = generate_uniform_box(800, 3, 50.0, seed + 8);
  const std::vector<PointSet> r1 = {generate_uniform_box(1000, 3, 50.0, seed + 9)}, r2 = {generate_uniform_box(900, 3, 50.0, seed + 10)};
  for (const Binning2D& bins : {Binning2D::rp_pi(Binning::logarithmic(0.5, 10.0, 4), 8.0, 4),
                                Binning2D::s_mu(Binning::linear(1.0, 9.0, 3), 0.8, 4)}) {
    JackknifeRequest jk;
    jk.regions = 4;
    const Binned2DResult full =
        cross_correlation_2d(d1, d2, r1, r2, bins, std::nullopt, false, Estimator::LandySzalay, cpu_opts(), jk);
    const SavedCounts saved = saved_counts(full, std::nullopt, false);
    const std::string path = ::testing::TempDir() + "cross-counts2d.json";
    write_counts(path, saved);
    const SavedCounts back = read_counts(path);
    expect_same(saved, back);
    const Binned2DResult reused =
        cross_correlation_2d(d1, d2, r1, r2, bins, std::nullopt, false, Estimator::LandySzalay, cpu_opts(), jk, {&back});
    expect_same(full, reused);
  }
}
