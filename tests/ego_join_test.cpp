// The CPU's EGO join (src/cpu/ego_join.hpp) forced (RunOptions::path = "grid", leaves of 8 rows so
// that a few hundred rows make deep trees) against the float64 rule written apart
// (oracle/vector_brute_force.hpp): pairs bit for bit, per-vector counts, totals and neighbour lists,
// self and cross, on the seed's exponential sets at d = 9, 17, 33, 64 and on adversarial ones —
// duplicates, lattices with pairs exactly at eps, rows on cell boundaries, offsets of 10^6, eps = 0
// and eps beyond the data. Then the cost model's choice and the overrides.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "join_checks.hpp"
#include "test_support.hpp"
#include "twobody/joins.hpp"
#include "vector_test_data.hpp"

using namespace twobody;
using testing_support::expect_error;
using testing_support::exponential_vectors;
using testing_support::fresh_seed;
using testing_support::gaussian_vectors;
using testing_support::lattice_vectors;
using testing_support::ScopedEnv;

namespace {

RunOptions ego_run(int threads = 0) {
  RunOptions r;
  r.backend = "cpu";
  r.path = "grid";
  r.threads = threads;
  return r;
}

// Every output of the forced EGO join equals the rule's, and the run says the EGO join ran.
void expect_ego_equals_oracle(const VectorSet& a, const VectorSet* b, double eps, const std::string& what,
                              int threads = 0, const char* leaf = "8") {
  const ScopedEnv small("TWOBODY_EGO_LEAF", leaf);
  testing_support::expect_join_equals_oracle(a, b, eps, Metric::Euclidean, what, ego_run(threads));
  JoinOptions o;
  o.eps = eps;
  o.output = JoinOutput::Total;
  const JoinResult r = similarity_join(a, b, o, ego_run(threads));
  EXPECT_NE(r.info.plan.find("cpu path: EGO join (requested: --path grid)"), std::string::npos) << what << "\n" << r.info.plan;
  EXPECT_NE(r.info.plan.find("ran: EGO join"), std::string::npos) << what << "\n" << r.info.plan;
}

// Eps for about `neighbours` partners per row (a pair's own distance: some pairs sit on it), from
// the distances among the first 800 rows.
double eps_for_neighbours(const VectorSet& v, double neighbours) {
  return testing_support::eps_for(v, Metric::Euclidean, neighbours / static_cast<double>(v.size() - 1), 800);
}

}  // namespace

TEST(EgoJoin, ExponentialSetsEqualTheRule) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {9, 17, 33, 64}) {
    const VectorSet a = exponential_vectors(600, d, rng), b = exponential_vectors(350, d, rng);
    for (double neighbours : {4.0, 40.0}) {
      const double eps = eps_for_neighbours(a, neighbours);
      const std::string what = "d=" + std::to_string(d) + " eps=" + std::to_string(eps);
      expect_ego_equals_oracle(a, nullptr, eps, "auto " + what);
      expect_ego_equals_oracle(a, &b, eps, "cross " + what);
      expect_ego_equals_oracle(b, &a, eps, "cross swapped " + what);
    }
  }
}

TEST(EgoJoin, DuplicatesAtEpsZeroAndAbove) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // 12 rows, each copied about 40 times: eps = 0 joins exactly the copies.
  const VectorSet base = exponential_vectors(12, 33, rng);
  std::vector<double> v, r(33);
  for (int c = 0; c < 500; ++c) {
    base.row_f64(static_cast<std::size_t>(rng() % 12), r.data());
    v.insert(v.end(), r.begin(), r.end());
  }
  const VectorSet dup = VectorSet::from_rows(std::move(v), 500, 33);
  expect_ego_equals_oracle(dup, nullptr, 0.0, "duplicates eps 0");
  expect_ego_equals_oracle(dup, &base, 0.0, "duplicates cross eps 0");
  expect_ego_equals_oracle(dup, nullptr, eps_for_neighbours(base, 2.0), "duplicates eps > 0");
  // One row repeated: a single cell, no split by cells (leaves cut at the middle).
  std::vector<double> same;
  for (int c = 0; c < 300; ++c) same.insert(same.end(), r.begin(), r.end());
  expect_ego_equals_oracle(VectorSet::from_rows(std::move(same), 300, 33), nullptr, 0.0, "one row 300 times");
}

