// The Gram distance bound (exact/gram_bounds.hpp) on a software model of the tensor cores'
// arithmetic: rows rounded to FP16 with subnormals, exact products, each MMA's addends truncated
// to 22 bits of the largest and the sum rounded to float32, the float32 epilogue with one rounding
// for the norms' sum and a fused multiply-add. On adversarial rows the model's distance never
// leaves the bound of the float64 rule's key, and the tile thresholds never contradict the rule.
// The GPU suite will measure the same ratio on the hardware's own MMAs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "gram_model.hpp"
#include "test_support.hpp"
#include "twobody/detail/exact/gram_bounds.hpp"

using namespace twobody::exact;
using testing_support::fresh_seed;

namespace {

using gram_model::fp16_round;
using gram_model::mma_model_dot;

struct Row {
  std::vector<double> x;   // as given
  std::vector<double> xs;  // shifted, float64
  std::vector<double> h;   // scaled and rounded to FP16
  double sigma = 1, nu = 0, n_up = 0;
  float N = 0;
  // The k-NN's terms (gram_knn_bound), from long double sums: N̂ of the rounded row ĥ = h/σ, an
  // upper bound m of ‖ĥ‖, ρ >= ‖ĥ − x'‖ and a lower bound of ‖x'‖.
  float N_hat = 0;
  double m = 0, rho = 0, n_lo = 0;
};

std::vector<Row> prepare(const std::vector<std::vector<double>>& rows) {
  const std::size_t d = rows[0].size();
  std::vector<double> c(d, 0.0);
  for (const auto& r : rows)
    for (std::size_t k = 0; k < d; ++k) c[k] += r[k] / static_cast<double>(rows.size());
  std::vector<Row> out;
  for (const auto& r : rows) {
    Row w;
    w.x = r;
    double mx = 0;
    for (std::size_t k = 0; k < d; ++k) {
      w.xs.push_back(r[k] - c[k]);
      mx = std::max(mx, std::fabs(w.xs.back()));
      w.nu += w.xs.back() * w.xs.back();
    }
    w.sigma = mx > 0 ? std::ldexp(1.0, -(std::ilogb(mx) + 1)) : 1.0;  // max |σ x'| in [1/2, 1)
    for (double v : w.xs) w.h.push_back(fp16_round(w.sigma * v));
    w.n_up = norm_upper(w.nu, static_cast<int>(d));
    w.N = static_cast<float>(w.nu);
    long double hat = 0, err = 0;
    double hat64 = 0;
    for (std::size_t k = 0; k < d; ++k) {
      const long double v = static_cast<long double>(w.h[k]) / w.sigma;
      hat += v * v;
      hat64 += static_cast<double>(v * v);
      err += (v - w.xs[k]) * (v - w.xs[k]);
    }
    w.N_hat = static_cast<float>(hat64);
    w.m = static_cast<double>(std::sqrt(hat)) * (1 + 0x1p-50);
    w.rho = static_cast<double>(std::sqrt(err)) * (1 + 0x1p-50);
    w.n_lo = norm_lower(w.nu, static_cast<int>(d));
    out.push_back(std::move(w));
  }
  return out;
}

double key64(const Row& a, const Row& b) {
  double s = 0;
  for (std::size_t k = 0; k < a.x.size(); ++k) {
    const double t = a.x[k] - b.x[k];
    s += t * t;
  }
  return s;
}

float model_distance(const Row& a, const Row& b, const GramFormat& f = kFp16Gram) {
  const float g = mma_model_dot(a.h, b.h, f.depth, f.fold);
  const float D = static_cast<float>(static_cast<double>(g) / (a.sigma * b.sigma));  // exact
  const float t = a.N + b.N;
  return std::fma(-2.0f, D, t);
}

// s̃ as the k-NN tiles compute it: the same Gram sum, the rounded rows' norms N̂.
float model_knn_distance(const Row& a, const Row& b, const GramFormat& f = kFp16Gram) {
  const float g = mma_model_dot(a.h, b.h, f.depth, f.fold);
  const float D = static_cast<float>(static_cast<double>(g) / (a.sigma * b.sigma));
  return std::fma(-2.0f, D, a.N_hat + b.N_hat);
}

GramKnnBound knn_bound(const Row& a, const Row& b) {
  return gram_knn_bound(kFp16Gram, static_cast<int>(a.x.size()), a.m, b.m, a.rho, b.rho, a.n_up, b.n_up);
}

// The worst |s̃ − key64| / E over every pair, asserting each within its bound.
double worst_ratio(const std::vector<std::vector<double>>& rows, const char* what) {
  const auto r = prepare(rows);
  const int d = static_cast<int>(rows[0].size());
  double worst = 0;
  for (std::size_t i = 0; i < r.size(); ++i)
    for (std::size_t j = i + 1; j < r.size(); ++j) {
      const double e = gram_distance_bound(kFp16Gram, d, r[i].n_up, r[j].n_up, r[i].sigma, r[j].sigma);
      const double err = std::fabs(static_cast<double>(model_distance(r[i], r[j])) - key64(r[i], r[j]));
      EXPECT_LE(err, e) << what << " pair " << i << ", " << j;
      worst = std::max(worst, err / e);
    }
  return worst;
}

std::vector<std::vector<double>> gaussian(std::size_t n, int d, std::mt19937_64& rng, double offset, double scale) {
  std::normal_distribution<double> g;
  std::vector<std::vector<double>> rows(n, std::vector<double>(static_cast<std::size_t>(d)));
  for (auto& r : rows)
    for (double& v : r) v = offset + scale * g(rng);
  return rows;
}

// One large coordinate (3 plus up to 1, `jitter`), the others tiny: FP16 subnormals after the
// row's scaling.
std::vector<std::vector<double>> spiky(std::size_t n, int d, std::mt19937_64& rng, bool jitter) {
  auto rows = gaussian(n, d, rng, 0.0, 1e-7);
  for (auto& r : rows) r[rng() % r.size()] = 3.0 + (jitter ? 1e-3 * static_cast<double>(rng() % 1000) : 0.0);
  return rows;
}

// Near-duplicates: n / 2 rows about `offset`, then each again moved by N(0, jitter) a coordinate:
// distances far below the norms.
std::vector<std::vector<double>> near_duplicates(std::size_t n, int d, std::mt19937_64& rng, double offset, double jitter) {
  auto rows = gaussian(n / 2, d, rng, offset, 1.0);
  std::normal_distribution<double> tiny(0.0, jitter);
  for (std::size_t i = 0, m = rows.size(); i < m; ++i) {
    auto copy = rows[i];
    for (double& v : copy) v += tiny(rng);
    rows.push_back(copy);
  }
  return rows;
}

// Rows of norms over `decades` decades centred on 1: the scales differ between a pair's rows.
std::vector<std::vector<double>> spread_norms(std::size_t n, int d, std::mt19937_64& rng, int decades) {
  auto rows = gaussian(n, d, rng, 0.0, 1.0);
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (double& v : rows[i]) v *= std::pow(10.0, static_cast<double>(static_cast<int>(i) % (decades + 1) - decades / 2));
  return rows;
}

}  // namespace

