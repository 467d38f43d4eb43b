// The decomposition into pair jobs (engine/pair_jobs.hpp) that MPI ranks and a process's devices
// share: every pair the statistic can count lies in exactly one job, with the cross jobs reading
// only their halos, on uniform, clustered, lattice (many equal coordinates), offset and periodic
// sets; and the cut depends on the points alone, not on the threads that made it.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <random>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "twobody/detail/engine/pair_jobs.hpp"
#include "twobody/generate.hpp"
#include "twobody/statistics.hpp"

namespace twobody {
namespace {

using testing_support::fresh_seed;

Statistic cutoff(Traversal t, Metric m, double reach) {
  Statistic s;
  s.traversal = t;
  s.metric = m;
  s.reduction = reduce::Histogram{Binning::linear(0, reach, 4)};
  return s;
}

double separation(const Statistic& s, const PointSet& a, std::size_t i, const PointSet& b, std::size_t j) {
  double d2 = 0;
  for (int d = 0; d < a.dim(); ++d) {
    double x = a.coord(d)[i] - b.coord(d)[j];
    if (s.metric == Metric::Periodic) x -= s.box.length[d] * std::nearbyint(x / s.box.length[d]);
    d2 += x * x;
  }
  return std::sqrt(d2);
}

// Each pair within the reach counted by exactly one job; none by two.
void expect_every_pair_once(const Statistic& s, const PointSet& a, const PointSet* b, int slabs) {
  SCOPED_TRACE(std::to_string(slabs) + " slabs" + (b ? ", cross" : ", auto"));
  const dist::Decomposition D = dist::decompose(s, a, b, 1, slabs);
  const dist::SlabChunks& B = b ? D.b : D.a;
  const PointSet& bs = b ? *b : a;
  std::vector<std::size_t> pos_a(a.size()), pos_b(bs.size());
  for (std::size_t k = 0; k < D.a.order.size(); ++k) pos_a[D.a.order[k]] = k;
  for (std::size_t k = 0; k < B.order.size(); ++k) pos_b[B.order[k]] = k;
  const double reach = dist::statistic_reach(s);
  double read = 0, whole = 0;
  for (const auto& j : D.jobs) {
    ASSERT_LE(j.a_first, j.a_last);
    ASSERT_LE(j.b_first, j.b_last);
    ASSERT_GE(j.a_first, D.a.begin[j.a]);
    ASSERT_LE(j.a_last, D.a.begin[j.a + 1]);
    ASSERT_GE(j.b_first, B.begin[j.b]);
    ASSERT_LE(j.b_last, B.begin[j.b + 1]);
    if (!j.is_auto) {
      read += static_cast<double>(j.a_last - j.a_first + j.b_last - j.b_first);
      whole += static_cast<double>(D.a.size(j.a) + B.size(j.b));
    }
  }
  const auto in = [](std::size_t p, std::size_t first, std::size_t last) { return p >= first && p < last; };
  std::size_t within = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t k = b ? 0 : i + 1; k < bs.size(); ++k) {
      const std::size_t pi = pos_a[i], pk = pos_b[k];
      int jobs = 0;
      for (const auto& j : D.jobs) {
        if (j.is_auto) jobs += in(pi, j.a_first, j.a_last) && in(pk, j.a_first, j.a_last);
        else if (b) jobs += in(pi, j.a_first, j.a_last) && in(pk, j.b_first, j.b_last);
        else jobs += (in(pi, j.a_first, j.a_last) && in(pk, j.b_first, j.b_last)) ||
                     (in(pk, j.a_first, j.a_last) && in(pi, j.b_first, j.b_last));
      }
      ASSERT_LE(jobs, 1) << "pair " << i << ", " << k;
      if (separation(s, a, i, bs, k) < reach) {
        ++within;
        ASSERT_EQ(jobs, 1) << "pair " << i << ", " << k << " at " << separation(s, a, i, bs, k);
      }
    }
  EXPECT_GT(within, 0u);
  if (D.halos && whole > 0) EXPECT_LE(read, whole);
}

TEST(PairJobs, EveryPairWithinReachInExactlyOneJob) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PointSet a = generate_uniform_box(1400, 3, 50.0, seed), b = generate_clustered_box(900, 3, 50.0, {}, seed + 1);
  for (int slabs : {1, 3, 8, 24}) {
    expect_every_pair_once(cutoff(Traversal::Auto, Metric::Euclidean, 4.0), a, nullptr, slabs);
    expect_every_pair_once(cutoff(Traversal::Cross, Metric::Euclidean, 4.0), a, &b, slabs);
  }
}

TEST(PairJobs, PeriodicPairsAcrossTheWrap) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PointSet a = generate_uniform_box(1200, 3, 20.0, seed), b = generate_uniform_box(700, 3, 20.0, seed + 1);
  Statistic s = cutoff(Traversal::Auto, Metric::Periodic, 3.0);
  s.box = Box::cube(3, 20.0);
  for (int slabs : {2, 5, 12}) {
    expect_every_pair_once(s, a, nullptr, slabs);
    s.traversal = Traversal::Cross;
    expect_every_pair_once(s, a, &b, slabs);
    s.traversal = Traversal::Auto;
  }
}

// A lattice: whole planes share a coordinate, so fine bins are empty or hold a plane, and pairs lie
// exactly at the reach; a huge offset leaves the coordinates few bits of spread.
TEST(PairJobs, LatticesAndOffsets) {
  const PointSet lattice = testing_support::to_pointset(testing_support::half_lattice(12, 9, 8));
  for (int slabs : {2, 7, 16}) expect_every_pair_once(cutoff(Traversal::Auto, Metric::Euclidean, 1.0), lattice, nullptr, slabs);
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  PointSet far = generate_uniform_box(1000, 3, 10.0, seed);
  for (int d = 0; d < 3; ++d)
    for (double& x : far.coord(d)) x += 1e6;
  for (int slabs : {4, 9}) expect_every_pair_once(cutoff(Traversal::Auto, Metric::Euclidean, 1.5), far, nullptr, slabs);
}

