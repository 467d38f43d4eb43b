// Similarity joins and k nearest neighbours over vectors (twobody/joins.hpp) against the float64
// rule written apart (oracle/vector_brute_force.hpp), on fresh random and adversarial sets:
// integer lattices with many pairs exactly at eps, duplicates at eps = 0, large offsets, rows of
// very different norms, float32 and float16 storage, d = 1, 3, 17, 128, 960.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <random>

#include "join_checks.hpp"
#include "oracle/vector_brute_force.hpp"
#include "test_support.hpp"
#include "vector_test_data.hpp"
#include "twobody/joins.hpp"

using namespace twobody;
using testing_support::expect_error;
using testing_support::fresh_seed;
using testing_support::gaussian_vectors;
using testing_support::lattice_vectors;
using testing_support::limit_of;
using testing_support::rows_of;

namespace {

// The eps that admits about `fraction` of the pairs (a pair's own distance: some pairs sit on it).
double eps_for(const VectorSet& v, Metric m, double fraction, std::mt19937_64& rng) {
  const auto all = oracle::join(rows_of(v), nullptr, HUGE_VAL, m == Metric::Cosine);
  std::vector<double> keys;
  for (const auto& p : all) keys.push_back(p.key);
  std::sort(keys.begin(), keys.end());
  const double k = keys[static_cast<std::size_t>(fraction * static_cast<double>(keys.size() - 1))];
  (void)rng;
  return m == Metric::Cosine ? k : std::sqrt(k);
}

void expect_join_equals_oracle(const VectorSet& a, const VectorSet* b, double eps, Metric m, const std::string& what,
                               int threads = 0) {
  RunOptions run;
  run.backend = "cpu";
  run.threads = threads;
  testing_support::expect_join_equals_oracle(a, b, eps, m, what, run);
}

void expect_knn_equals_oracle(const VectorSet& a, const VectorSet* b, int k, Metric m, const std::string& what,
                              RunOptions run = {}, const std::string& path_says = "") {
  const oracle::Rows A = rows_of(a);
  const oracle::Rows B = b ? rows_of(*b) : oracle::Rows{};
  const auto want = oracle::knn(A, b ? &B : nullptr, k, m == Metric::Cosine);
  run.backend = "cpu";
  const KnnResult got = nearest_neighbours(a, b, k, m, run);
  if (!path_says.empty()) EXPECT_NE(got.info.plan.find(path_says), std::string::npos) << what << ": " << got.info.plan;
  ASSERT_EQ(got.indices.size(), a.size() * static_cast<std::size_t>(k)) << what;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (int q = 0; q < k; ++q) {
      const std::size_t at = i * static_cast<std::size_t>(k) + static_cast<std::size_t>(q);
      ASSERT_EQ(got.indices[at], want[i][static_cast<std::size_t>(q)].second) << what << " query " << i << " rank " << q;
      const double key = want[i][static_cast<std::size_t>(q)].first;
      ASSERT_EQ(got.distances[at], m == Metric::Cosine ? key : std::sqrt(key)) << what << " query " << i;
    }
}

}  // namespace

TEST(Joins, RandomVectorsEqualTheRuleInEveryDimension) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {1, 3, 17, 128, 960}) {
    const std::size_t n = d >= 960 ? 90 : 260;
    const VectorSet a = gaussian_vectors(n, d, rng), b = gaussian_vectors(n / 2 + 7, d, rng);
    for (Metric m : {Metric::Euclidean, Metric::Cosine}) {
      const double eps = eps_for(a, m, 0.05, rng);
      expect_join_equals_oracle(a, nullptr, eps, m, "auto d=" + std::to_string(d));
      expect_join_equals_oracle(a, &b, eps, m, "cross d=" + std::to_string(d));
    }
  }
}