TEST(GramBounds, TheModelStaysWithinTheBoundOnAdversarialRows) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  double worst = 0;
  for (int d : {3, 17, 128, 960}) {
    const std::size_t n = d >= 960 ? 40 : 90;
    worst = std::max(worst, worst_ratio(gaussian(n, d, rng, 0.0, 1.0), "gaussian"));
    worst = std::max(worst, worst_ratio(gaussian(n, d, rng, 1e3, 1.0), "offset 1e3"));
    // Near-duplicates: the bound's hardest regime in relative terms.
    worst = std::max(worst, worst_ratio(near_duplicates(n, d, rng, 0.0, 1e-4), "near duplicates"));
    worst = std::max(worst, worst_ratio(spiky(n, d, rng, false), "spikes and subnormals"));
    worst = std::max(worst, worst_ratio(spread_norms(n, d, rng, 6), "norms 1e-3..1e3"));
    // An integer lattice: FP16 holds small integers exactly, the accumulation still rounds.
    std::uniform_int_distribution<int> u(0, 2);
    std::vector<std::vector<double>> lattice(n, std::vector<double>(static_cast<std::size_t>(d)));
    for (auto& r : lattice)
      for (double& v : r) v = u(rng);
    worst = std::max(worst, worst_ratio(lattice, "lattice"));
  }
  RecordProperty("worst_error_over_bound", std::to_string(worst));
  EXPECT_GT(worst, 1e-4) << "the bound is far looser than the model's errors";
}