TEST(PairJobs, AnglesOnTheSphere) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PointSet a = sky_to_unit_vectors(generate_clustered_sky(1200, {}, seed));
  Statistic s;
  s.traversal = Traversal::Auto;
  s.metric = Metric::Angular;
  s.reduction = reduce::Histogram{Binning::linear(0, 8, 4)};
  for (int slabs : {3, 10}) expect_every_pair_once(s, a, nullptr, slabs);
}

// The cut of a set large enough for the parallel counting pass: a permutation, slabs in
// increasing coordinate and none empty, the same order whatever the number of threads; a short
// reach reads thin halos.
TEST(PairJobs, CutIsThePointsAloneAndHalosAreThin) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  PointSet a = generate_uniform_box(400000, 3, 200.0, seed);
  // Many equal coordinates too: a tenth of the points on four planes.
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < a.size(); i += 10) a.coord(0)[i] = 50.0 * static_cast<double>(rng() % 4);
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);
  const dist::SlabChunks one = dist::cut_into_slabs(a, 0, 16);
  omp_set_num_threads(std::max(2, before));
  const dist::SlabChunks many = dist::cut_into_slabs(a, 0, 16);
  omp_set_num_threads(before);
  ASSERT_EQ(one.order, many.order);
  ASSERT_EQ(one.begin, many.begin);
  std::vector<char> seen(a.size(), 0);
  for (std::uint64_t i : one.order) {
    ASSERT_EQ(seen[i], 0);
    seen[i] = 1;
  }
  ASSERT_GE(one.chunks(), 8u);
  for (std::size_t c = 0; c < one.chunks(); ++c) {
    ASSERT_GT(one.size(c), 0u);
    if (c > 0) ASSERT_LE(one.hi[c - 1][0], one.lo[c][0]);
  }
  const dist::Decomposition D = dist::decompose(cutoff(Traversal::Auto, Metric::Euclidean, 2.0), a, nullptr, 1, 16);
  ASSERT_TRUE(D.halos);
  EXPECT_NE(D.describe_cut("").find("within the reach"), std::string::npos) << D.describe_cut("");
  // (A plane of equal coordinates is one fine bin: a halo holds it whole.)
  double read = 0, whole = 0;
  for (const auto& j : D.jobs)
    if (!j.is_auto) {
      read += static_cast<double>(j.a_last - j.a_first + j.b_last - j.b_first);
      whole += static_cast<double>(D.a.size(j.a) + D.a.size(j.b));
    }
  EXPECT_LT(read, 0.3 * whole) << D.describe_cut("");
}

// The slabs' boxes (taken in the order pass, from the points in their own order) are each slab's
// exact bounding box; and a cut that keeps the points (the devices') lends slabs and halos with
// the coordinates, weights and labels a gather through the order gives, the order itself the same.
TEST(PairJobs, KeptPointsAndSlabBoxesEqualTheGather) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  PointSet a = generate_uniform_box(300000, 3, 50.0, seed);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> w(0.5, 2.0);
  std::vector<double> weights(a.size());
  std::vector<std::int32_t> regions(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    weights[i] = w(rng);
    regions[i] = static_cast<std::int32_t>(rng() % 7);
    if (i % 13 == 0) a.coord(1)[i] = 1e12 + static_cast<double>(rng() % 3);  // huge offsets on a few
  }
  a.set_weights(weights);
  a.set_regions(regions);
  const dist::SlabChunks plain = dist::cut_into_slabs(a, 0, 12);
  const dist::SlabChunks kept = dist::cut_into_slabs(a, 0, 12, true);
  ASSERT_EQ(plain.sorted, nullptr);
  ASSERT_NE(kept.sorted, nullptr);
  ASSERT_EQ(plain.order, kept.order);
  ASSERT_EQ(plain.begin, kept.begin);
  const PointSet& ca = a;
  for (std::size_t c = 0; c < kept.chunks(); ++c) {
    for (int d = 0; d < 3; ++d) {
      double lo = HUGE_VAL, hi = -HUGE_VAL;
      for (std::size_t k = kept.begin[c]; k < kept.begin[c + 1]; ++k) {
        lo = std::min(lo, ca.coord(d)[kept.order[k]]);
        hi = std::max(hi, ca.coord(d)[kept.order[k]]);
      }
      ASSERT_EQ(kept.lo[c][d], lo) << c << " " << d;
      ASSERT_EQ(kept.hi[c][d], hi) << c << " " << d;
      ASSERT_EQ(plain.lo[c][d], lo);
    }
    // The whole slab, and a run inside it (a halo's positions).
    const std::size_t first = kept.begin[c], last = kept.begin[c + 1], mid = first + (last - first) / 3;
    for (auto [f, l] : {std::pair{first, last}, std::pair{mid, last}}) {
      const PointSet x = plain.make(a, f, l), y = kept.make(a, f, l);
      ASSERT_TRUE(y.borrowed());
      ASSERT_EQ(x.size(), y.size());
      for (int d = 0; d < 3; ++d)
        ASSERT_TRUE(std::equal(x.coord(d).begin(), x.coord(d).end(), std::as_const(y).coord(d).begin()));
      ASSERT_TRUE(std::equal(x.weights().begin(), x.weights().end(), y.weights().begin()));
      ASSERT_TRUE(std::equal(x.regions().begin(), x.regions().end(), y.regions().begin()));
    }
  }
}

}  // namespace
}  // namespace twobody
