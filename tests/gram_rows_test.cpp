// The Gram tiles' host preparation (cuda/gram_rows.hpp): FP16 rounding in one step from float64
// (round to nearest even, subnormals kept), the per-row power-of-two scales, norms and padding
// that exact/gram_bounds.hpp's bound assumes, and the refusal of rows outside its range.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "test_support.hpp"
#include "twobody/detail/cpu/vector_rows.hpp"
#include "twobody/detail/cuda/gram_knn_rows.hpp"
#include "twobody/detail/cuda/gram_rows.hpp"
#include "twobody/detail/exact/gram_bounds.hpp"

using namespace twobody::cuda;
using testing_support::fresh_seed;

namespace {

// FP16 rounding written apart: the multiple of the spacing nearest v, ties to even.
double fp16_reference(double v) {
  if (v == 0) return v;
  const double a = std::fabs(v);
  const double q = a < 0x1p-14 ? 0x1p-24 : std::ldexp(1.0, std::ilogb(a) - 10);
  return std::copysign(std::nearbyint(a / q) * q, v);
}

}  // namespace

TEST(GramRows, HalfRoundingIsOneRoundingToNearestEven) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::uniform_real_distribution<double> exponent(-30, 0.5);
  for (int t = 0; t < 200000; ++t) {
    const double v = (rng() % 2 ? -1 : 1) * std::pow(2.0, exponent(rng));
    ASSERT_EQ(half_value(half_bits(v)), fp16_reference(v)) << v;
#if defined(__FLT16_MAX__)
    ASSERT_EQ(half_value(half_bits(v)), static_cast<double>(static_cast<_Float16>(v))) << v;
#endif
  }
  // Ties go to even; a float32 detour would round 1 + 2^-11 + 2^-40 twice, to 1.
  EXPECT_EQ(half_value(half_bits(1 + 0x1p-11)), 1.0);
  EXPECT_EQ(half_value(half_bits(1 + 3 * 0x1p-11)), 1 + 0x1p-9);
  EXPECT_EQ(half_value(half_bits(1 + 0x1p-11 + 0x1p-40)), 1 + 0x1p-10);
  EXPECT_EQ(half_value(half_bits(0x1p-25)), 0.0);               // half the smallest subnormal: to even (0)
  EXPECT_EQ(half_value(half_bits(3 * 0x1p-25)), 0x1p-23);       // 1.5 subnormal units: to 2
  EXPECT_EQ(half_bits(0x1p-14 - 0x1p-26), 0x0400);              // rounds up into the smallest normal
  EXPECT_EQ(half_bits(0.99999), 0x3c00);                        // up to 1
  EXPECT_EQ(half_bits(-0.0), 0x8000);
}

TEST(GramRows, ScalesNormsPaddingAndBlocks) {
  std::mt19937_64 rng(fresh_seed());
  std::normal_distribution<double> g;
  constexpr std::size_t n = 300;
  constexpr int d = 37;
  std::vector<double> rows(n * d);
  for (std::size_t t = 0; t < rows.size(); ++t) rows[t] = 1e3 + g(rng) * std::pow(10.0, static_cast<double>(t / d % 5) - 2);
  for (int k = 0; k < d; ++k) rows[7 * d + k] = 0;  // one row far from the others
  const std::vector<double> c = gram_centre(rows.data(), n, nullptr, 0, d, 3);
  EXPECT_EQ(c, gram_centre(rows.data(), n, nullptr, 0, d, 1)) << "the centre depends on the threads";
  const GramRows r = make_gram_rows(rows.data(), n, d, c, 2);
  ASSERT_EQ(r.refusal, "");
  EXPECT_EQ(r.n_padded, 384u);
  EXPECT_EQ(r.dim_padded, 64);
  for (std::size_t i = 0; i < n; ++i) {
    double mx = 0, ss = 0;
    for (int k = 0; k < d; ++k) {
      const double x = rows[i * d + k] - c[static_cast<std::size_t>(k)];
      mx = std::max(mx, std::fabs(x));
      ss += x * x;
      ASSERT_EQ(half_value(r.half[i * 64 + k]), fp16_reference(r.sigma[i] * x));
    }
    EXPECT_GE(mx * r.sigma[i], 0.5);
    EXPECT_LT(mx * r.sigma[i], 1.0);
    EXPECT_EQ(static_cast<double>(r.inv_sigma[i]), 1 / r.sigma[i]);
    EXPECT_EQ(r.norm2[i], static_cast<float>(ss));
    EXPECT_EQ(r.norm_up[i], twobody::exact::norm_upper(ss, d));
    EXPECT_GE(r.norm_up[i], std::sqrt(ss));
    for (int k = d; k < 64; ++k) ASSERT_EQ(r.half[i * 64 + k], 0);
    EXPECT_LE(r.norm_up[i], r.block_norm_max[i / kGramRowBlock]);
    EXPECT_GE(r.sigma[i], r.block_sigma_min[i / kGramRowBlock]);
  }
  for (std::size_t i = n; i < r.n_padded; ++i) {
    EXPECT_EQ(r.norm2[i], 0.f);
    for (int k = 0; k < 64; ++k) ASSERT_EQ(r.half[i * 64 + k], 0);
  }
}