TEST(GramBounds, ThresholdsNeverContradictTheRule) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto rows = gaussian(120, 64, rng, 5.0, 1.0);
  const auto r = prepare(rows);
  std::vector<double> keys;
  for (std::size_t i = 0; i < r.size(); ++i)
    for (std::size_t j = i + 1; j < r.size(); ++j) keys.push_back(key64(r[i], r[j]));
  std::sort(keys.begin(), keys.end());
  double tile_bound = 0;
  for (std::size_t i = 0; i < r.size(); ++i)
    for (std::size_t j = i + 1; j < r.size(); ++j)
      tile_bound = std::max(tile_bound, gram_distance_bound(kFp16Gram, 64, r[i].n_up, r[j].n_up, r[i].sigma, r[j].sigma));
  std::size_t undecided = 0, total = 0;
  for (double limit : {keys[keys.size() / 100], keys[keys.size() / 10], keys[keys.size() / 2]}) {
    const GramThresholds t = gram_thresholds(limit, tile_bound);
    for (std::size_t i = 0; i < r.size(); ++i)
      for (std::size_t j = i + 1; j < r.size(); ++j) {
        const float s = model_distance(r[i], r[j]);
        const double k = key64(r[i], r[j]);
        ++total;
        if (s <= t.in_below) EXPECT_LE(k, limit) << "a pair called in is out";
        else if (s > t.out_above) EXPECT_GT(k, limit) << "a pair called out is in";
        else ++undecided;
      }
  }
  // The band is narrow: FP16 leaves a few percent of the pairs to the float64 rule at most.
  EXPECT_LT(static_cast<double>(undecided) / static_cast<double>(total), 0.05);
  RecordProperty("undecided_fraction", std::to_string(static_cast<double>(undecided) / static_cast<double>(total)));
}

TEST(GramBounds, RangeVerdictsNeverContradictTheRule) {
  // The tiles' verdicts for a range [lo, hi) (gram_range, gram_tile_thresholds, gram_verdict): on
  // a lattice whose keys are integers, edges exactly on keys, a lower edge at 0, at the smallest
  // double (eps = 0: duplicates only) and above 0, and an upper edge beyond every key.
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::uniform_int_distribution<int> u(0, 2);
  std::vector<std::vector<double>> rows(150, std::vector<double>(20));
  for (auto& r : rows)
    for (double& v : r) v = u(rng);
  for (std::size_t i = 0; i < 10; ++i) rows.push_back(rows[i]);  // duplicates
  const auto r = prepare(rows);
  double tile_bound = 0;
  for (std::size_t i = 0; i < r.size(); ++i)
    for (std::size_t j = i + 1; j < r.size(); ++j)
      tile_bound = std::max(tile_bound, gram_distance_bound(kFp16Gram, 20, r[i].n_up, r[j].n_up, r[i].sigma, r[j].sigma));
  const double ranges[][2] = {{0, 25}, {9, 25}, {9, 9.5}, {0, 0x1p-1074}, {0x1p-1074, 16}, {1, 1e300}, {30, HUGE_VAL}};
  for (const auto& range : ranges) {
    const GramTileThresholds t = gram_tile_thresholds(gram_range(range[0], range[1]), tile_bound);
    std::size_t in = 0, undecided = 0, at_edge = 0;
    for (std::size_t i = 0; i < r.size(); ++i)
      for (std::size_t j = i + 1; j < r.size(); ++j) {
        const double k = key64(r[i], r[j]);
        const bool truth = k >= range[0] && k < range[1];
        at_edge += (range[0] > 0 && std::fabs(k - range[0]) < 0.5) || std::fabs(k - range[1]) < 0.5;
        switch (gram_verdict(model_distance(r[i], r[j]), t)) {
          case GramVerdict::In: EXPECT_TRUE(truth) << "key " << k << " called in [" << range[0] << ", " << range[1] << ")"; ++in; break;
          case GramVerdict::Out: EXPECT_FALSE(truth) << "key " << k << " called out of [" << range[0] << ", " << range[1] << ")"; break;
          case GramVerdict::Undecided: ++undecided; break;
        }
      }
    // Keys on an edge (or 0 against the smallest double; a lower edge at 0 is none) are undecided;
    // those half a unit or more from both edges never are (the band is narrow).
    EXPECT_EQ(undecided, at_edge) << "[" << range[0] << ", " << range[1] << ")";
  }
  EXPECT_EQ(gram_verdict(std::nanf(""), gram_tile_thresholds(gram_range(0, 1), 0.1)), GramVerdict::Undecided);
}

