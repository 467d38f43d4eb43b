// The CPU backend against the float64 oracle: every metric, both traversals, every output kind,
// sizes that are not multiples of any tile, and pairs placed exactly on bin edges.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "test_support.hpp"
#include "twobody/extend/run_custom.hpp"
#include "twobody/engine.hpp"
#include "twobody/statistics.hpp"

using namespace twobody;
using testing_support::fresh_seed;
using testing_support::to_pointset;
using testing_support::uniform_points;

namespace {

Statistic histogram_stat(Metric m, Traversal t, const Binning& b, bool weighted = false) {
  Statistic s;
  s.metric = m;
  s.traversal = t;
  s.reduction = reduce::Histogram{b};
  s.weighted = weighted;
  return s;
}

RunOptions cpu_opts(int threads = 0) {
  RunOptions o;
  o.backend = "cpu";
  o.threads = threads;
  return o;
}

}  // namespace

class OpenSpace : public ::testing::TestWithParam<std::tuple<int, std::size_t>> {};

TEST_P(OpenSpace, HistogramMatchesOracleAutoAndCross) {
  const auto [dim, n] = GetParam();
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto pa = uniform_points(n, dim, -3.0, 7.0, rng, true);
  const auto pb = uniform_points(n / 2 + 3, dim, -3.0, 7.0, rng, true);
  const Binning bins = Binning::linear(0.5, 6.0, 13);
  const auto A = to_pointset(pa), B = to_pointset(pb);

  const auto ra = run(histogram_stat(Metric::Euclidean, Traversal::Auto, bins, true), A, nullptr, cpu_opts());
  const auto oa = oracle::histogram(pa, nullptr, bins.edges(), 0, {}, true);
  EXPECT_EQ(ra.counts, oa.counts);
  for (std::size_t k = 0; k < oa.weighted.size(); ++k) EXPECT_NEAR(ra.weighted[k], oa.weighted[k], 1e-9 * (1 + oa.weighted[k]));

  const auto rc = run(histogram_stat(Metric::Euclidean, Traversal::Cross, bins, true), A, &B, cpu_opts());
  const auto oc = oracle::histogram(pa, &pb, bins.edges(), 0, {}, true);
  EXPECT_EQ(rc.counts, oc.counts);
  for (std::size_t k = 0; k < oc.weighted.size(); ++k) EXPECT_NEAR(rc.weighted[k], oc.weighted[k], 1e-9 * (1 + oc.weighted[k]));
  EXPECT_EQ(ra.info.pairs_evaluated, n * (n - 1) / 2);
}

INSTANTIATE_TEST_SUITE_P(DimsAndSizes, OpenSpace,
                         ::testing::Combine(::testing::Values(1, 2, 3, 5, 8),
                                            ::testing::Values(2, 17, 333, 1500)));

TEST(Periodic, HistogramMatchesOracleInOrthorhombicBox) {
  for (std::size_t n : {5u, 700u, 2100u}) {
    const auto seed = fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed) + " n " + std::to_string(n));
    std::mt19937_64 rng(seed);
    const std::vector<double> L{10.0, 14.0, 7.5};
    auto pa = uniform_points(n, 3, 0.0, 1.0, rng);
    for (auto& x : pa.x)
      for (int d = 0; d < 3; ++d) x[d] *= L[d];
    const auto pb = [&] {
      auto p = uniform_points(n + 11, 3, 0.0, 1.0, rng);
      for (auto& x : p.x)
        for (int d = 0; d < 3; ++d) x[d] = std::min(x[d] * L[d], std::nextafter(L[d], 0.0));
      return p;
    }();
    const Binning bins = Binning::logarithmic(0.05, 3.75, 11);  // rmax = half the shortest side
    auto s = histogram_stat(Metric::Periodic, Traversal::Auto, bins);
    s.box = Box::from_lengths(L);
    const auto A = to_pointset(pa), B = to_pointset(pb);
    EXPECT_EQ(run(s, A, nullptr, cpu_opts()).counts, oracle::histogram(pa, nullptr, bins.edges(), 1, L).counts);
    s.traversal = Traversal::Cross;
    EXPECT_EQ(run(s, A, &B, cpu_opts()).counts, oracle::histogram(pa, &pb, bins.edges(), 1, L).counts);
  }
}

TEST(Angular, HistogramMatchesOracle) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto pa = testing_support::sky_points(1800, rng, 10, 40);
  const auto pb = testing_support::sky_points(901, rng, 10, 40);
  const Binning bins = Binning::logarithmic(0.01, 20.0, 15);
  const auto A = to_pointset(pa), B = to_pointset(pb);
  EXPECT_EQ(angular(A, nullptr, bins, false, cpu_opts()).raw.counts, oracle::histogram(pa, nullptr, bins.edges(), 2).counts);
  EXPECT_EQ(angular(A, &B, bins, false, cpu_opts()).raw.counts, oracle::histogram(pa, &pb, bins.edges(), 2).counts);
}