TEST(Joins, LatticePairsExactlyAtEps) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {1, 3, 17, 128}) {
    const VectorSet a = lattice_vectors(300, d, rng);
    // eps^2 an integer: every pair at squared distance exactly eps^2 is in, the next out.
    const double eps = std::sqrt(static_cast<double>(std::max(1, d / 3)));
    expect_join_equals_oracle(a, nullptr, eps, Metric::Euclidean, "lattice d=" + std::to_string(d));
    expect_join_equals_oracle(a, nullptr, 2.0, Metric::Euclidean, "lattice eps 2, d=" + std::to_string(d));
  }
  // A pair exactly at eps is in, one ulp beyond is out.
  const VectorSet two = VectorSet::from_rows(std::vector<double>{0.0, 0.0, 3.0, 4.0}, 2, 2);
  JoinOptions o;
  o.eps = 5.0;
  EXPECT_EQ(similarity_join(two, nullptr, o).total, 1u);
  o.eps = std::nextafter(5.0, 0.0);
  EXPECT_EQ(similarity_join(two, nullptr, o).total, 0u);
}

TEST(Joins, DuplicatesAtEpsZeroAndLargeOffsets) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // A few rows, each copied many times: eps = 0 joins exactly the copies.
  const VectorSet base = gaussian_vectors(7, 33, rng);
  std::vector<double> v;
  std::vector<double> r(33);
  for (int c = 0; c < 40; ++c) {
    base.row_f64(static_cast<std::size_t>(rng() % 7), r.data());
    v.insert(v.end(), r.begin(), r.end());
  }
  const VectorSet dup = VectorSet::from_rows(std::move(v), 40, 33);
  expect_join_equals_oracle(dup, nullptr, 0.0, Metric::Euclidean, "duplicates eps 0");
  expect_join_equals_oracle(dup, nullptr, 0.0, Metric::Cosine, "duplicates eps 0 cosine");
  // The same in 3-D, where the join runs as points: the cell grid of a cutoff 2^-1074 (it once
  // coarsened a width that had rounded to 0, forever).
  std::vector<double> v3;
  for (int c = 0; c < 160; ++c) {
    base.row_f64(static_cast<std::size_t>(rng() % 7), r.data());
    v3.insert(v3.end(), r.begin(), r.begin() + 3);
  }
  expect_join_equals_oracle(VectorSet::from_rows(std::move(v3), 160, 3), nullptr, 0.0, Metric::Euclidean,
                            "3-D duplicates eps 0");
  // Rows around 10^6 spread by 10^-3: the differences are exact, the squares round.
  const VectorSet far = gaussian_vectors(200, 17, rng, 1e6, 1e-3);
  expect_join_equals_oracle(far, nullptr, eps_for(far, Metric::Euclidean, 0.1, rng), Metric::Euclidean, "offset 1e6");
  // Norms from 1e-3 to 1e3 (cosine: the normalisation).
  std::vector<double> w(150 * 9);
  std::normal_distribution<double> g;
  for (std::size_t i = 0; i < 150; ++i)
    for (int k = 0; k < 9; ++k) w[i * 9 + static_cast<std::size_t>(k)] = g(rng) * std::pow(10.0, static_cast<double>(i % 7) - 3);
  const VectorSet norms = VectorSet::from_rows(std::move(w), 150, 9);
  expect_join_equals_oracle(norms, nullptr, eps_for(norms, Metric::Cosine, 0.05, rng), Metric::Cosine, "norms cosine");
}