// The k-NN's bound in distance space (gram_knn_bound) on the same model and adversarial rows: every
// key within [lower(s̃), upper(s̃)]; the admission threshold passes every s̃ whose lower key is
// within U; the norm gap only skips pairs beyond U; and for near neighbours the interval is far
// narrower than the joins' ±E (the rounding enters in proportion to the distance).
TEST(GramBounds, KnnKeyIntervalsHoldTheRuleKey) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  double narrowest_ratio = HUGE_VAL;  // over near pairs: (upper − lower) / 2E
  for (int d : {3, 17, 128, 960}) {
    const std::size_t n = d >= 960 ? 40 : 80;
    std::vector<std::vector<std::vector<double>>> sets;
    sets.push_back(gaussian(n, d, rng, 0.0, 1.0));
    sets.push_back(gaussian(n, d, rng, 1e3, 1.0));
    auto near = near_duplicates(n, d, rng, 10.0, 1e-3);
    near.push_back(near[0]);  // an exact duplicate: key 0
    sets.push_back(near);
    sets.push_back(spiky(n, d, rng, true));
    sets.push_back(spread_norms(n, d, rng, 6));
    for (const auto& rows : sets) {
      const auto r = prepare(rows);
      std::uniform_real_distribution<double> frac(0, 1);
      for (std::size_t i = 0; i < r.size(); ++i)
        for (std::size_t j = 0; j < r.size(); ++j) {
          if (i == j) continue;
          const GramKnnBound b = knn_bound(r[i], r[j]);
          const double s = model_knn_distance(r[i], r[j]), key = key64(r[i], r[j]);
          const double lo = gram_key_lower(b, s), up = gram_key_upper(b, s);
          ASSERT_LE(lo, key) << "d=" << d << " pair " << i << ", " << j << " s " << s;
          ASSERT_GE(up, key) << "d=" << d << " pair " << i << ", " << j << " s " << s;
          // Any U at or above the key (so at or above the exact lower key) admits s̃.
          for (double u : {key, key + (up - key) * frac(rng), up}) {
            ASSERT_LE(s, gram_key_admits(b, u)) << "d=" << d << " pair " << i << ", " << j << " U " << u;
          }
          const double gap = std::max(0.0, std::max(r[j].n_lo - r[i].n_up, r[i].n_lo - r[j].n_up));
          if (gram_gap_exceeds(b, gap, key)) ADD_FAILURE() << "the norm gap puts a pair of key " << key << " beyond it";
          const double e = gram_distance_bound(kFp16Gram, d, r[i].n_up, r[j].n_up, r[i].sigma, r[j].sigma);
          if (d >= 17 && key > 0 && key < 1e-2 * r[i].n_up * r[i].n_up)
            narrowest_ratio = std::min(narrowest_ratio, (up - lo) / (2 * e));
        }
    }
  }
  // Near neighbours far from the centre: the interval is a small part of the joins' band.
  EXPECT_LT(narrowest_ratio, 0.2);
  RecordProperty("knn_interval_over_join_band", std::to_string(narrowest_ratio));
}

