// The GPU vector grid's host side without a GPU: its cells (src/cuda/vector_grid_cells.hpp), the
// listing of its units (vector_grid_runs.hpp, the device's own code) replayed on the host against
// the float64 rule written apart (oracle/vector_brute_force.hpp) — every pair in range met exactly
// once, on the seed's exponential sets and adversarial ones (lattices with pairs exactly at eps,
// rows on cell edges and an ulp off them, offsets of 10^6, duplicates at eps = 0, eps beyond the
// data), self and cross, m = 1..6, runs cut into pieces — and the choice (vector_grid_choice.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "join_checks.hpp"
#include "test_support.hpp"
#include "twobody/detail/cpu/dim_stats.hpp"
#include "twobody/detail/cuda/vector_choice.hpp"
#include "twobody/detail/cuda/vector_grid_choice.hpp"
#include "twobody/detail/cuda/vector_grid_runs.hpp"
#include "twobody/detail/engine/planner.hpp"
#include "twobody/joins.hpp"
#include "vector_test_data.hpp"

namespace twobody::cuda {
namespace {

using testing_support::exponential_vectors;
using testing_support::fresh_seed;
using testing_support::gaussian_vectors;
using testing_support::lattice_vectors;
using testing_support::ScopedEnv;

struct Sorted {
  std::vector<std::uint64_t> keys;
  std::vector<std::uint32_t> order;
};

// The device's sort: keys by the cell rule, stable (ties in index order).
Sorted sort_by_cell(const oracle::Rows& r, const VectorGridGeometry& g) {
  Sorted s;
  std::vector<std::uint64_t> key(r.n);
  for (std::size_t i = 0; i < r.n; ++i) key[i] = vector_grid_key(g, r.row(i));
  s.order.resize(r.n);
  std::iota(s.order.begin(), s.order.end(), 0u);
  std::stable_sort(s.order.begin(), s.order.end(), [&](std::uint32_t x, std::uint32_t y) { return key[x] < key[y]; });
  for (std::uint32_t i : s.order) s.keys.push_back(key[i]);
  return s;
}

// The grid's units listed as the device lists them, and the refine's pairs in range (the sets'
// indices, i < j for a self-join) with the keys of the rule; `computed` the keys it computes.
struct Replay {
  std::vector<oracle::Pair> pairs;
  std::uint64_t computed = 0, predicted = 0, units = 0;
};

Replay replay(const oracle::Rows& A, const oracle::Rows* B, double hi, const VectorGridGeometry& g, std::size_t piece) {
  const bool self = B == nullptr;
  const Sorted sa = sort_by_cell(A, g);
  const Sorted sb = self ? sa : sort_by_cell(*B, g);
  const oracle::Rows& P = self ? A : *B;
  const VectorGridKeys k{sa.keys.data(), A.n, sb.keys.data(), P.n, self};
  Replay out;
  for (std::size_t q0 = 0; q0 < A.n; ++q0) {
    if (!vector_grid_chunk_start(sa.keys.data(), q0)) continue;
    const auto q = static_cast<std::uint32_t>(q0);
    const std::uint32_t qn = vector_grid_chunk_rows(k, q);
    EXPECT_GE(qn, 1u);
    EXPECT_LE(qn, kVectorGridChunkRows);
    vector_grid_runs(g, k, q, [&](std::uint32_t p0, std::uint32_t p1, bool triangle) {
      out.predicted += vector_grid_run_pairs(q, qn, p0, p1, triangle);
      for (std::size_t s = p0; s < p1; s += piece) {
        ++out.units;
        for (std::uint32_t i = q; i < q + qn; ++i)
          for (std::size_t j = s; j < std::min<std::size_t>(s + piece, p1); ++j) {
            if (triangle && j <= i) continue;
            ++out.computed;
            const std::uint64_t oi = sa.order[i], oj = sb.order[j];
            const double key = oracle::key(A.row(oi), P.row(oj), A.d, false);
            if (key < hi) out.pairs.push_back(self && oj < oi ? oracle::Pair{oj, oi, key} : oracle::Pair{oi, oj, key});
          }
      }
    });
  }
  std::sort(out.pairs.begin(), out.pairs.end(), [](const auto& x, const auto& y) { return std::pair(x.i, x.j) < std::pair(y.i, y.j); });
  return out;
}

// For m = 1..6 (and the pieces of `pieces`), the replayed grid's pairs equal the rule's pairs
// within eps, each once; its geometry keeps the cells' promises.
void expect_grid_equals_oracle(const VectorSet& a, const VectorSet* b, double eps, const std::string& what,
                               std::initializer_list<std::size_t> pieces = {4096, 7}) {
  const oracle::Rows A = testing_support::rows_of(a);
  const oracle::Rows B = b ? testing_support::rows_of(*b) : oracle::Rows{};
  const double limit = eps * eps, hi = std::nextafter(limit, HUGE_VAL);
  const auto want = oracle::join(A, b ? &B : nullptr, limit, false);
  cpu::DimStats stats(a.dim());
  stats.add(a, 2);
  if (b) stats.add(*b, 2);
  const std::vector<int> order = vector_grid_order(stats, hi, nullptr);
  for (int m = 1; m <= 6; ++m) {
    const VectorGridGeometry g = make_vector_grid_geometry(stats, hi, m, order);
    ASSERT_EQ(g.m, m);
    double cells = 1;
    for (int t = 0; t < m; ++t) {
      EXPECT_GE(g.width[t], eps) << what;
      EXPECT_GE(g.cells[t], 1) << what;
      cells *= static_cast<double>(g.cells[t]);
      if (t + 1 < m) EXPECT_EQ(g.stride[t], g.stride[t + 1] * static_cast<std::uint64_t>(g.cells[t + 1])) << what;
    }
    EXPECT_LE(cells, 0x1p62) << what;
    for (std::size_t piece : pieces) {
      const Replay r = replay(A, b ? &B : nullptr, hi, g, piece);
      const std::string at = what + " m=" + std::to_string(m) + " piece=" + std::to_string(piece);
      EXPECT_EQ(r.computed, r.predicted) << at;
      ASSERT_EQ(r.pairs.size(), want.size()) << at;
      for (std::size_t t = 0; t < want.size(); ++t) {
        ASSERT_EQ(r.pairs[t].i, want[t].i) << at << " pair " << t;
        ASSERT_EQ(r.pairs[t].j, want[t].j) << at << " pair " << t;
        ASSERT_EQ(r.pairs[t].key, want[t].key) << at << " pair " << t;
      }
    }
  }
}

double eps_for_neighbours(const VectorSet& v, double neighbours) {
  return testing_support::eps_for(v, Metric::Euclidean, neighbours / static_cast<double>(v.size() - 1), 600);
}

}  // namespace

TEST(VectorGridCells, ExponentialSetsMeetEveryPairOnce) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {9, 16, 33, 64}) {
    const VectorSet a = exponential_vectors(400, d, rng), b = exponential_vectors(230, d, rng);
    for (double neighbours : {3.0, 40.0}) {
      const double eps = eps_for_neighbours(a, neighbours);
      const std::string what = "d=" + std::to_string(d) + " eps=" + std::to_string(eps);
      expect_grid_equals_oracle(a, nullptr, eps, "auto " + what);
      expect_grid_equals_oracle(a, &b, eps, "cross " + what);
    }
  }
}