TEST(GramRows, SortedByNormRowsKeepTheirContentAndSayWhence) {
  std::mt19937_64 rng(fresh_seed());
  std::normal_distribution<double> g;
  constexpr std::size_t n = 400;
  constexpr int d = 20;
  std::vector<double> rows(n * d);
  for (std::size_t t = 0; t < rows.size(); ++t) rows[t] = g(rng) * std::pow(10.0, static_cast<double>(t / d % 7) - 3);
  const std::vector<double> c = gram_centre(rows.data(), n, nullptr, 0, d, 1);
  const GramRows plain = make_gram_rows(rows.data(), n, d, c, 1);
  GramRows sorted = plain;
  sort_by_norm(sorted);
  ASSERT_EQ(sorted.order.size(), sorted.n_padded);
  std::vector<bool> seen(n, false);
  for (std::size_t r = 0; r < n; ++r) {
    const std::size_t from = sorted.order[r];
    ASSERT_LT(from, n);
    EXPECT_FALSE(seen[from]);
    seen[from] = true;
    if (r) EXPECT_LE(sorted.norm_up[r - 1], sorted.norm_up[r]);
    EXPECT_EQ(sorted.norm_up[r], plain.norm_up[from]);
    EXPECT_EQ(sorted.sigma[r], plain.sigma[from]);
    EXPECT_EQ(sorted.norm2[r], plain.norm2[from]);
    EXPECT_EQ(sorted.inv_sigma[r], plain.inv_sigma[from]);
    for (int k = 0; k < sorted.dim_padded; ++k)
      ASSERT_EQ(sorted.half[r * 32 + k], plain.half[from * 32 + k]);
    EXPECT_LE(sorted.norm_up[r], sorted.block_norm_max[r / kGramRowBlock]);
    EXPECT_GE(sorted.sigma[r], sorted.block_sigma_min[r / kGramRowBlock]);
  }
  for (std::size_t r = n; r < sorted.n_padded; ++r) EXPECT_EQ(sorted.order[r], r);
  // Norms over six decades (about the centre, which the large rows pull ~10^2 from the small
  // ones): sorted, the first block's largest norm is far below the set's.
  EXPECT_LT(sorted.block_norm_max[0], 0.05 * sorted.block_norm_max.back());
  EXPECT_EQ(*std::max_element(plain.block_norm_max.begin(), plain.block_norm_max.end()), sorted.block_norm_max.back());
}

TEST(GramRows, RowsOutsideTheRangeAreRefused) {
  std::vector<double> rows{0, 0, 0, 1, 1, 1, 0, 2e13, 0};  // centred, one coordinate beyond 2^40
  EXPECT_NE(make_gram_rows(rows.data(), 3, 3, gram_centre(rows.data(), 3, nullptr, 0, 3, 1), 1).refusal.find("outside"),
            std::string::npos);
  rows = {1, 1, 1e-13, 1, 1, 1};  // a row 1e-13 from the centre: below 2^-40
  const std::vector<double> centre{1, 1, 1e-13 / 2};
  EXPECT_NE(make_gram_rows(rows.data(), 2, 3, centre, 1).refusal, "");
  rows = {1, 1, 1, 1, 1, 1};  // rows equal to the centre: zero rows, fine
  EXPECT_EQ(make_gram_rows(rows.data(), 2, 3, {1, 1, 1}, 1).refusal, "");
  rows = {1, HUGE_VAL, 0, 0};
  EXPECT_NE(make_gram_rows(rows.data(), 2, 2, gram_centre(rows.data(), 2, nullptr, 0, 2, 1), 1).refusal, "");
}