// The selection's argument end to end on the model: per query, U = the k-th smallest upper key;
// the candidates (lower key <= U) re-ranked by key64 and ordered by (key, index) are the brute
// force's k nearest, ties by index, on duplicates, lattices (massive ties) and Gaussian rows.
TEST(GramBounds, KnnCandidatesWithinTheBoundHoldTheExactLists) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {3, 17, 128}) {
    std::vector<std::vector<std::vector<double>>> sets;
    sets.push_back(gaussian(150, d, rng, 4.0, 1.0));
    std::uniform_int_distribution<int> u(0, 2);
    std::vector<std::vector<double>> lattice(150, std::vector<double>(static_cast<std::size_t>(d)));
    for (auto& r : lattice)
      for (double& v : r) v = u(rng);
    sets.push_back(lattice);
    auto dup = gaussian(10, d, rng, 0.0, 1.0);
    for (int c = 0; c < 140; ++c) dup.push_back(dup[rng() % 10]);
    sets.push_back(dup);
    for (const auto& rows : sets) {
      const auto r = prepare(rows);
      const std::size_t n = r.size();
      for (std::size_t k : {std::size_t(1), std::size_t(10), std::size_t(64)}) {
        for (std::size_t q = 0; q < n; ++q) {
          std::vector<std::pair<double, std::size_t>> truth, cand;
          std::vector<float> ups;
          std::vector<std::pair<float, float>> keys(n);
          for (std::size_t j = 0; j < n; ++j) {
            if (j == q) continue;
            truth.emplace_back(key64(r[q], r[j]), j);
            const GramKnnBound b = knn_bound(r[q], r[j]);
            const double s = model_knn_distance(r[q], r[j]);
            // Outward to float32, as the tiles keep them.
            float up = static_cast<float>(gram_key_upper(b, s)), lo = static_cast<float>(gram_key_lower(b, s));
            if (static_cast<double>(up) < gram_key_upper(b, s)) up = std::nextafter(up, HUGE_VALF);
            if (static_cast<double>(lo) > gram_key_lower(b, s)) lo = std::nextafter(lo, -HUGE_VALF);
            keys[j] = {up, lo};
            ups.push_back(up);
          }
          std::nth_element(ups.begin(), ups.begin() + static_cast<std::ptrdiff_t>(k - 1), ups.end());
          const float bound = ups[k - 1];
          for (std::size_t j = 0; j < n; ++j)
            if (j != q && keys[j].second <= bound) cand.emplace_back(key64(r[q], r[j]), j);
          std::sort(truth.begin(), truth.end());
          std::sort(cand.begin(), cand.end());
          ASSERT_GE(cand.size(), k);
          for (std::size_t t = 0; t < k; ++t)
            ASSERT_EQ(cand[t], truth[t]) << "d=" << d << " k=" << k << " query " << q << " rank " << t;
        }
      }
    }
  }
}