TEST(VectorGridCells, LatticesCellEdgesOffsetsDuplicates) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // Coordinates in {0, 1, 2}: many pairs exactly at eps (eps^2 an integer), rows on cell edges.
  const VectorSet lat = lattice_vectors(300, 9, rng), lat2 = lattice_vectors(120, 9, rng);
  for (double eps : {1.0, 2.0, std::sqrt(3.0)}) {
    expect_grid_equals_oracle(lat, nullptr, eps, "lattice eps=" + std::to_string(eps));
    expect_grid_equals_oracle(lat, &lat2, eps, "lattice cross eps=" + std::to_string(eps));
  }
  // Rows at k * eps, half nudged an ulp across their edge; eps exact in binary (0.25) and not (0.1).
  for (double eps : {0.25, 0.1}) {
    std::uniform_int_distribution<int> k(0, 6);
    std::vector<double> v(300 * 10);
    for (double& x : v) x = k(rng) * eps;
    for (std::size_t i = 0; i < v.size(); i += 2) v[i] = std::nextafter(v[i], (rng() & 1) ? HUGE_VAL : -HUGE_VAL);
    const VectorSet a = VectorSet::from_rows(std::move(v), 300, 10);
    for (double e : {eps, std::nextafter(eps, 0.0), std::nextafter(eps, 1.0)})
      expect_grid_equals_oracle(a, nullptr, e, "cell edges eps=" + std::to_string(e));
  }
  // About 10^6 spread by 10^-3: the differences are exact, the cells' divisions round.
  const VectorSet far = gaussian_vectors(300, 12, rng, 1e6, 1e-3), far2 = gaussian_vectors(100, 12, rng, 1e6, 1e-3);
  const double eps = eps_for_neighbours(far, 8);
  expect_grid_equals_oracle(far, nullptr, eps, "offset 1e6");
  expect_grid_equals_oracle(far, &far2, eps, "offset 1e6 cross");
  // Copies of 10 rows: eps = 0 joins exactly the copies (cells of width 2^-500 + 2^-48 extent).
  const VectorSet base = exponential_vectors(10, 20, rng);
  std::vector<double> v, r(20);
  for (int c = 0; c < 250; ++c) {
    base.row_f64(static_cast<std::size_t>(rng() % 10), r.data());
    v.insert(v.end(), r.begin(), r.end());
  }
  const VectorSet dup = VectorSet::from_rows(std::move(v), 250, 20);
  expect_grid_equals_oracle(dup, nullptr, 0.0, "duplicates eps 0");
  expect_grid_equals_oracle(dup, &base, 0.0, "duplicates cross eps 0");
  // Eps beyond the data: one cell a dimension, every pair.
  const VectorSet small = exponential_vectors(150, 9, rng);
  expect_grid_equals_oracle(small, nullptr, 10.0, "eps beyond the data");
  expect_grid_equals_oracle(small, nullptr, 1e200, "eps^2 overflows", {4096});
}