TEST(Joins, Float32AndFloat16StorageArePromotedExactly) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::normal_distribution<float> g;
  std::vector<float> f(180 * 20);
  for (float& x : f) x = g(rng);
  const VectorSet a32 = VectorSet::from_rows(f, 180, 20);
  // float16 bits of small integers and halves: exact in every format.
  std::vector<std::uint16_t> h(180 * 20);
  std::uniform_int_distribution<int> u(-8, 8);
  for (auto& x : h) {
    const int q = u(rng);  // q / 2 as a half: sign, exponent, mantissa
    if (q == 0) {
      x = 0;
      continue;
    }
    const double val = std::abs(q) / 2.0;
    const int e = static_cast<int>(std::floor(std::log2(val)));
    const int mant = static_cast<int>(std::lround((val / std::ldexp(1.0, e) - 1.0) * 1024));
    x = static_cast<std::uint16_t>((q < 0 ? 0x8000 : 0) | ((e + 15) << 10) | mant);
  }
  const VectorSet a16 = VectorSet::from_half_bits(h, 180, 20);
  for (std::size_t i = 0; i < 20; ++i) EXPECT_EQ(std::fabs(half_to_double(h[i])) * 2, std::round(std::fabs(half_to_double(h[i])) * 2));
  for (const VectorSet* v : {&a32, &a16}) {
    for (Metric m : {Metric::Euclidean, Metric::Cosine}) {
      if (m == Metric::Cosine && v == &a16) continue;  // zero rows are possible there
      expect_join_equals_oracle(*v, nullptr, eps_for(*v, m, 0.05, rng), m, std::string("storage ") + to_string(v->element()));
    }
  }
  expect_knn_equals_oracle(a16, nullptr, 7, Metric::Euclidean, "float16 knn (many ties)");
}

TEST(Joins, ThreadCountsGiveTheSameResult) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const VectorSet a = gaussian_vectors(700, 40, rng);
  const double eps = eps_for(a, Metric::Euclidean, 0.02, rng);
  for (int t : {1, 3}) expect_join_equals_oracle(a, nullptr, eps, Metric::Euclidean, "threads " + std::to_string(t), t);
}

TEST(Knn, EqualsTheRuleWithTiesByIndex) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {1, 3, 17, 128}) {
    const VectorSet a = gaussian_vectors(230, d, rng), b = gaussian_vectors(170, d, rng);
    for (Metric m : {Metric::Euclidean, Metric::Cosine})
      for (int k : {1, 10}) {
        expect_knn_equals_oracle(a, nullptr, k, m, "auto d=" + std::to_string(d) + " k=" + std::to_string(k));
        expect_knn_equals_oracle(a, &b, k, m, "cross d=" + std::to_string(d) + " k=" + std::to_string(k));
      }
    // Lattice: many equal keys, resolved by the smaller index.
    const VectorSet l = lattice_vectors(200, d, rng);
    expect_knn_equals_oracle(l, nullptr, 15, Metric::Euclidean, "lattice d=" + std::to_string(d));
  }
  // Every other vector (k = n - 1), and duplicates are neighbours at distance 0.
  const VectorSet dup = VectorSet::from_rows(std::vector<double>{1, 2, 1, 2, 5, 5, 1, 2}, 4, 2);
  expect_knn_equals_oracle(dup, nullptr, 3, Metric::Euclidean, "k = n - 1");
  const KnnResult r = nearest_neighbours(dup, nullptr, 2);
  EXPECT_EQ(r.indices[0], 1u);
  EXPECT_EQ(r.indices[1], 3u);
  EXPECT_EQ(r.distances[0], 0.0);
}

TEST(Joins, ErrorsSayWhat) {
  const VectorSet a = VectorSet::from_rows(std::vector<double>{1, 2, 3, 4, 5, 6}, 2, 3);
  const VectorSet b = VectorSet::from_rows(std::vector<double>{1, 2, 3, 4}, 2, 2);
  JoinOptions o;
  o.eps = 1;
  expect_error(ErrorKind::Config, "3 and 2 dimensions", [&] { similarity_join(a, &b, o); });
  o.eps = -1;
  expect_error(ErrorKind::Config, "eps must be", [&] { similarity_join(a, nullptr, o); });
  o.eps = NAN;
  expect_error(ErrorKind::Config, "eps must be", [&] { similarity_join(a, nullptr, o); });
  o.eps = 1;
  o.metric = Metric::Angular;
  expect_error(ErrorKind::Config, "euclidean or cosine", [&] { similarity_join(a, nullptr, o); });
  o.metric = Metric::Cosine;
  const VectorSet zero = VectorSet::from_rows(std::vector<double>{1, 2, 3, 0, 0, 0}, 2, 3);
  expect_error(ErrorKind::Input, "vector 2 has norm 0", [&] { similarity_join(zero, nullptr, o); });
  expect_error(ErrorKind::Config, "only 1 candidate", [&] { nearest_neighbours(a, nullptr, 2); });
  expect_error(ErrorKind::Config, "k >= 1", [&] { nearest_neighbours(a, nullptr, 0); });
  expect_error(ErrorKind::Input, "empty", [&] { nearest_neighbours(VectorSet::from_rows(std::vector<double>{}, 0, 3), nullptr, 1); });
  Statistic s = knn_statistic(false, 1, Metric::Euclidean);
  s.weighted = true;
  expect_error(ErrorKind::Config, "no weights", [&] { run(s, a, nullptr); });
  // Points refuse what only vectors take.
  expect_error(ErrorKind::Config, "vectors", [&] { run(knn_statistic(false, 1, Metric::Euclidean), a.to_points(), nullptr); });
  // The plan says what runs.
  const std::string plan = explain(join_statistic(false, JoinOptions{.eps = 1.0}), a, nullptr);
  EXPECT_NE(plan.find("float64 rule"), std::string::npos) << plan;
}