// The joins' thresholds in distance space (gram_knn_tile_thresholds; the tiles on N̂ rows): a
// tile's thresholds from its largest m, ρ and n never contradict the rule, for ranges with edges
// exactly on keys, between them, at 0 and the smallest double; each threshold lies within two
// floats of the bound's own limit; and on clustered rows far from the centre they leave fewer
// pairs undecided than the thresholds of E.
TEST(GramBounds, DistanceSpaceThresholdsNeverContradictTheRule) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::size_t narrower = 0, clustered_cases = 0;
  for (int d : {3, 17, 128}) {
    std::vector<std::vector<std::vector<double>>> sets;
    auto clusters = gaussian(160, d, rng, 0.0, 1.0);  // 4 clusters of 40, centres ~50 apart
    const auto centres = gaussian(4, d, rng, 0.0, 30.0);
    for (std::size_t i = 0; i < clusters.size(); ++i)
      for (int k = 0; k < d; ++k) clusters[i][static_cast<std::size_t>(k)] += centres[i % 4][static_cast<std::size_t>(k)];
    sets.push_back(clusters);
    std::uniform_int_distribution<int> u(0, 2);
    std::vector<std::vector<double>> lattice(120, std::vector<double>(static_cast<std::size_t>(d)));
    for (auto& r : lattice)
      for (double& v : r) v = 1e3 + u(rng);  // integer keys, far from 0
    for (std::size_t i = 0; i < 8; ++i) lattice.push_back(lattice[i]);
    sets.push_back(lattice);
    sets.push_back(spread_norms(100, d, rng, 4));
    for (std::size_t which = 0; which < sets.size(); ++which) {
      const auto r = prepare(sets[which]);
      double m = 0, rho = 0, n = 0, e = 0;
      for (const Row& w : r) m = std::max(m, w.m), rho = std::max(rho, w.rho), n = std::max(n, w.n_up);
      std::vector<double> keys;
      for (std::size_t i = 0; i < r.size(); ++i)
        for (std::size_t j = i + 1; j < r.size(); ++j) {
          keys.push_back(key64(r[i], r[j]));
          e = std::max(e, gram_distance_bound(kFp16Gram, d, r[i].n_up, r[j].n_up, r[i].sigma, r[j].sigma));
        }
      const GramKnnBound b = gram_knn_bound(kFp16Gram, d, m, m, rho, rho, n, n);
      std::vector<double> sorted = keys;
      std::sort(sorted.begin(), sorted.end());
      const double q10 = sorted[sorted.size() / 10], q50 = sorted[sorted.size() / 2], top = sorted.back();
      const double ranges[][2] = {{0, q50}, {q10, q50}, {q10, std::nextafter(q10, HUGE_VAL)}, {0, 0x1p-1074},
                                  {0x1p-1074, q10 * 1.5}, {q50 * 0.999, top * 2}, {1, 1e300}};
      for (const auto& range : ranges) {
        const GramRange gr = gram_range(range[0], range[1]);
        const GramTileThresholds t = gram_knn_tile_thresholds(gr, b), te = gram_tile_thresholds(gr, e);
        std::size_t open = 0, open_e = 0, k = 0;
        for (std::size_t i = 0; i < r.size(); ++i)
          for (std::size_t j = i + 1; j < r.size(); ++j, ++k) {
            const bool truth = keys[k] >= range[0] && keys[k] < range[1];
            const GramVerdict v = gram_verdict(model_knn_distance(r[i], r[j]), t);
            if (v == GramVerdict::In) EXPECT_TRUE(truth) << "d " << d << " key " << keys[k] << " called in [" << range[0] << ", " << range[1] << ")";
            if (v == GramVerdict::Out) EXPECT_FALSE(truth) << "d " << d << " key " << keys[k] << " called out of [" << range[0] << ", " << range[1] << ")";
            open += v == GramVerdict::Undecided;
            open_e += gram_verdict(model_distance(r[i], r[j]), te) == GramVerdict::Undecided;
          }
        if (which == 0 && d >= 17 && range[0] == 0x1p-1074) {
          ++clustered_cases;
          narrower += open < open_e;
          RecordProperty("undecided_distance_space_d" + std::to_string(d), std::to_string(open) + " of " + std::to_string(keys.size()) + " (E: " + std::to_string(open_e) + ")");
        }
        // Each threshold within two floats of the bound's limit (the loops' steps are the roundings').
        for (const double limit : {gr.limit_hi, gr.has_lo ? gr.limit_lo : -1.0}) {
          if (limit < 0) continue;
          const GramThresholds th = gram_knn_thresholds(limit, b);
          if (std::isfinite(th.in_below)) {
            EXPECT_LE(gram_key_upper(b, th.in_below), limit);
            EXPECT_GT(gram_key_upper(b, std::nextafter(std::nextafter(std::nextafter(th.in_below, HUGE_VALF), HUGE_VALF), HUGE_VALF)), limit);
          }
          ASSERT_TRUE(std::isfinite(th.out_above));
          EXPECT_GT(gram_key_lower(b, std::nextafter(th.out_above, HUGE_VALF)), limit);
          EXPECT_LE(gram_key_lower(b, std::nextafter(th.out_above, -HUGE_VALF)), limit);
        }
      }
    }
  }
  EXPECT_EQ(narrower, clustered_cases) << "the distance-space band is not narrower on clusters far from the centre";
}