// Points on an integer lattice: squared distances are integers, edges are integers, so a large
// share of all pairs lies exactly on an edge. Half-open bins must put each in the upper bin.
TEST(Exactness, LatticePairsOnBinEdges) {
  oracle::Points p;
  p.dim = 3;
  for (int x = 0; x < 9; ++x)
    for (int y = 0; y < 9; ++y)
      for (int z = 0; z < 7; ++z) p.x.push_back({double(x), double(y), double(z)});
  const Binning bins = Binning::linear(0.0, 8.0, 8);  // edges 0, 1, 2, ..., 8
  const auto A = to_pointset(p);
  const auto r = run(histogram_stat(Metric::Euclidean, Traversal::Auto, bins), A, nullptr, cpu_opts());
  const auto o = oracle::histogram(p, nullptr, bins.edges(), 0);
  EXPECT_EQ(r.counts, o.counts);
  // Nearest neighbours at distance exactly 1 belong to bin [1, 2), none to [0, 1).
  EXPECT_EQ(r.counts[0], 0u);
  std::uint64_t unit = 8 * 9 * 7 + 9 * 8 * 7 + 9 * 9 * 6;  // axis-aligned neighbour pairs
  EXPECT_GE(r.counts[1], unit);
  // Periodic lattice: the box is 9 x 9 x 7 cells, rmax 3.5 = half the short side.
  Statistic s = histogram_stat(Metric::Periodic, Traversal::Auto, Binning::linear(0.0, 3.5, 7));
  s.box = Box::from_lengths(std::vector<double>{9, 9, 7});
  EXPECT_EQ(run(s, A, nullptr, cpu_opts()).counts,
            oracle::histogram(p, nullptr, s.binning().edges(), 1, {9, 9, 7}).counts);
}

TEST(Exactness, LargeOffsetsSmallSpread) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto p = uniform_points(900, 3, 1e4, 1e4 + 1.0, rng);
  const Binning bins = Binning::linear(0.0, 1.0, 50);
  EXPECT_EQ(run(histogram_stat(Metric::Euclidean, Traversal::Auto, bins), to_pointset(p), nullptr, cpu_opts()).counts,
            oracle::histogram(p, nullptr, bins.edges(), 0).counts);
}

TEST(Traversal, AutoAndCrossAreConsistent) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto A = to_pointset(uniform_points(1234, 3, 0, 50, rng));
  const auto B = to_pointset(uniform_points(777, 3, 0, 50, rng));
  const auto AB = PointSet::concat(A, B);
  const Binning bins = Binning::logarithmic(0.5, 40, 17);
  const auto dd_ab = run(histogram_stat(Metric::Euclidean, Traversal::Auto, bins), AB, nullptr, cpu_opts()).counts;
  const auto dd_a = run(histogram_stat(Metric::Euclidean, Traversal::Auto, bins), A, nullptr, cpu_opts()).counts;
  const auto dd_b = run(histogram_stat(Metric::Euclidean, Traversal::Auto, bins), B, nullptr, cpu_opts()).counts;
  const auto d_ab = run(histogram_stat(Metric::Euclidean, Traversal::Cross, bins), A, &B, cpu_opts()).counts;
  for (std::size_t k = 0; k < bins.nbins(); ++k) EXPECT_EQ(dd_ab[k], dd_a[k] + dd_b[k] + d_ab[k]) << "bin " << k;
}

TEST(Threads, CountsDoNotDependOnThreadCount) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const auto A = to_pointset(uniform_points(3001, 3, 0, 10, rng));
  const Binning bins = Binning::linear(0, 12, 64);
  const auto s = histogram_stat(Metric::Euclidean, Traversal::Auto, bins);
  const auto one = run(s, A, nullptr, cpu_opts(1)).counts;
  EXPECT_EQ(one, run(s, A, nullptr, cpu_opts(2)).counts);
  EXPECT_EQ(one, run(s, A, nullptr, cpu_opts(5)).counts);
}

TEST(Outputs, ReductionPairListAndMatrix) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto pa = uniform_points(1100, 3, 0, 20, rng, true);
  const auto pb = uniform_points(300, 3, 0, 20, rng, true);
  const auto A = to_pointset(pa), B = to_pointset(pb);
  const Binning range = Binning::from_edges({0.0, 2.5});
  const auto o = oracle::histogram(pa, nullptr, range.edges(), 0, {}, true);

  Statistic s = histogram_stat(Metric::Euclidean, Traversal::Auto, range, true);
  s.reduction = reduce::Count{range};
  const auto red = run(s, A, nullptr, cpu_opts());
  ASSERT_EQ(red.counts.size(), 1u);
  EXPECT_EQ(red.counts[0], o.counts[0]);
  EXPECT_NEAR(red.weighted[0], o.weighted[0], 1e-9 * o.weighted[0]);

  s.reduction = reduce::PairList{range};
  s.weighted = false;
  const auto list = run(s, A, nullptr, cpu_opts());
  ASSERT_EQ(list.pairs.size(), o.counts[0]);
  for (const auto& p : list.pairs) {
    ASSERT_LT(p.i, p.j);
    EXPECT_DOUBLE_EQ(p.value, std::sqrt(oracle::d2_open(pa.x[p.i], pa.x[p.j])));
  }
  EXPECT_TRUE(std::is_sorted(list.pairs.begin(), list.pairs.end(),
                             [](auto& x, auto& y) { return std::pair(x.i, x.j) < std::pair(y.i, y.j); }));

  s.reduction = reduce::Matrix{};
  s.traversal = Traversal::Cross;
  const auto m = run(s, A, &B, cpu_opts());
  ASSERT_EQ(m.rows, A.size());
  ASSERT_EQ(m.cols, B.size());
  for (std::size_t i = 0; i < m.rows; i += 37)
    for (std::size_t j = 0; j < m.cols; j += 7)
      EXPECT_DOUBLE_EQ(m.matrix[i * m.cols + j], std::sqrt(oracle::d2_open(pa.x[i], pb.x[j])));
  s.traversal = Traversal::Auto;
  const auto ms = run(s, B, nullptr, cpu_opts());
  for (std::size_t i = 0; i < ms.rows; ++i)
    for (std::size_t j = 0; j < ms.cols; ++j)
      ASSERT_DOUBLE_EQ(ms.matrix[i * ms.cols + j], std::sqrt(oracle::d2_open(pb.x[i], pb.x[j])));
}