// The EGO trees' k-NN (cpu/ego_knn.cpp) against the rule: forced (--path grid) and as auto takes
// it, self and cross, on Gaussian clusters, a lattice (equal keys: ties by index), heavy
// duplicates (keys of 0), rows offset by 10^8, at 1 and 3 threads; every list entry for entry.
TEST(Knn, EgoTreesEqualTheRuleWithTiesByIndex) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  RunOptions grid;
  grid.path = "grid";
  RunOptions three = grid;
  three.threads = 3;
  for (int d : {1, 2, 8, 17, 40}) {
    const VectorSet a = gaussian_vectors(1500, d, rng), b = gaussian_vectors(1100, d, rng);
    const std::string at = " d=" + std::to_string(d);
    for (int k : {1, 10, 64}) {
      expect_knn_equals_oracle(a, nullptr, k, Metric::Euclidean, "ego auto" + at, grid, "EGO k-NN");
      expect_knn_equals_oracle(a, &b, k, Metric::Euclidean, "ego cross" + at, three, "EGO k-NN");
    }
    expect_knn_equals_oracle(a, nullptr, 10, Metric::Euclidean, "auto's choice" + at, {},
                             d <= 64 ? "EGO k-NN" : "");
  }
  // Enough rows for auto to search a sample of the leaves first, whose lists the run keeps.
  const VectorSet many = gaussian_vectors(9000, 8, rng);
  expect_knn_equals_oracle(many, nullptr, 10, Metric::Euclidean, "auto after a sample of leaves", {}, "EGO k-NN");
  for (int d : {3, 9}) {
    const VectorSet l = lattice_vectors(1200, d, rng);
    expect_knn_equals_oracle(l, nullptr, 15, Metric::Euclidean, "lattice d=" + std::to_string(d), three, "EGO k-NN");
  }
  // 600 copies of three rows among 700 others: lists of zeros, ordered by index.
  std::vector<double> rows;
  std::normal_distribution<double> normal;
  for (int r = 0; r < 1300; ++r)
    for (int c = 0; c < 5; ++c) rows.push_back(r < 600 ? static_cast<double>(r % 3) : normal(rng));
  const VectorSet dup = VectorSet::from_rows(rows, 1300, 5);
  expect_knn_equals_oracle(dup, nullptr, 20, Metric::Euclidean, "duplicates", grid, "EGO k-NN");
  // Offsets far above the spread.
  std::vector<double> far;
  for (int r = 0; r < 1000; ++r)
    for (int c = 0; c < 6; ++c) far.push_back(1e8 + normal(rng) * 1e-3);
  expect_knn_equals_oracle(VectorSet::from_rows(far, 1000, 6), nullptr, 8, Metric::Euclidean, "offset 1e8", three,
                           "EGO k-NN");
}

