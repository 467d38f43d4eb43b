// Saved correlation counts (issue 5): the file reads back to the same counts, a run that reuses a
// saved RR equals a full run exactly (counts, normalisations, estimators, jackknife), and counts
// from another setting are refused.
#include <gtest/gtest.h>

#include <fstream>

#include "test_support.hpp"
#include "twobody/correlation.hpp"
#include "twobody/error.hpp"
#include "twobody/generate.hpp"

using namespace twobody;

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

void expect_error(ErrorKind kind, const std::string& needle, auto&& f) {
  try {
    f();
    ADD_FAILURE() << "expected an error containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
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
        const SavedCounts back = read_counts(path);
        expect_same(saved, back);
        // Another data catalogue of the same randoms: RR from the file, DD and DR counted.
        const CorrelationResult reused = correlation(d, rs, bins, space, b, weighted, cpu_opts(), jk, {&back});
        expect_same(full, reused);
      }
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