// The k-NN tiles' terms (gram_knn_rows.hpp) against long double sums over the rows' FP16 values:
// N̂ the float32 of the rounded row's squared norm (within the bound's norm_rel), m >= ‖ĥ‖ and
// ρ >= ‖ĥ − x'‖ tight to 10^-12, a lower bound of ‖x'‖ below n, the blocks' extremes; on norms
// over six decades, sorted by norm, with a zero row and a row of FP16 subnormals.
TEST(GramRows, KnnTermsBoundTheRoundedRows) {
  std::mt19937_64 rng(fresh_seed());
  std::normal_distribution<double> g;
  constexpr std::size_t n = 333;
  constexpr int d = 45;
  std::vector<double> rows(n * d);
  for (std::size_t t = 0; t < rows.size(); ++t) rows[t] = 7 + g(rng) * std::pow(10.0, static_cast<double>(t / d % 7) - 3);
  const std::vector<double> c = gram_centre(rows.data(), n, nullptr, 0, d, 1);
  for (int k = 0; k < d; ++k) rows[5 * d + k] = c[static_cast<std::size_t>(k)];  // a zero row about the centre
  for (int k = 0; k < d; ++k) rows[11 * d + k] = c[static_cast<std::size_t>(k)] + (k == 4 ? 3 : 1e-9 * g(rng));  // FP16 subnormals, zeros
  GramRows gr = make_gram_rows(rows.data(), n, d, c, 2);
  ASSERT_EQ(gr.refusal, "");
  sort_by_norm(gr, 2);
  const GramKnnRows kr = make_gram_knn_rows(gr, rows.data(), c, 3);
  ASSERT_EQ(kr.norm2.size(), gr.n_padded);
  ASSERT_EQ(kr.blocks.size(), gr.n_padded / kGramRowBlock);
  const double norm_rel = 0x1p-24 * (1 + twobody::exact::gamma64(d)) + twobody::exact::gamma64(d);
  for (std::size_t r = 0; r < n; ++r) {
    const double* x = rows.data() + static_cast<std::size_t>(gr.order[r]) * d;
    long double hat = 0, err = 0, shifted = 0;
    for (int k = 0; k < d; ++k) {
      const long double xs = x[k] - c[static_cast<std::size_t>(k)];
      const long double v = static_cast<long double>(half_value(gr.half[r * 64 + static_cast<std::size_t>(k)])) / gr.sigma[r];
      hat += v * v;
      err += (v - xs) * (v - xs);
      shifted += xs * xs;
    }
    const double m = static_cast<double>(std::sqrt(hat)), rho = static_cast<double>(std::sqrt(err));
    EXPECT_LE(std::fabs(static_cast<double>(kr.norm2[r]) - static_cast<double>(hat)), norm_rel * m * m + 1e-300) << r;
    EXPECT_GE(kr.rounded_norm[r], m);
    EXPECT_LE(kr.rounded_norm[r], m * (1 + 1e-12));
    EXPECT_GE(kr.rounding[r], rho) << r;
    EXPECT_LE(kr.rounding[r], rho * (1 + 1e-12) + 1e-150) << r;  // (+ what underflowing squares may lose)
    EXPECT_LE(kr.norm_low[r], static_cast<double>(std::sqrt(shifted)));
    EXPECT_GE(kr.norm_low[r], gr.norm_up[r] * (1 - 1e-12));
    const GramKnnBlock& b = kr.blocks[r / kGramRowBlock];
    EXPECT_LE(kr.rounded_norm[r], b.m_max);
    EXPECT_LE(kr.rounding[r], b.rho_max);
    EXPECT_LE(gr.norm_up[r], b.n_max);
    EXPECT_GE(kr.norm_low[r], b.n_min);
    // FP16 keeps 11 bits: the rounding is a small part of the norm.
    EXPECT_LE(kr.rounding[r], 0x1p-11 * m * 1.01 + 1e-150);
  }
  for (std::size_t r = n; r < gr.n_padded; ++r) EXPECT_EQ(kr.norm2[r], 0.f);
  // Sorted by norm: the blocks' extremes rise block to block (the norm gap's pruning relies on it).
  for (std::size_t b = 1; b < kr.blocks.size(); ++b) {
    EXPECT_LE(kr.blocks[b - 1].n_max, kr.blocks[b].n_max);
    EXPECT_LE(kr.blocks[b - 1].n_min, kr.blocks[b].n_min);
  }
  EXPECT_EQ(make_gram_knn_rows(gr, rows.data(), c, 1).rounding, kr.rounding) << "the terms depend on the threads";
}

