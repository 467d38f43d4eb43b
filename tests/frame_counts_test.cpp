// frame_paircounts: many frames of one periodic box in one run, each frame's histogram equal to
// the float64 brute force of that frame alone, on adversarial frames (a half-spacing lattice whose
// pairs sit on the edges, points on the box's faces, uniform points), auto and cross.
#include <gtest/gtest.h>

#include <random>

#include "oracle/brute_force.hpp"
#include "test_support.hpp"
#include "twobody/error.hpp"
#include "twobody/statistics.hpp"

using namespace twobody;
using namespace testing_support;

namespace {

RunOptions cpu_opts() {
  RunOptions o;
  o.backend = "cpu";
  return o;
}

// Frame f: uniform points in [0, L), a few lattice points at multiples of ½ and points on the
// faces (coordinate 0), different in every frame.
std::vector<PointSet> frames_of(std::size_t frames, std::size_t n, double L, std::mt19937_64& rng) {
  std::vector<PointSet> out;
  for (std::size_t f = 0; f < frames; ++f) {
    oracle::Points p = uniform_points(n, 3, 0.0, L, rng);
    for (std::size_t i = 0; i < n / 4; ++i)
      for (auto& x : p.x[i]) x = 0.5 * std::floor(2.0 * x);
    for (std::size_t i = n / 4; i < n / 4 + 5; ++i) p.x[i][f % 3] = 0.0;
    out.push_back(to_pointset(p));
  }
  return out;
}

}  // namespace

TEST(FrameCounts, EveryFrameEqualsItsBruteForce) {
  std::mt19937_64 rng(fresh_seed());
  const double L = 9.0;
  const std::vector<double> edges{0.0, 0.5, 1.0, 1.5, 2.25, 3.0, 4.0};
  const Binning bins = Binning::from_edges(edges);
  const auto a = frames_of(11, 300, L, rng), b = frames_of(11, 170, L, rng);
  for (bool cross : {false, true}) {
    const FrameCounts r = frame_paircounts(a, cross ? std::span<const PointSet>(b) : std::span<const PointSet>{}, bins,
                                           Box::cube(3, L), cpu_opts());
    ASSERT_EQ(r.nbins, edges.size() - 1);
    ASSERT_EQ(r.counts.size(), a.size() * r.nbins);
    for (std::size_t f = 0; f < a.size(); ++f) {
      const oracle::Points pa = to_oracle(a[f]), pb = to_oracle(b[f]);
      const auto want = oracle::histogram(pa, cross ? &pb : nullptr, edges, 1, {L, L, L});
      for (std::size_t k = 0; k < r.nbins; ++k)
        EXPECT_EQ(r.counts[f * r.nbins + k], want.counts[k]) << "frame " << f << " bin " << k << " cross " << cross;
    }
  }
  // rdf's expected counts, the same function rdf's column uses.
  const auto e = rdf_expected(300, std::nullopt, bins, Box::cube(3, L));
  const auto one = rdf(a[0], nullptr, bins, Box::cube(3, L), cpu_opts());
  EXPECT_EQ(e, one.derived.front().values);
}

TEST(FrameCounts, ManyFramesTakeSeveralRuns) {
  // 150 small frames: 64 a run at most, so three runs, each frame still its own histogram.
  std::mt19937_64 rng(fresh_seed());
  const double L = 6.0;
  const std::vector<double> edges{0.0, 0.5, 1.0, 2.0, 2.5};
  const Binning bins = Binning::from_edges(edges);
  const auto a = frames_of(150, 40, L, rng);
  const FrameCounts r = frame_paircounts(a, {}, bins, Box::cube(3, L), cpu_opts());
  EXPECT_EQ(r.info.plan.rfind("64 frame(s) a run, 3 run(s)", 0), 0u) << r.info.plan;
  ASSERT_EQ(r.counts.size(), a.size() * r.nbins);
  for (std::size_t f = 0; f < a.size(); ++f) {
    const auto want = oracle::histogram(to_oracle(a[f]), nullptr, edges, 1, {L, L, L});
    for (std::size_t k = 0; k < r.nbins; ++k) EXPECT_EQ(r.counts[f * r.nbins + k], want.counts[k]) << f << " " << k;
  }
  EXPECT_EQ(r.info.n_a, 150u * 40u);
}

TEST(FrameCounts, ClearRefusals) {
  std::mt19937_64 rng(fresh_seed());
  const auto a = frames_of(2, 50, 9.0, rng), b = frames_of(3, 50, 9.0, rng);
  const Binning bins = Binning::linear(0.0, 3.0, 3);
  expect_error(ErrorKind::Config, "no frames", [&] { frame_paircounts({}, {}, bins, Box::cube(3, 9.0), cpu_opts()); });
  expect_error(ErrorKind::Config, "2 frames of the first group and 3", [&] {
    frame_paircounts(a, b, bins, Box::cube(3, 9.0), cpu_opts());
  });
  const std::vector<double> tilted{9.0, 0.0, 0.0, 1.0, 9.0, 0.0, 0.0, 0.0, 9.0};
  expect_error(ErrorKind::Config, "orthorhombic", [&] {
    frame_paircounts(a, {}, bins, Box::from_matrix(tilted), cpu_opts());
  });
  // r_max beyond half the box: the engine's own refusal, as for one frame.
  expect_error(ErrorKind::Config, "", [&] {
    frame_paircounts(a, {}, Binning::linear(0.0, 5.0, 2), Box::cube(3, 9.0), cpu_opts());
  });
}
