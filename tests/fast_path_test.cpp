// The float32 fast path's exactness argument, checked on the CPU with the very proxies the GPU
// runs (fmaf is correctly rounded on both): whenever the guard bands certify a bin, it is the
// float64 bin; the table classifier agrees with the plain band search everywhere.
#include <gtest/gtest.h>

#include <array>
#include <limits>
#include <random>

#include "test_support.hpp"
#include "twobody/detail/exact/fast_proxies.hpp"
#include "twobody/statistics.hpp"

using namespace twobody;
using testing_support::fresh_seed;
using testing_support::to_pointset;

namespace {

// Classifies every pair with the fast path and checks each certified answer against float64.
// Returns the number of pairs sent to float64.
template <class F>
std::size_t check_pairs(const F& f, const PointSet& A, const Binning& bins) {
  const KeyEdges edges = KeyEdges::make(bins, f);
  const auto setup = make_fast_setup(f, A, A);
  const GuardBands g = make_guard_bands(edges, setup.model);
  const GuardTable t = make_guard_table(g, 4096);
  const auto proxy = FastPath<F>::proxy(f);
  constexpr int D = F::dim;
  std::size_t settled = 0;
  for (std::size_t i = 0; i < A.size(); ++i)
    for (std::size_t j = i + 1; j < A.size(); ++j) {
      float a[D], b[D];
      double a64[D], b64[D];
      for (int d = 0; d < D; ++d) {
        a64[d] = A.coord(d)[i];
        b64[d] = A.coord(d)[j];
        a[d] = static_cast<float>(a64[d] - setup.shift[d]);
        b[d] = static_cast<float>(b64[d] - setup.shift[d]);
      }
      const float s = proxy(a, b);
      const int k = classify_proxy(g.lo.data(), g.hi.data(), g.nbins, edges.steps, s);
      const int kt = classify_table(t.bands.data(), t.cells.data(), static_cast<int>(t.cells.size()), t.lo0,
                                    t.base_bits, t.shift, t.nbins, s);
      if (k != kt) {
        ADD_FAILURE() << "table and band search disagree at proxy " << s;
        return settled;
      }
      // The GPU's one-load lookup: a certain entry must be the band search's answer.
      const std::uint32_t v = direct_lookup(t.cells.data(), t.base_bits, t.top_bits, t.shift, s);
      if (v < kUncertain && static_cast<int>(v) != (k < 0 ? g.nbins : k)) {
        ADD_FAILURE() << "direct entry " << v << " but band search says " << k << " at proxy " << s;
        return settled;
      }
      if (k == -2) {
        ++settled;
        continue;
      }
      const int exact = find_bin(edges.padded.data(), edges.nbins, edges.steps, f.key(a64, b64));
      if (k != exact) {
        ADD_FAILURE() << "certified bin " << k << " but float64 says " << exact << " for pair " << i << "," << j
                      << " proxy " << s << " key " << f.key(a64, b64);
        return settled;
      }
    }
  return settled;
}

}  // namespace

TEST(FastPath, EuclideanUniformAndOffset) {
  std::mt19937_64 rng(fresh_seed());
  const auto u = to_pointset(testing_support::uniform_points(900, 3, 0, 100, rng));
  const auto s1 = check_pairs(Euclidean<3>{}, u, Binning::logarithmic(0.1, 120, 40));
  EXPECT_LT(s1, 400u * 899u / 100u);  // under 1% near an edge
  const auto off = to_pointset(testing_support::uniform_points(700, 3, 1e4, 1e4 + 1, rng));
  check_pairs(Euclidean<3>{}, off, Binning::linear(0.0, 1.0, 100));
  const auto hi_dim = to_pointset(testing_support::uniform_points(400, 8, -5, 5, rng));
  check_pairs(Euclidean<8>{}, hi_dim, Binning::linear(0.0, 20.0, 8192));
}

TEST(FastPath, LatticeOnEdgesIsSettled) {
  PointSet p(3, 0);
  for (int x = 0; x < 10; ++x)
    for (int y = 0; y < 10; ++y)
      for (int z = 0; z < 8; ++z) p.push_back(std::vector<double>{0.25 * x, 0.25 * y, 0.25 * z});
  EXPECT_GT(check_pairs(Euclidean<3>{}, p, Binning::linear(0.0, 3.0, 12)), 0u);
}