// The settle queue's first look (gram_half_distance_bound): ‖ĥ_i − ĥ_j‖² of the FP16 rows summed
// in float64 in any order (here backwards), its interval holds key64 for every pair of adversarial
// rows (duplicates, 10^3 offsets, tiny spreads, norms over six decades), its verdicts never
// contradict the rule, and it decides most pairs the tiles' band in distance space left undecided.
TEST(GramBounds, TheFirstLookOnTheHalfRowsHoldsTheRuleKey) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::size_t tile_open = 0, still_open = 0;
  for (int d : {3, 17, 128, 960}) {
    const std::size_t n = d >= 960 ? 40 : 90;
    std::vector<std::vector<std::vector<double>>> sets;
    auto clusters = gaussian(n, d, rng, 0.0, 1.0);
    const auto centres = gaussian(3, d, rng, 0.0, 20.0);
    for (std::size_t i = 0; i < clusters.size(); ++i)
      for (int k = 0; k < d; ++k) clusters[i][static_cast<std::size_t>(k)] += centres[i % 3][static_cast<std::size_t>(k)];
    sets.push_back(clusters);
    auto dup = gaussian(n / 2, d, rng, 1e3, 1.0);
    for (std::size_t i = 0, m = dup.size(); i < m; ++i) dup.push_back(dup[i]);
    sets.push_back(dup);
    sets.push_back(spiky(n, d, rng, false));
    sets.push_back(spread_norms(n, d, rng, 6));
    for (std::size_t which = 0; which < sets.size(); ++which) {
      const auto r = prepare(sets[which]);
      std::vector<double> keys;
      double m = 0, rho = 0, nmax = 0;
      for (const Row& w : r) m = std::max(m, w.m), rho = std::max(rho, w.rho), nmax = std::max(nmax, w.n_up);
      for (std::size_t i = 0; i < r.size(); ++i)
        for (std::size_t j = i + 1; j < r.size(); ++j) keys.push_back(key64(r[i], r[j]));
      std::vector<double> sorted = keys;
      std::sort(sorted.begin(), sorted.end());
      // ε² at a key (pairs exactly on the edge), and a range above 0 whose lower edge is a key too.
      const double q = sorted[sorted.size() / 8], q0 = sorted[sorted.size() / 40];
      for (const bool from_zero : {true, false}) {
        const GramRange range = gram_range(from_zero ? 0.0 : q0, std::nextafter(q, HUGE_VAL));
        const GramTileThresholds tile = gram_knn_tile_thresholds(range, gram_knn_bound(kFp16Gram, d, m, m, rho, rho, nmax, nmax));
        std::size_t k = 0;
        for (std::size_t i = 0; i < r.size(); ++i)
          for (std::size_t j = i + 1; j < r.size(); ++j, ++k) {
            double s = 0;
            for (std::size_t c = r[i].h.size(); c-- > 0;) {
              const double t = r[i].h[c] / r[i].sigma - r[j].h[c] / r[j].sigma;
              s += t * t;
            }
            const GramKnnBound b = gram_half_distance_bound(d, s, r[i].rho, r[j].rho, r[i].n_up, r[j].n_up);
            const double lo = gram_key_lower(b, s), up = gram_key_upper(b, s);
            ASSERT_LE(lo, keys[k]) << "d " << d << " set " << which << " pair " << i << ", " << j;
            ASSERT_GE(up, keys[k]) << "d " << d << " set " << which << " pair " << i << ", " << j;
            const bool truth = keys[k] <= q && (from_zero || keys[k] >= q0);
            const GramVerdict v = gram_interval_verdict(lo, up, range);
            if (v == GramVerdict::In) ASSERT_TRUE(truth) << "key " << keys[k] << " in [" << q0 << ", " << q << "]?";
            if (v == GramVerdict::Out) ASSERT_FALSE(truth) << "key " << keys[k] << " in [" << q0 << ", " << q << "]?";
            if (from_zero && which == 0 && d >= 128 &&
                gram_verdict(model_knn_distance(r[i], r[j]), tile) == GramVerdict::Undecided) {
              ++tile_open;
              still_open += v == GramVerdict::Undecided;
            }
          }
      }
    }
  }
  RecordProperty("first_look_left", std::to_string(still_open) + " of " + std::to_string(tile_open));
  EXPECT_LT(2 * still_open, tile_open) << "the first look decides fewer than half of what the tiles leave";
}

// Thresholds whose closed form nearly cancels (√(L − C) − r)² against A: the start holds none of
// the threshold's bits and single-float steps would give up; the doubling steps find one that
// keeps its guarantee (a review's case: A = 1, L = 1 + 2^-40).
TEST(GramBounds, DistanceSpaceThresholdsFarFromTheirClosedForm) {
  for (const GramKnnBound b : {GramKnnBound{1, 0, 0}, GramKnnBound{1e-3, 1e-9, 1e-12}, GramKnnBound{2.0, 0.5, 0.0}}) {
    for (const double limit : {1 + 0x1p-40, 1.0, 0x1p-30, 2.25 + 0x1p-45, 1e6}) {
      const GramThresholds t = gram_knn_thresholds(limit, b);
      if (std::sqrt(limit - b.c) - b.r >= 0 && std::isfinite(t.in_below) == false)
        ADD_FAILURE() << "gave up below " << limit << " for a " << b.a;
      if (std::isfinite(t.in_below)) EXPECT_LE(gram_key_upper(b, t.in_below), limit);
      ASSERT_TRUE(std::isfinite(t.out_above)) << limit;
      EXPECT_GT(gram_key_lower(b, std::nextafter(t.out_above, HUGE_VALF)), limit);
    }
  }
  // Here the threshold lies a few 2^-50 (the outward roundings) below 2^-40.
  const GramThresholds t = gram_knn_thresholds(1 + 0x1p-40, GramKnnBound{1, 0, 0});
  EXPECT_GT(t.in_below, 0x1p-41f);
  EXPECT_LT(t.in_below, 0x1p-40f);
}