TEST(EgoJoin, LatticePairsExactlyAtEps) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {9, 17}) {
    const VectorSet a = lattice_vectors(500, d, rng), b = lattice_vectors(200, d, rng);
    // eps^2 an integer: every pair at squared distance exactly eps^2 is in, the next out; the
    // lattice's rows sit on the edges of cells of width eps = 1 and 2.
    for (double eps : {1.0, 2.0, std::sqrt(static_cast<double>(d / 3))}) {
      expect_ego_equals_oracle(a, nullptr, eps, "lattice d=" + std::to_string(d) + " eps=" + std::to_string(eps));
      expect_ego_equals_oracle(a, &b, eps, "lattice cross d=" + std::to_string(d) + " eps=" + std::to_string(eps));
    }
  }
}

TEST(EgoJoin, RowsOnCellBoundaries) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // Coordinates k * eps: every row on a cell edge, many pairs exactly eps apart along one
  // dimension. eps = 0.25 is exact in binary; eps = 0.1 is not (k * 0.1 rounds either way, and
  // the cell of fl(k * 0.1) / 0.1 may be k or k - 1).
  for (double eps : {0.25, 0.1}) {
    std::uniform_int_distribution<int> k(0, 6);
    std::vector<double> v(400 * 12);
    for (double& x : v) x = k(rng) * eps;
    // Half the rows nudged one ulp either way across their edge.
    for (std::size_t i = 0; i < v.size(); i += 2) v[i] = std::nextafter(v[i], (rng() & 1) ? HUGE_VAL : -HUGE_VAL);
    const VectorSet a = VectorSet::from_rows(std::move(v), 400, 12);
    for (double e : {eps, std::nextafter(eps, 0.0), std::nextafter(eps, 1.0), 2 * eps})
      expect_ego_equals_oracle(a, nullptr, e, "cell edges eps=" + std::to_string(e));
  }
}

TEST(EgoJoin, LargeOffsetsAndEpsBeyondTheData) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {17, 33}) {
    // Rows about 10^6 spread by 10^-3: the differences are exact, the squares round.
    const VectorSet far = gaussian_vectors(500, d, rng, 1e6, 1e-3), far2 = gaussian_vectors(150, d, rng, 1e6, 1e-3);
    const double eps = eps_for_neighbours(far, 10);
    expect_ego_equals_oracle(far, nullptr, eps, "offset 1e6 d=" + std::to_string(d));
    expect_ego_equals_oracle(far, &far2, eps, "offset 1e6 cross d=" + std::to_string(d));
  }
  // eps beyond the data's diameter (one cell a dimension: every pair), and eps = 0 without duplicates.
  const VectorSet a = exponential_vectors(300, 9, rng), b = exponential_vectors(100, 9, rng);
  expect_ego_equals_oracle(a, nullptr, 10.0, "eps beyond the data");
  expect_ego_equals_oracle(a, &b, 10.0, "eps beyond the data, cross");
  expect_ego_equals_oracle(a, nullptr, 0.0, "eps 0, no duplicates");
  // Float32 storage, promoted exactly.
  std::vector<float> f(400 * 20);
  std::exponential_distribution<float> e(40.f);
  for (float& x : f) x = e(rng);
  const VectorSet f32 = VectorSet::from_rows(f, 400, 20);
  expect_ego_equals_oracle(f32, nullptr, eps_for_neighbours(f32, 8), "float32");
}

TEST(EgoJoin, ThreadsAndLeavesGiveTheSameResult) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const VectorSet a = testing_support::gaussian_mixture(1500, 24, rng);
  const double eps = eps_for_neighbours(a, 20);
  for (int t : {1, 2, 3}) expect_ego_equals_oracle(a, nullptr, eps, "threads " + std::to_string(t), t);
  for (const char* leaf : {"16", "128", "4096"}) expect_ego_equals_oracle(a, nullptr, eps, std::string("leaf ") + leaf, 2, leaf);
}

TEST(EgoJoin, PairsStreamToTheSinkInTheCallersIndices) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const ScopedEnv small("TWOBODY_EGO_LEAF", "8");
  const VectorSet a = exponential_vectors(700, 16, rng);
  const double eps = eps_for_neighbours(a, 10);
  const auto want = oracle::join(testing_support::rows_of(a), nullptr, eps * eps, false);
  RunOptions run = ego_run();
  std::vector<PairRecord> got;
  run.pair_sink = [&](std::span<const PairRecord> batch) { got.insert(got.end(), batch.begin(), batch.end()); };
  JoinOptions o;
  o.eps = eps;
  similarity_join(a, nullptr, o, run);
  std::sort(got.begin(), got.end(), [](const PairRecord& x, const PairRecord& y) { return std::pair(x.i, x.j) < std::pair(y.i, y.j); });
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t t = 0; t < want.size(); ++t) {
    ASSERT_EQ(got[t].i, want[t].i);
    ASSERT_EQ(got[t].j, want[t].j);
    ASSERT_EQ(got[t].value, std::sqrt(want[t].key));
  }
  // Too many pairs: refused, as by the brute force.
  run.pair_sink = nullptr;
  run.max_pairs = want.size() / 2;
  expect_error(ErrorKind::Resource, "pairs", [&] { similarity_join(a, nullptr, o, run); });
}