TEST(VectorGridCells, TheRuleIsTheSameOnEveryRowAndBoundsCellDistances) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // Pairs exactly eps apart along one dimension, anywhere in a wide extent: their cells differ by
  // at most one, whatever the rounding of x - o and of the division.
  std::uniform_real_distribution<double> u(-1e6, 1e6);
  for (double eps : {1e-3, 0.1, 0.3, 7.0}) {
    cpu::DimStats stats(1);
    stats.lo = {-1e6 - 10};
    stats.hi = {1e6 + 10};
    stats.sum = {0};
    stats.sum2 = {1};
    stats.n = 1;
    const double hi = std::nextafter(eps * eps, HUGE_VAL);
    const VectorGridGeometry g = make_vector_grid_geometry(stats, hi, 1, {0});
    for (int t = 0; t < 100000; ++t) {
      const double x = u(rng), y = x + eps;
      const double key = (x - y) * (x - y);
      if (!(key < hi)) continue;
      const auto cx = vector_grid_cell(x, g.origin[0], g.width[0], g.cells[0]);
      const auto cy = vector_grid_cell(y, g.origin[0], g.width[0], g.cells[0]);
      ASSERT_LE(std::llabs(cx - cy), 1) << "x " << x << " eps " << eps;
    }
  }
  // Clamping: beyond the last cell and below the origin.
  EXPECT_EQ(vector_grid_cell(-5.0, 0.0, 1.0, 10), 0);
  EXPECT_EQ(vector_grid_cell(1e300, 0.0, 1.0, 10), 9);
  EXPECT_EQ(vector_grid_cell(3.5, 0.0, 1.0, 10), 3);
  EXPECT_EQ(vector_grid_cell(3.5, 0.0, HUGE_VAL, 1), 0);
}