// The joins' tiles sum in partials of F MMAs (exact::GramFormat::fold): on the model of that
// arithmetic, for F = 2, 16 and 32 at d = 16F (no fold: one accumulator's bound), 16F + 1 (a
// last partial of one MMA), 16F + 7 and a few partials more, the accumulation stays within its
// narrower term α·S, and every key within both the bound E and the bound in distance space that
// the joins' thresholds take — on rows of one sign after centring (two groups at ±3 a coordinate:
// within a group every product adds to the accumulator), spikes, norms over six decades and
// near-duplicates. One accumulator's α is 15.8× (F 16) and 8× (F 32) wider at d = 4 096.
TEST(GramBounds, FoldedPartialSumsStayWithinTheirNarrowerBound) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  constexpr GramFormat f32 = fp16_gram(32), f2 = fp16_gram(2);
  EXPECT_EQ(gram_accumulation(f32, 512), gram_accumulation(kFp16Gram, 512));  // m = F: one partial
  EXPECT_LT(gram_accumulation(f32, 513), gram_accumulation(kFp16Gram, 513));
  EXPECT_GT(gram_accumulation(kFp16Gram, 4096) / gram_accumulation(kFp16GramFolded, 4096), 15.0);
  EXPECT_GT(gram_accumulation(kFp16Gram, 4096) / gram_accumulation(f32, 4096), 7.5);
  double worst_acc = 0, worst_e = 0;
  for (const GramFormat& f : {f2, kFp16GramFolded, f32}) {
    for (int d : {16 * f.fold, 16 * f.fold + 1, 16 * f.fold + 7, 16 * f.fold * 3 + 5}) {
      const std::size_t n = d > 1000 ? 16 : 32, du = static_cast<std::size_t>(d);
      auto groups = gaussian(n, d, rng, 0.0, 0.1);
      for (std::size_t i = 0; i < n; ++i)
        for (double& v : groups[i]) v += i % 2 ? 3.0 : -3.0;
      const std::vector<std::vector<std::vector<double>>> sets{gaussian(n, d, rng, 0.0, 1.0), groups, spiky(n, d, rng, true),
                                                               spread_norms(n, d, rng, 6),
                                                               near_duplicates(n, d, rng, 2.0, 1e-4)};
      for (const auto& rows : sets) {
        const auto r = prepare(rows);
        for (std::size_t i = 0; i < r.size(); ++i)
          for (std::size_t j = i + 1; j < r.size(); ++j) {
            long double sum = 0, size = 0;
            for (std::size_t k = 0; k < du; ++k) {
              sum += static_cast<long double>(r[i].h[k]) * r[j].h[k];
              size += std::fabs(static_cast<long double>(r[i].h[k]) * r[j].h[k]);
            }
            const std::string at = "F " + std::to_string(f.fold) + " d " + std::to_string(d) + " pair " +
                                   std::to_string(i) + ", " + std::to_string(j);
            const double g = mma_model_dot(r[i].h, r[j].h, f.depth, f.fold);
            const double acc = std::fabs(g - static_cast<double>(sum)), room = gram_accumulation(f, d) * static_cast<double>(size);
            EXPECT_LE(acc, room) << at;
            if (room > 0) worst_acc = std::max(worst_acc, acc / room);
            const double key = key64(r[i], r[j]);
            const double e = gram_distance_bound(f, d, r[i].n_up, r[j].n_up, r[i].sigma, r[j].sigma);
            const double err = std::fabs(static_cast<double>(model_distance(r[i], r[j], f)) - key);
            EXPECT_LE(err, e) << at;
            worst_e = std::max(worst_e, err / e);
            const GramKnnBound b = gram_knn_bound(f, d, r[i].m, r[j].m, r[i].rho, r[j].rho, r[i].n_up, r[j].n_up);
            const double s = model_knn_distance(r[i], r[j], f);
            EXPECT_LE(gram_key_lower(b, s), key) << at;
            EXPECT_GE(gram_key_upper(b, s), key) << at;
          }
      }
    }
  }
  std::cout << "folded partials: worst accumulation error / alpha " << worst_acc << ", worst |s - key| / E " << worst_e << "\n";
  EXPECT_GT(worst_acc, 1e-3) << "the accumulation is suspiciously exact";
}
