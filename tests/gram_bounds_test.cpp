// The Gram distance bound (exact/gram_bounds.hpp) on a software model of the tensor cores'
// arithmetic: rows rounded to FP16 with subnormals, exact products, each MMA's addends truncated
// to 22 bits of the largest and the sum rounded to float32, the float32 epilogue with one rounding
// for the norms' sum and a fused multiply-add. On adversarial rows the model's distance never
// leaves the bound of the float64 rule's key, and the tile thresholds never contradict the rule.
// The GPU suite will measure the same ratio on the hardware's own MMAs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "test_support.hpp"
#include "twobody/detail/exact/gram_bounds.hpp"

using namespace twobody::exact;
using testing_support::fresh_seed;

namespace {

double fp16_round(double v) {
  if (v == 0) return 0;
  const double a = std::fabs(v);
  const double q = a < 0x1p-14 ? 0x1p-24 : std::ldexp(1.0, std::ilogb(a) - 10);
  return std::copysign(std::nearbyint(a / q) * q, v);
}

// The tensor cores' sum of the products, MMA by MMA (K products each) into a float32 accumulator.
float mma_model_dot(const std::vector<double>& hi, const std::vector<double>& hj, int depth) {
  float acc = 0;
  const std::size_t d = hi.size();
  for (std::size_t k0 = 0; k0 < d; k0 += static_cast<std::size_t>(depth)) {
    std::vector<double> add{static_cast<double>(acc)};
    for (std::size_t k = k0; k < std::min(d, k0 + static_cast<std::size_t>(depth)); ++k) add.push_back(hi[k] * hj[k]);
    double m = 0;
    for (double a : add) m = std::max(m, std::fabs(a));
    if (m == 0) continue;
    const double q = std::ldexp(1.0, std::ilogb(m) - 22);
    double sum = 0;
    for (double a : add) sum += std::trunc(a / q) * q;  // exact: multiples of q, few bits
    acc = static_cast<float>(sum);
  }
  return acc;
}

struct Row {
  std::vector<double> x;   // as given
  std::vector<double> xs;  // shifted, float64
  std::vector<double> h;   // scaled and rounded to FP16
  double sigma = 1, nu = 0, n_up = 0;
  float N = 0;
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

float model_distance(const Row& a, const Row& b) {
  const float g = mma_model_dot(a.h, b.h, kFp16Gram.depth);
  const float D = static_cast<float>(static_cast<double>(g) / (a.sigma * b.sigma));  // exact
  const float t = a.N + b.N;
  return std::fma(-2.0f, D, t);
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
    // Near-duplicates: distances far below the norms, the bound's hardest regime in relative terms.
    auto near = gaussian(n / 2, d, rng, 0.0, 1.0);
    std::normal_distribution<double> tiny(0.0, 1e-4);
    for (std::size_t i = 0, m = near.size(); i < m; ++i) {
      auto copy = near[i];
      for (double& v : copy) v += tiny(rng);
      near.push_back(copy);
    }
    worst = std::max(worst, worst_ratio(near, "near duplicates"));
    // One large coordinate, the others tiny: FP16 subnormals after the row's scaling.
    auto spiky = gaussian(n, d, rng, 0.0, 1e-7);
    for (auto& r : spiky) r[rng() % r.size()] = 3.0;
    worst = std::max(worst, worst_ratio(spiky, "spikes and subnormals"));
    // Rows of norms from 1e-3 to 1e3: the scales differ between the two rows of a pair.
    auto norms = gaussian(n, d, rng, 0.0, 1.0);
    for (std::size_t i = 0; i < norms.size(); ++i)
      for (double& v : norms[i]) v *= std::pow(10.0, static_cast<double>(i % 7) - 3);
    worst = std::max(worst, worst_ratio(norms, "norms 1e-3..1e3"));
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