TEST(GramRows, KnnListCapacity) {
  EXPECT_EQ(gram_knn_capacity(10, 1000000), 64u);   // k + 32, in whole warps
  EXPECT_EQ(gram_knn_capacity(1, 1000000), 64u);
  EXPECT_EQ(gram_knn_capacity(64, 1000000), 96u);
  EXPECT_EQ(gram_knn_capacity(65, 1000000), 128u);  // 65 + 32 = 97
  EXPECT_EQ(gram_knn_capacity(1024, 1000000), 1536u);
  EXPECT_EQ(gram_knn_capacity(10, 40), 40u);        // never more than the partners
  EXPECT_EQ(gram_knn_capacity(40, 40), 40u);
  EXPECT_EQ(gram_knn_capacity(10, 1000, 3), 10u);   // a forced capacity: at least k
  EXPECT_EQ(gram_knn_capacity(10, 1000, 17), 17u);
  EXPECT_EQ(gram_knn_capacity(10, 12, 500), 12u);
}

// The cosine distance's rows (make_cosine_gram_rows): the rule's normalised rows prepared about a
// zero centre, every real row's N = 1 (padding 0), the rest as make_gram_rows gives them; and the
// rule's refusal of a row without a direction, in the CPU's words.
TEST(GramRows, CosineRowsAreTheUnitRowsWithUnitNorms) {
  std::mt19937_64 rng(fresh_seed());
  std::normal_distribution<double> g;
  constexpr std::size_t n = 200;
  constexpr int d = 33;
  std::vector<double> raw(n * d);
  for (double& x : raw) x = 1e3 + g(rng);  // a large common component: nearly parallel rows
  const twobody::VectorSet v = twobody::VectorSet::from_rows(raw, n, d);
  const std::vector<double> unit = twobody::cpu::rule_rows_f64(v, twobody::Metric::Cosine, 2, "");
  const GramRows c = make_cosine_gram_rows(unit.data(), n, d, 2);
  ASSERT_EQ(c.refusal, "");
  const GramRows e = make_gram_rows(unit.data(), n, d, std::vector<double>(d, 0.0), 2);
  EXPECT_EQ(c.half, e.half);
  EXPECT_EQ(c.sigma, e.sigma);
  EXPECT_EQ(c.norm_up, e.norm_up);
  for (std::size_t r = 0; r < c.n_padded; ++r) EXPECT_EQ(c.norm2[r], r < n ? 1.f : 0.f) << r;
  for (std::size_t r = 0; r < n; ++r) {
    EXPECT_LE(c.norm_up[r], 1 + 1e-13);
    EXPECT_GE(c.norm_up[r], 1.0);
  }
  std::vector<double> zero = raw;
  std::fill_n(zero.begin() + 7 * d, d, 0.0);
  const twobody::VectorSet z = twobody::VectorSet::from_rows(zero, n, d);
  testing_support::expect_error(twobody::ErrorKind::Input, "second set: vector 8 has norm 0: the cosine distance",
                                [&] { refuse_cosine_row(z, 7, "second set: "); });
  testing_support::expect_error(twobody::ErrorKind::Input, "vector 8 has norm 0",
                                [&] { twobody::cpu::rule_rows_f64(z, twobody::Metric::Cosine, 2, ""); });
}