namespace {

struct Planned {
  Statistic stat;
  VectorPlan plan;
};

Planned plan_join(const VectorSet& a, const VectorSet* b, double eps, JoinOutput out = JoinOutput::Total,
                  Metric m = Metric::Euclidean, const std::string& path = "auto") {
  JoinOptions o;
  o.eps = eps;
  o.output = out;
  o.metric = m;
  Planned p{join_statistic(b != nullptr, o), {}};
  RunOptions run;
  run.threads = 2;
  run.path = path;
  p.plan = make_vector_plan(p.stat, a, b, run);
  return p;
}

// As the CUDA backend asks (vector_runs.cpp): the Gram tiles weighed from d = 16.
VectorGridChoice choose(const Planned& p, const TuningPolicy& policy = TuningPolicy::current()) {
  return choose_vector_grid(p.plan, policy, p.plan.a->dim() >= policy.gram_min_dim);
}

}  // namespace

TEST(VectorGridChoice, ClustersTakeTheGridUniformHighDimensionsDoNot) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // 12 000 rows (7·10^7 pairs, above the sampling floor) in tight clusters far apart.
  const VectorSet mix = testing_support::gaussian_mixture(12000, 16, rng);
  const Planned clustered = plan_join(mix, nullptr, 1e-3);
  const VectorGridChoice c = choose(clustered);
  EXPECT_TRUE(c.applies) << c.why;
  EXPECT_TRUE(c.use) << c.why;
  EXPECT_LT(c.seconds_grid, c.seconds_all_pairs) << c.why;
  EXPECT_NE(c.why.find("the vector grid:"), std::string::npos) << c.why;
  EXPECT_GE(c.geometry.m, 1);
  EXPECT_LE(c.geometry.m, 6);
  // An estimate per m, the cheapest chosen. (Candidates need not fall with m: the key's 62 bits
  // shared among more dimensions can widen their cells.)
  ASSERT_EQ(c.estimates.size(), 6u) << c.why;
  for (const auto& e : c.estimates) EXPECT_GE(e.seconds, c.seconds_grid) << c.why;
  EXPECT_EQ(c.estimates[static_cast<std::size_t>(c.geometry.m - 1)].seconds, c.seconds_grid) << c.why;
  // Independent coordinates in 64 dimensions, eps for ~40 neighbours: almost every pair is a
  // candidate along 6 dimensions, so all pairs are cheaper.
  const VectorSet expo = exponential_vectors(12000, 64, rng);
  const Planned uniform = plan_join(expo, nullptr, eps_for_neighbours(expo, 40));
  const VectorGridChoice u = choose(uniform);
  EXPECT_TRUE(u.applies) << u.why;
  EXPECT_FALSE(u.use) << u.why;
  EXPECT_NE(u.why.find("all pairs:"), std::string::npos) << u.why;
}

TEST(VectorGridChoice, TheGpuSuitesAllPairsCasesStayOnTheirKernels) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // tests/cuda_join_pairs_test.cpp's progress case: 40 000 Gaussian rows in 16 dimensions, eps for
  // 2·10^-4 of the pairs: the Gram tiles (eps is 2.4 standard deviations: most pairs are neighbours).
  const VectorSet g16 = gaussian_vectors(40000, 16, rng);
  const VectorGridChoice c = choose(plan_join(g16, nullptr, testing_support::eps_for(g16, Metric::Euclidean, 0.0002, 3000),
                                              JoinOutput::Pairs));
  EXPECT_TRUE(c.applies) << c.why;
  EXPECT_FALSE(c.use) << c.why;
  EXPECT_NE(c.why.find("the Gram tiles (unsettled)"), std::string::npos) << c.why;
  // A precision requested keeps the grid out unless it is forced too.
  const VectorSet mix = testing_support::gaussian_mixture(12000, 16, rng);
  const ScopedEnv fp64("TWOBODY_VECTOR_PRECISION", "fp64");
  const VectorGridChoice p = choose(plan_join(mix, nullptr, 1e-3));
  EXPECT_FALSE(p.applies) << p.why;
  EXPECT_NE(p.why.find("precision"), std::string::npos) << p.why;
  EXPECT_TRUE(choose(plan_join(mix, nullptr, 1e-3, JoinOutput::Total, Metric::Euclidean, "grid")).use);
}

