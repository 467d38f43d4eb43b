// The cosine distance's bounds on the FP16 Gram tiles (exact/gram_bounds.hpp: gram_cosine_bound,
// gram_cosine_range, gram_cosine_knn_bound) on the software model of the tensor cores
// (gram_model.hpp): rows normalised by the rule, not centred, N = 1, so the tiles' s̃ is
// 2·fl32(1 − D); on adversarial rows — a large common component (near-parallel rows: cosine is
// offset-sensitive), near-duplicates, exact duplicates, spikes over FP16 subnormals, norms over
// decades, lattices — s̃ stays within the bound of twice the rule's key 1 − x̂_i·x̂_j, the tiles'
// verdicts never contradict the rule (edges exactly on keys, slightly negative keys, eps = 0), and
// the k-NN's key intervals hold the key. The GPU suite measures the same on the hardware.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gram_model.hpp"
#include "test_support.hpp"
#include "twobody/detail/exact/gram_bounds.hpp"

using namespace twobody::exact;
using gram_model::fp16_round;
using gram_model::mma_model_dot;
using testing_support::fresh_seed;

namespace {

using Rows = std::vector<std::vector<double>>;

struct UnitRow {
  std::vector<double> x;  // the rule's normalised row x̂
  std::vector<double> h;  // fp16(σ x̂)
  double sigma = 1, n_up = 0, n_lo = 0;
  // The k-NN's terms of the rounded row ĥ = h/σ (from long double sums, as gram_bounds_test.cpp).
  float n_hat = 0;
  double m = 0, rho = 0;
};

std::vector<UnitRow> prepare(const Rows& rows) {
  std::vector<UnitRow> out;
  for (const auto& r : rows) {
    const int d = static_cast<int>(r.size());
    double s = 0;
    for (double v : r) s += v * v;
    const double norm = std::sqrt(s);
    UnitRow u;
    double mx = 0, nu = 0;
    for (double v : r) {
      u.x.push_back(v / norm);
      mx = std::max(mx, std::fabs(u.x.back()));
      nu += u.x.back() * u.x.back();
    }
    u.sigma = std::ldexp(1.0, -(std::ilogb(mx) + 1));
    for (double v : u.x) u.h.push_back(fp16_round(u.sigma * v));
    u.n_up = norm_upper(nu, d);
    u.n_lo = norm_lower(nu, d);
    long double hat = 0, err = 0;
    double hat64 = 0;
    for (int k = 0; k < d; ++k) {
      const long double v = static_cast<long double>(u.h[static_cast<std::size_t>(k)]) / u.sigma;
      hat += v * v;
      hat64 += static_cast<double>(v * v);
      err += (v - u.x[static_cast<std::size_t>(k)]) * (v - u.x[static_cast<std::size_t>(k)]);
    }
    u.n_hat = static_cast<float>(hat64);
    u.m = static_cast<double>(std::sqrt(hat)) * (1 + 0x1p-50);
    u.rho = static_cast<double>(std::sqrt(err)) * (1 + 0x1p-50);
    out.push_back(std::move(u));
  }
  return out;
}

// The rule's key: 1 − the sum over k in order of x̂_ik x̂_jk.
double key64(const UnitRow& a, const UnitRow& b) {
  double s = 0;
  for (std::size_t k = 0; k < a.x.size(); ++k) s += a.x[k] * b.x[k];
  return 1.0 - s;
}

float gram_d(const UnitRow& a, const UnitRow& b) {
  const float g = mma_model_dot(a.h, b.h, kFp16Gram.depth);
  return static_cast<float>(static_cast<double>(g) / (a.sigma * b.sigma));  // exact
}

// The joins' s̃: N = 1 for both rows.
float model_s(const UnitRow& a, const UnitRow& b) { return std::fma(-2.0f, gram_d(a, b), 1.0f + 1.0f); }

// The k-NN's s̃: the rounded rows' N̂.
float model_knn_s(const UnitRow& a, const UnitRow& b) { return std::fma(-2.0f, gram_d(a, b), a.n_hat + b.n_hat); }

double bound(const UnitRow& a, const UnitRow& b, int d) {
  return gram_cosine_bound(kFp16Gram, d, a.n_up, b.n_up, a.sigma, b.sigma);
}

Rows gaussian(std::size_t n, int d, std::mt19937_64& rng, double offset, double scale) {
  std::normal_distribution<double> g;
  Rows rows(n, std::vector<double>(static_cast<std::size_t>(d)));
  for (auto& r : rows)
    for (double& v : r) v = offset + scale * g(rng);
  return rows;
}

// The adversarial sets of dimension d.
std::vector<Rows> adversarial(std::size_t n, int d, std::mt19937_64& rng) {
  std::vector<Rows> sets;
  sets.push_back(gaussian(n, d, rng, 0.0, 1.0));
  // A common large component: every pair nearly parallel, keys ~1e-7 (cosine is offset-sensitive).
  sets.push_back(gaussian(n, d, rng, 1e3, 1.0));
  auto near = gaussian(n / 2, d, rng, 0.0, 1.0);
  std::normal_distribution<double> tiny(0.0, 1e-4);
  for (std::size_t i = 0, m = near.size(); i < m; ++i) {
    auto copy = near[i];
    for (double& v : copy) v += tiny(rng);
    near.push_back(copy);
  }
  near.push_back(near[0]);  // an exact duplicate: key 0 or an ulp beside it
  for (auto& v : near.back()) v *= 3;  // a parallel row of another length
  sets.push_back(near);
  auto spiky = gaussian(n, d, rng, 0.0, 1e-7);
  for (auto& r : spiky) r[rng() % r.size()] = 3.0;
  sets.push_back(spiky);
  auto norms = gaussian(n, d, rng, 0.0, 1.0);
  for (std::size_t i = 0; i < norms.size(); ++i)
    for (double& v : norms[i]) v *= std::pow(10.0, 3.0 * (static_cast<double>(i % 7) - 3));
  sets.push_back(norms);
  std::uniform_int_distribution<int> u(-1, 2);
  Rows lattice(n, std::vector<double>(static_cast<std::size_t>(d)));
  for (auto& r : lattice) {
    for (double& v : r) v = u(rng);
    r[0] = 3;  // (never a zero row)
  }
  sets.push_back(lattice);
  return sets;
}

}  // namespace