TEST(Outputs, PairListOverflowIsAnErrorNotATruncation) {
  std::mt19937_64 rng(fresh_seed());
  const auto A = to_pointset(uniform_points(500, 2, 0, 1, rng));
  Statistic s = histogram_stat(Metric::Euclidean, Traversal::Auto, Binning::from_edges({0.0, 2.0}));
  s.reduction = reduce::PairList{s.binning()};
  RunOptions o = cpu_opts();
  o.max_pairs = 1000;
  try {
    run(s, A, nullptr, o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Resource);
  }
}

namespace {
// A user pair function: Chebyshev (L-infinity) distance in 2-D.
struct Chebyshev2 {
  static constexpr int dim = 2;
  template <class T>
  TWOBODY_HD T key(const T* a, const T* b) const {
    return std::max(std::abs(a[0] - b[0]), std::abs(a[1] - b[1]));
  }
  double key_of(double v) const { return v; }
  double natural_of(double k) const { return k; }
};
}  // namespace

TEST(Custom, UserPairFunctionThroughTheEngine) {
  std::mt19937_64 rng(fresh_seed());
  const auto p = uniform_points(1500, 2, 0, 10, rng);
  Statistic s = histogram_stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0, 5, 10));
  const auto r = run_custom(Chebyshev2{}, s, to_pointset(p), nullptr, cpu_opts());
  std::vector<std::uint64_t> expect(10, 0);
  for (std::size_t i = 0; i < p.x.size(); ++i)
    for (std::size_t j = i + 1; j < p.x.size(); ++j) {
      const double v = std::max(std::abs(p.x[i][0] - p.x[j][0]), std::abs(p.x[i][1] - p.x[j][1]));
      for (int k = 0; k < 10; ++k)
        if (s.binning().lo(k) <= v && v < s.binning().hi(k)) ++expect[k];
    }
  EXPECT_EQ(r.counts, expect);
}

// Points read in place from the caller's memory (PointSet::borrow, the Python module's float64
// columns): the same results as owned points, both traversals; anything that changes the points
// copies them first, so the caller's memory is never written; the owner lives as long as a copy.
TEST(BorrowedPoints, SameResultsAndTheCallersMemoryUntouched) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const PointSet owned = to_pointset(uniform_points(3000, 3, 0, 10, rng, true));
  auto memory = std::make_shared<std::vector<std::vector<double>>>();
  for (int d = 0; d < 3; ++d) memory->emplace_back(owned.coord(d).begin(), owned.coord(d).end());
  const auto before = *memory;
  {
    std::vector<std::span<const double>> cols;
    for (const auto& c : *memory) cols.emplace_back(c);
    // (const: the engine reads points through const references; coord(d) of a non-const set hands
    // out writable memory, so it copies first.)
    const PointSet lent = PointSet::borrow(std::move(cols), memory);
    EXPECT_TRUE(lent.borrowed());
    EXPECT_EQ(lent.coord(1).data(), (*memory)[1].data());  // read in place
    EXPECT_EQ(memory.use_count(), 2);
    for (const char* path : {"brute", "grid"}) {
      auto s = histogram_stat(Metric::Periodic, Traversal::Auto, Binning::linear(0.0, 4.0, 17));
      s.box = Box::cube(3, 10.0);
      RunOptions o = cpu_opts();
      o.path = path;
      EXPECT_EQ(run(s, lent, nullptr, o).counts, run(s, owned, nullptr, o).counts) << path;
    }
    PointSet changed = lent;  // a copy shares the memory until it changes
    EXPECT_EQ(memory.use_count(), 3);
    changed.coord(0)[0] = -1.0;
    wrap_into_box(changed, Box::cube(3, 10.0));
    EXPECT_FALSE(changed.borrowed());
    EXPECT_TRUE(lent.borrowed());
    EXPECT_EQ(memory.use_count(), 2);
  }
  EXPECT_EQ(memory.use_count(), 1);  // every set gone, the owner released
  EXPECT_EQ(*memory, before);        // and never written
}