TEST(VectorGridChoice, OverridesAndRefusals) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const VectorSet a = exponential_vectors(300, 12, rng);
  // Small: not worth it, unless forced (by the environment or --path grid).
  EXPECT_FALSE(choose(plan_join(a, nullptr, 0.05)).applies);
  {
    const ScopedEnv grid("TWOBODY_VECTOR_GRID", "grid");
    const VectorGridChoice c = choose(plan_join(a, nullptr, 0.05));
    EXPECT_TRUE(c.use) << c.why;
    EXPECT_NE(c.why.find("requested: TWOBODY_VECTOR_GRID=grid"), std::string::npos) << c.why;
    // Even against --path brute: the environment wins.
    EXPECT_TRUE(choose(plan_join(a, nullptr, 0.05, JoinOutput::Total, Metric::Euclidean, "brute")).use);
    // Never for the cosine distance, beyond 64 dimensions, or on values that are not finite.
    EXPECT_FALSE(choose(plan_join(a, nullptr, 0.05, JoinOutput::Total, Metric::Cosine)).applies);
    const VectorSet wide = exponential_vectors(50, 65, rng);
    EXPECT_FALSE(choose(plan_join(wide, nullptr, 0.05)).applies);
    std::vector<double> v(40 * 10, 0.5);
    v[17] = HUGE_VAL;
    const VectorSet inf = VectorSet::from_rows(std::move(v), 40, 10);
    const VectorGridChoice bad = choose(plan_join(inf, nullptr, 0.05));
    EXPECT_FALSE(bad.applies);
    EXPECT_NE(bad.why.find("not finite"), std::string::npos) << bad.why;
    // The dimensions forced.
    const ScopedEnv dims("TWOBODY_VECTOR_GRID_DIMS", "3");
    EXPECT_EQ(choose(plan_join(a, nullptr, 0.05)).geometry.m, 3);
  }
  {
    const VectorGridChoice c = choose(plan_join(a, nullptr, 0.05, JoinOutput::Pairs, Metric::Euclidean, "grid"));
    EXPECT_TRUE(c.use) << c.why;
    EXPECT_NE(c.why.find("requested: --path grid"), std::string::npos) << c.why;
  }
  {
    const ScopedEnv off("TWOBODY_VECTOR_GRID", "off");
    const VectorGridChoice c = choose(plan_join(a, nullptr, 0.05, JoinOutput::Counts, Metric::Euclidean, "grid"));
    EXPECT_FALSE(c.applies);
    EXPECT_EQ(c.why, "TWOBODY_VECTOR_GRID=off");
  }
  for (const char* bad : {"yes", ""}) {
    const ScopedEnv e("TWOBODY_VECTOR_GRID", bad);
    testing_support::expect_error(ErrorKind::Config, "TWOBODY_VECTOR_GRID", [] { TuningPolicy::current(); });
  }
  for (const char* bad : {"0", "7", "x"}) {
    const ScopedEnv e("TWOBODY_VECTOR_GRID_DIMS", bad);
    testing_support::expect_error(ErrorKind::Config, "TWOBODY_VECTOR_GRID_DIMS", [] { TuningPolicy::current(); });
  }
  const ScopedEnv piece("TWOBODY_VECTOR_GRID_PIECE", "5");
  const ScopedEnv pairs("TWOBODY_VECTOR_GRID_PAIRS", "3");
  const TuningPolicy p = TuningPolicy::current();
  EXPECT_EQ(p.vector_grid_piece, 5u);
  EXPECT_EQ(p.vector_grid_pairs, 3u);
  EXPECT_NE(p.overrides().find("vector grid units of 5 partners"), std::string::npos);
}

}  // namespace twobody::cuda