TEST(GramCosineBounds, TheModelStaysWithinTheBound) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  double worst = 0;
  for (int d : {3, 16, 17, 128, 960}) {
    for (const Rows& rows : adversarial(d >= 960 ? 40 : 90, d, rng)) {
      const auto r = prepare(rows);
      for (std::size_t i = 0; i < r.size(); ++i)
        for (std::size_t j = i + 1; j < r.size(); ++j) {
          const double e = bound(r[i], r[j], d);
          const double err = std::fabs(static_cast<double>(model_s(r[i], r[j])) - 2 * key64(r[i], r[j]));
          ASSERT_LE(err, e) << "d=" << d << " pair " << i << ", " << j;
          worst = std::max(worst, err / e);
        }
    }
  }
  RecordProperty("worst_error_over_bound", std::to_string(worst));
  EXPECT_GT(worst, 1e-3) << "the bound is far looser than the model's errors";
  // The bound's size at unit norms: about 2·(2u + ⌈d/16⌉·18·2^-22) in the tiles' units.
  EXPECT_LT(gram_cosine_bound(kFp16Gram, 128, 1, 1, 1, 1), 2.2e-3);
  EXPECT_GT(gram_cosine_bound(kFp16Gram, 128, 1, 1, 1, 1), 1.9e-3);
}