TEST(FastPath, PeriodicBox) {
  std::mt19937_64 rng(fresh_seed());
  auto pts = testing_support::uniform_points(800, 3, 0, 1, rng);
  const std::vector<double> L{50, 70, 60};
  for (auto& x : pts.x)
    for (int d = 0; d < 3; ++d) x[d] *= L[d];
  check_pairs(PeriodicEuclidean<3>(Box::from_lengths(L)), to_pointset(pts), Binning::linear(0.0, 25.0, 250));
}

TEST(FastPath, AngularChords) {
  std::mt19937_64 rng(fresh_seed());
  const auto sky = sky_to_unit_vectors(to_pointset(testing_support::sky_points(900, rng, 20, 22)));
  check_pairs(AngularSeparation{}, sky, Binning::logarithmic(0.001, 3.0, 30));
}

TEST(FastPath, TableMatchesBandSearchOnEdgesAndNeighbours) {
  for (std::size_t nb : {1u, 2u, 7u, 256u, 1000u, 8192u}) {
    DistanceErrorModel m;
    m.M = 1.0;
    const KeyEdges e = KeyEdges::make(Binning::linear(0.0, 1.8, nb), Euclidean<3>{});
    const GuardBands g = make_guard_bands(e, m);
    const GuardTable t = make_guard_table(g, 65536);
    std::vector<float> probes{0.0f, 1e-30f, 1e-8f, 3.3f, 1e30f};
    for (int k = 0; k <= g.nbins; ++k)
      for (float v : {g.lo[k], g.hi[k]})
        probes.insert(probes.end(), {v, std::nextafter(v, 0.0f), std::nextafter(v, 10.0f)});
    for (float s : probes)
      ASSERT_EQ(classify_proxy(g.lo.data(), g.hi.data(), g.nbins, e.steps, s),
                classify_table(t.bands.data(), t.cells.data(), static_cast<int>(t.cells.size()), t.lo0, t.base_bits,
                               t.shift, t.nbins, s))
          << "nbins " << nb << " proxy " << s;
  }
}

// The direct table over the whole float range: every certain entry agrees with the band search
// at the first and last value of its cell, and values far outside clamp to certain "outside".
TEST(FastPath, DirectTableAgreesWithBandSearchEverywhere) {
  for (const Binning& bins : {Binning::linear(0.0, 1.7320525, 256), Binning::logarithmic(0.1, 25.0, 20),
                              Binning::linear(0.5, 2.0, 7), Binning::linear(0.0, 1.0, 8192)}) {
    const Euclidean<3> f;
    const KeyEdges edges = KeyEdges::make(bins, f);
    DistanceErrorModel m;
    m.dim = 3;
    m.M = 20.0;
    m.offset = 20.0;
    const GuardBands g = make_guard_bands(edges, m);
    const GuardTable t = make_guard_table(g, 16384);
    std::size_t certain = 0;
    std::mt19937_64 rng(testing_support::fresh_seed());
    std::uniform_real_distribution<double> u(-3.0, 4.0);
    for (int n = 0; n < 200000; ++n) {
      const float s = n < 4 ? std::array<float, 4>{0.f, 1e-30f, 1e30f, std::numeric_limits<float>::max()}[n]
                            : static_cast<float>(std::pow(10.0, u(rng)) * edges.padded[edges.nbins]);
      const int k = classify_proxy(g.lo.data(), g.hi.data(), g.nbins, edges.steps, s);
      const std::uint32_t v = direct_lookup(t.cells.data(), t.base_bits, t.top_bits, t.shift, s);
      if (v < kUncertain) {
        ++certain;
        ASSERT_EQ(static_cast<int>(v), k < 0 ? g.nbins : k) << "proxy " << s;
      } else {
        ASSERT_EQ(classify_table(t.bands.data(), t.cells.data(), static_cast<int>(t.cells.size()), t.lo0, t.base_bits,
                                 t.shift, t.nbins, s),
                  k)
            << "proxy " << s;
      }
    }
    // 4/7 of the samples lie beyond the last edge; most of the rest fall in certain cells.
    if (bins.nbins() <= 1024) EXPECT_GT(certain, 170000u) << bins.nbins() << " bins";
  }
}