// The brute force by the Gram form (cpu/gram_knn.cpp: bounded keys, the rule's keys near each
// k-th) against the rule, forced at every dimension and as auto takes it (d ≥ 32): Gaussian sets
// self and cross, a lattice (equal keys: ties by index), heavy duplicates (keys of 0), rows
// offset by 10^8 with a spread of 10^-3 (the Gram form's cancellation: wide bounds, many keys
// settled), k from 1 to n - 1, 1 and 3 threads; every list entry for entry.
TEST(Knn, GramFormEqualsTheRuleWithTiesByIndex) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const char* gram = "Gram form";
  RunOptions three;
  three.threads = 3;
  for (int d : {32, 64, 128, 300}) {
    const VectorSet a = gaussian_vectors(400, d, rng), b = gaussian_vectors(250, d, rng);
    const std::string at = " d=" + std::to_string(d);
    for (int k : {1, 10, 64}) {
      expect_knn_equals_oracle(a, nullptr, k, Metric::Euclidean, "auto" + at, {}, gram);
      expect_knn_equals_oracle(a, &b, k, Metric::Euclidean, "cross" + at, three, gram);
    }
    expect_knn_equals_oracle(lattice_vectors(300, d, rng), nullptr, 15, Metric::Euclidean, "lattice" + at, three, gram);
  }
  // The brute force asked for (the EGO trees would take these), the Gram form forced below 32.
  RunOptions brute = three;
  brute.path = "brute";
  setenv("TWOBODY_CPU_KNN", "gram", 1);
  for (int d : {1, 3, 8}) {
    const VectorSet a = gaussian_vectors(500, d, rng);
    expect_knn_equals_oracle(a, nullptr, 12, Metric::Euclidean, "forced d=" + std::to_string(d), brute, gram);
    expect_knn_equals_oracle(lattice_vectors(300, d, rng), nullptr, 20, Metric::Euclidean, "forced lattice", brute, gram);
  }
  std::vector<double> rows, far;
  std::normal_distribution<double> normal;
  for (int r = 0; r < 900; ++r)
    for (int c = 0; c < 40; ++c) {
      rows.push_back(r < 500 ? static_cast<double>(r % 4) : normal(rng));
      far.push_back(1e8 + normal(rng) * 1e-3);
    }
  expect_knn_equals_oracle(VectorSet::from_rows(rows, 900, 40), nullptr, 30, Metric::Euclidean, "duplicates", brute, gram);
  expect_knn_equals_oracle(VectorSet::from_rows(far, 900, 40), nullptr, 9, Metric::Euclidean, "offset 1e8", brute, gram);
  const VectorSet small = gaussian_vectors(40, 50, rng);
  expect_knn_equals_oracle(small, nullptr, 39, Metric::Euclidean, "k = n - 1", brute, gram);
  setenv("TWOBODY_CPU_KNN", "rule", 1);
  expect_knn_equals_oracle(small, nullptr, 5, Metric::Euclidean, "the rule's keys forced", brute, "brute force");
  EXPECT_EQ(nearest_neighbours(small, nullptr, 5, Metric::Euclidean, brute).info.plan.find(gram), std::string::npos);
  unsetenv("TWOBODY_CPU_KNN");
}