TEST(GramCosineBounds, RangeVerdictsNeverContradictTheRule) {
  // Edges exactly on keys of the set, the planner's lower edge −1 (a range from 0), eps = 0 (the
  // range [−1, DBL_TRUE_MIN): parallel rows only, their keys an ulp either side of 0), a range
  // ending at 0 (the slightly negative keys), one beyond every key.
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {17, 128}) {
    auto rows = gaussian(120, d, rng, 0.5, 1.0);
    for (std::size_t i = 0; i < 10; ++i) {
      rows.push_back(rows[i]);
      for (double& v : rows.back()) v *= 1.0 + static_cast<double>(i);  // parallel, other lengths
    }
    const auto r = prepare(rows);
    std::vector<double> keys;
    double tile_bound = 0;
    for (std::size_t i = 0; i < r.size(); ++i)
      for (std::size_t j = i + 1; j < r.size(); ++j) {
        keys.push_back(key64(r[i], r[j]));
        tile_bound = std::max(tile_bound, bound(r[i], r[j], d));
      }
    std::sort(keys.begin(), keys.end());
    const double k1 = keys[keys.size() / 50], k2 = keys[keys.size() / 3];
    const double ranges[][2] = {{-1, std::nextafter(k1, HUGE_VAL)}, {k1, k2}, {-1, 0x1p-1074}, {-1, 0.0},
                                {std::nextafter(0.0, 1.0), k2}, {k2, 1e300}, {-1, HUGE_VAL}};
    for (const auto& range : ranges) {
      const GramTileThresholds t = gram_tile_thresholds(gram_cosine_range(range[0], range[1]), tile_bound);
      std::size_t far_undecided = 0;
      for (std::size_t i = 0; i < r.size(); ++i)
        for (std::size_t j = i + 1; j < r.size(); ++j) {
          const double k = key64(r[i], r[j]);
          const bool truth = k >= range[0] && k < range[1];
          const GramVerdict v = gram_verdict(model_s(r[i], r[j]), t);
          if (v == GramVerdict::In) ASSERT_TRUE(truth) << "key " << k << " called in [" << range[0] << ", " << range[1] << ")";
          if (v == GramVerdict::Out) ASSERT_FALSE(truth) << "key " << k << " called out of [" << range[0] << ", " << range[1] << ")";
          // A key farther than twice the band from both edges is decided by the tiles.
          const bool far = std::fabs(k - range[1]) > 2 * tile_bound && std::fabs(k - range[0]) > 2 * tile_bound;
          far_undecided += v == GramVerdict::Undecided && far;
        }
      EXPECT_EQ(far_undecided, 0u) << "[" << range[0] << ", " << range[1] << ")";
    }
  }
}

// The cosine k-NN: the distance-space bound of the unit rows with c for 2·key
// (gram_cosine_knn_bound), from each row's own terms and from a tile's extremes.
TEST(GramCosineBounds, KnnKeyIntervalsHoldTwiceTheRuleKey) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {3, 17, 128, 960}) {
    for (const Rows& rows : adversarial(d >= 960 ? 40 : 80, d, rng)) {
      const auto r = prepare(rows);
      double m = 0, rho = 0, nup = 0, nlo = HUGE_VAL;  // the set as one tile
      for (const UnitRow& u : r) {
        m = std::max(m, u.m);
        rho = std::max(rho, u.rho);
        nup = std::max(nup, u.n_up);
        nlo = std::min(nlo, u.n_lo);
      }
      const GramKnnBound tile = gram_cosine_knn_bound(kFp16Gram, d, m, m, rho, rho, nup, nup, nlo, nlo);
      for (std::size_t i = 0; i < r.size(); ++i)
        for (std::size_t j = 0; j < r.size(); ++j) {
          if (i == j) continue;
          const double s = model_knn_s(r[i], r[j]), key2 = 2 * key64(r[i], r[j]);
          const GramKnnBound own = gram_cosine_knn_bound(kFp16Gram, d, r[i].m, r[j].m, r[i].rho, r[j].rho, r[i].n_up,
                                                         r[j].n_up, r[i].n_lo, r[j].n_lo);
          for (const GramKnnBound& b : {own, tile}) {
            ASSERT_LE(gram_key_lower(b, s), key2) << "d=" << d << " pair " << i << ", " << j;
            ASSERT_GE(gram_key_upper(b, s), key2) << "d=" << d << " pair " << i << ", " << j;
            ASSERT_LE(s, gram_key_admits(b, std::max(key2, 0.0) + b.c)) << "d=" << d;
          }
        }
    }
  }
}

TEST(GramCosineBounds, RangeInTheTilesUnits) {
  // Twice the largest double below each edge; the lower edge always tested; the cap.
  const GramRange r = gram_cosine_range(-1, 0.25);
  EXPECT_TRUE(r.has_lo);
  EXPECT_EQ(r.limit_hi, 2 * std::nextafter(0.25, 0.0));
  EXPECT_EQ(r.limit_lo, 2 * std::nextafter(-1.0, -2.0));
  EXPECT_EQ(gram_cosine_range(-1, 0.0).limit_hi, -0x1p-1073);  // keys < 0: 2·key <= −2·2^-1074
  EXPECT_EQ(gram_cosine_range(-1, HUGE_VAL).limit_hi, 0x1p120);
  EXPECT_EQ(gram_cosine_range(-HUGE_VAL, 1).limit_lo, -0x1p120);
}