TEST(EgoJoin, TheCostModelChoosesAndSaysWhy) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // Tight clusters far apart, eps within a cluster: the boxes drop most pairs.
  const VectorSet a = testing_support::gaussian_mixture(4000, 16, rng);
  JoinOptions o;
  o.eps = eps_for_neighbours(a, 8);
  o.output = JoinOutput::Total;
  const JoinResult ego = similarity_join(a, nullptr, o, testing_support::on("cpu"));
  EXPECT_NE(ego.info.plan.find("cpu path: EGO join: "), std::string::npos) << ego.info.plan;
  EXPECT_LT(ego.info.pairs_evaluated, 4000u * 3999u / 2 / 2) << ego.info.plan;
  // explain() gives the prediction without running.
  const std::string plan = explain(join_statistic(false, o), a, nullptr, testing_support::on("cpu"));
  EXPECT_NE(plan.find("of the brute force's 7998000 pairs"), std::string::npos) << plan;
  // Eps beyond the data: every pair in a leaf pair, the brute force.
  o.eps = 1e3;
  const JoinResult all = similarity_join(a, nullptr, o, testing_support::on("cpu"));
  EXPECT_NE(all.info.plan.find("cpu path: brute force: in the EGO join"), std::string::npos) << all.info.plan;
  EXPECT_EQ(all.total, 4000u * 3999u / 2);
  // The cosine distance, more than 64 dimensions and few rows: the brute force, with the reason.
  o.metric = Metric::Cosine;
  o.eps = 0.1;
  EXPECT_NE(similarity_join(a, nullptr, o, testing_support::on("cpu")).info.plan.find("prunes Euclidean distances only"),
            std::string::npos);
  o.metric = Metric::Euclidean;
  EXPECT_NE(similarity_join(gaussian_vectors(600, 65, rng), nullptr, o, testing_support::on("cpu")).info.plan.find("65 dimensions"),
            std::string::npos);
  EXPECT_NE(similarity_join(a.slice(0, 300), nullptr, o, testing_support::on("cpu")).info.plan.find("too few vectors"),
            std::string::npos);
  // Forced either way by the environment (it wins over the path).
  {
    const ScopedEnv brute("TWOBODY_CPU_JOIN", "brute");
    const JoinResult r = similarity_join(a, nullptr, o, ego_run());
    EXPECT_NE(r.info.plan.find("brute force (requested: TWOBODY_CPU_JOIN=brute)"), std::string::npos) << r.info.plan;
  }
  {
    const ScopedEnv forced("TWOBODY_CPU_JOIN", "ego");
    const JoinResult r = similarity_join(a.slice(0, 300), nullptr, o, testing_support::on("cpu"));
    EXPECT_NE(r.info.plan.find("EGO join (requested: TWOBODY_CPU_JOIN=ego)"), std::string::npos) << r.info.plan;
  }
  // Values that are not finite: the brute force even when the EGO join is asked for, still exact.
  std::vector<double> v(200 * 10, 0.5);
  v[37] = NAN;
  v[501] = HUGE_VAL;
  const VectorSet bad = VectorSet::from_rows(std::move(v), 200, 10);
  o.eps = 1.0;
  const JoinResult r = similarity_join(bad, nullptr, o, ego_run());
  EXPECT_NE(r.info.plan.find("not finite"), std::string::npos) << r.info.plan;
  EXPECT_EQ(r.total, 198u * 197u / 2);
}

TEST(EgoJoin, OverridesAreChecked) {
  const VectorSet a = VectorSet::from_rows(std::vector<double>(20 * 9, 1.0), 20, 9);
  JoinOptions o;
  o.eps = 1;
  {
    const ScopedEnv bad("TWOBODY_CPU_JOIN", "fast");
    expect_error(ErrorKind::Config, "TWOBODY_CPU_JOIN must be auto, ego or brute", [&] { similarity_join(a, nullptr, o); });
  }
  {
    const ScopedEnv bad("TWOBODY_EGO_LEAF", "3");
    expect_error(ErrorKind::Config, "TWOBODY_EGO_LEAF", [&] { similarity_join(a, nullptr, o, ego_run()); });
  }
  RunOptions run = ego_run();
  run.path = "kd";
  expect_error(ErrorKind::Config, "unknown traversal path 'kd'", [&] { similarity_join(a, nullptr, o, run); });
}