// The join's brute force by the Gram form (gram_key_rows.hpp) against the float64 oracle: every
// output (pairs with their distances, total, per-vector counts, CSR) at d = 32..300, self and
// cross, with pairs exactly at eps (a lattice of small integers, eps the root of an integer),
// duplicates at eps = 0, rows offset by 10^8 (wide bounds: most keys from the rule), the Gram form
// forced below 32 dimensions; and histograms of many bins (edges on the lattice's keys) equal to
// the rule's, bin for bin.
TEST(Joins, GramFormEqualsTheRuleOnEdgesAndInRange) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  RunOptions three;
  three.backend = "cpu";
  three.threads = 3;
  const auto says_gram = [&](const VectorSet& a, const VectorSet* b, double eps, const std::string& what) {
    JoinOptions o;
    o.eps = eps;
    o.output = JoinOutput::Total;
    const JoinResult r = similarity_join(a, b, o, three);
    EXPECT_NE(r.info.plan.find("Gram form"), std::string::npos) << what << ": " << r.info.plan;
  };
  for (int d : {32, 64, 128, 300}) {
    const std::string at = " d=" + std::to_string(d);
    const VectorSet a = gaussian_vectors(300, d, rng), b = gaussian_vectors(170, d, rng);
    const double eps = eps_for(a, Metric::Euclidean, 0.04, rng);
    testing_support::expect_join_equals_oracle(a, nullptr, eps, Metric::Euclidean, "auto" + at, three);
    testing_support::expect_join_equals_oracle(a, &b, eps, Metric::Euclidean, "cross" + at, three);
    says_gram(a, &b, eps, "cross" + at);
    const VectorSet grid = lattice_vectors(250, d, rng);
    for (int r2 : {d / 4, d / 2, d / 2 + 1})
      testing_support::expect_join_equals_oracle(grid, nullptr, std::sqrt(static_cast<double>(r2)), Metric::Euclidean,
                                                 "lattice eps^2=" + std::to_string(r2) + at, three);
  }
  std::vector<double> rows, far;
  std::normal_distribution<double> normal;
  for (int r = 0; r < 500; ++r)
    for (int c = 0; c < 40; ++c) {
      rows.push_back(r < 300 ? static_cast<double>(r % 4) : normal(rng));
      far.push_back(1e8 + normal(rng) * 1e-3);
    }
  const VectorSet dup = VectorSet::from_rows(rows, 500, 40), offset = VectorSet::from_rows(far, 500, 40);
  testing_support::expect_join_equals_oracle(dup, nullptr, 0.0, Metric::Euclidean, "duplicates at eps 0", three);
  testing_support::expect_join_equals_oracle(dup, nullptr, 2.0, Metric::Euclidean, "duplicates at eps 2", three);
  testing_support::expect_join_equals_oracle(offset, nullptr, eps_for(offset, Metric::Euclidean, 0.05, rng),
                                             Metric::Euclidean, "offset 1e8", three);
  says_gram(offset, nullptr, 1e-3, "offset 1e8");
  // Histograms: edges at the lattice's integer keys (every pair's key on an edge) and between.
  for (int d : {40, 129}) {
    const VectorSet grid = lattice_vectors(300, d, rng);
    std::vector<double> edges;
    for (int e = 0; e <= d; e += 3) edges.push_back(std::sqrt(static_cast<double>(e)) + (e % 2 ? 1e-9 : 0.0));
    Statistic s;
    s.traversal = Traversal::Auto;
    s.metric = Metric::Euclidean;
    s.reduction = reduce::Histogram{Binning::from_edges(edges)};
    const Result gram = run(s, grid, nullptr, three);
    EXPECT_NE(gram.info.plan.find("Gram form"), std::string::npos) << gram.info.plan;
    setenv("TWOBODY_CPU_JOIN_KEYS", "rule", 1);
    const Result rule = run(s, grid, nullptr, three);
    unsetenv("TWOBODY_CPU_JOIN_KEYS");
    EXPECT_EQ(rule.info.plan.find("Gram form"), std::string::npos) << rule.info.plan;
    EXPECT_EQ(gram.counts, rule.counts) << "histogram d=" << d;
    EXPECT_GT(gram.info.pairs_settled_fp64, 0u);
  }
  // Forced below 32 dimensions, on the brute force (the EGO join would take these).
  RunOptions brute = three;
  brute.path = "brute";
  setenv("TWOBODY_CPU_JOIN_KEYS", "gram", 1);
  for (int d : {1, 3, 8}) {
    const VectorSet a = gaussian_vectors(400, d, rng);
    testing_support::expect_join_equals_oracle(a, nullptr, eps_for(a, Metric::Euclidean, 0.05, rng), Metric::Euclidean,
                                               "forced d=" + std::to_string(d), brute);
    testing_support::expect_join_equals_oracle(lattice_vectors(300, d, rng), nullptr, 1.0, Metric::Euclidean,
                                               "forced lattice d=" + std::to_string(d), brute);
  }
  unsetenv("TWOBODY_CPU_JOIN_KEYS");
}
