#include "twobody/detail/cuda/gram_rows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "twobody/detail/cpu/vector_rows.hpp"
#include "twobody/detail/exact/gram_bounds.hpp"

namespace twobody::cuda {

namespace {

std::size_t round_up(std::size_t v, std::size_t to) { return (v + to - 1) / to * to; }

// The largest |x_k − c_k| of a row, and its sum of squares (float64, in order).
void shifted_stats(const double* x, int dim, const std::vector<double>& c, double& max_abs, double& sum_sq) {
  max_abs = 0;
  sum_sq = 0;
  for (int k = 0; k < dim; ++k) {
    const double v = x[k] - c[static_cast<std::size_t>(k)];
    max_abs = std::max(max_abs, std::fabs(v));
    sum_sq += v * v;
  }
}

// Per block of kGramRowBlock rows: the largest n and the smallest σ of its real rows.
void block_bounds(GramRows& g) {
  const std::size_t blocks = g.n_padded / kGramRowBlock;
  g.block_norm_max.assign(blocks, 0.0);
  g.block_sigma_min.assign(blocks, std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < g.n; ++i) {
    const std::size_t b = i / kGramRowBlock;
    g.block_norm_max[b] = std::max(g.block_norm_max[b], g.norm_up[i]);
    g.block_sigma_min[b] = std::min(g.block_sigma_min[b], g.sigma[i]);
  }
  for (double& s : g.block_sigma_min)
    if (std::isinf(s)) s = 1.0;  // a block of padding only (never launched)
}

}  // namespace

std::string gram_row_refusal(const double* row, int dim, const std::vector<double>& centre, std::size_t index) {
  double mx = 0, ss = 0;
  shifted_stats(row, dim, centre, mx, ss);
  if (gram_row_fits(mx, ss)) return {};
  return !std::isfinite(ss) ? fmt::format("row {}'s squared norm about the centre is not finite", index + 1)
                            : fmt::format("row {} has a largest centred coordinate of {:g}, outside [2^-40, 2^40]", index + 1, mx);
}

std::string gram_centre_refusal(const std::vector<double>& centre) {
  for (double c : centre)
    if (!std::isfinite(c)) return "the rows' mean is not finite";
  return {};
}

double half_value(std::uint16_t bits) {
  const int e = (bits >> 10) & 0x1f, m = bits & 0x3ff;
  const double a = e == 0 ? std::ldexp(m, -24) : e == 31 ? HUGE_VAL : std::ldexp(m + 1024, e - 25);
  return bits & 0x8000 ? -a : a;
}

std::vector<double> gram_centre(const double* a, std::size_t na, const double* b, std::size_t nb, int dim, int threads) {
  constexpr std::size_t kRows = kGramCentreRows;
  const std::size_t d = static_cast<std::size_t>(dim), n = na + nb, chunks = (n + kRows - 1) / kRows;
  std::vector<double> part(chunks * d, 0.0);
  const auto chunks_n = static_cast<std::ptrdiff_t>(chunks);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::ptrdiff_t cc = 0; cc < chunks_n; ++cc) {
    const std::size_t c = static_cast<std::size_t>(cc);
    for (std::size_t i = c * kRows; i < std::min(n, (c + 1) * kRows); ++i) {
      const double* x = i < na ? a + i * d : b + (i - na) * d;
      for (std::size_t k = 0; k < d; ++k) part[c * d + k] += x[k];
    }
  }
  std::vector<double> centre(d, 0.0);
  for (std::size_t c = 0; c < chunks; ++c)
    for (std::size_t k = 0; k < d; ++k) centre[k] += part[c * d + k];
  if (n > 0)
    for (double& v : centre) v /= static_cast<double>(n);
  return centre;
}

GramRows make_gram_rows(const double* rows, std::size_t n, int dim, const std::vector<double>& centre, int threads) {
  GramRows g;
  g.n = n;
  g.n_padded = std::max<std::size_t>(round_up(n, kGramRowBlock), kGramRowBlock);
  g.dim = dim;
  g.dim_padded = static_cast<int>(round_up(static_cast<std::size_t>(dim), kGramChunk));
  const std::size_t dp = static_cast<std::size_t>(g.dim_padded), d = static_cast<std::size_t>(dim);
  g.half.assign(g.n_padded * dp, 0);
  g.norm2.assign(g.n_padded, 0.f);
  g.inv_sigma.assign(g.n_padded, 1.f);
  g.norm_up.assign(n, 0.0);
  g.sigma.assign(n, 1.0);
  g.refusal = gram_centre_refusal(centre);
  if (!g.refusal.empty()) return g;
  const auto rows_n = static_cast<std::ptrdiff_t>(n);
  std::ptrdiff_t first_bad = rows_n;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(min : first_bad)
  for (std::ptrdiff_t ii = 0; ii < rows_n; ++ii) {
    const std::size_t i = static_cast<std::size_t>(ii);
    const double* x = rows + i * d;
    double mx = 0, ss = 0;
    shifted_stats(x, dim, centre, mx, ss);
    if (!gram_row_fits(mx, ss)) {
      first_bad = std::min(first_bad, ii);
      continue;
    }
    const double sigma = gram_row_scale(mx);
    for (std::size_t k = 0; k < d; ++k) g.half[i * dp + k] = half_bits(sigma * (x[k] - centre[k]));
    g.norm2[i] = static_cast<float>(ss);
    g.inv_sigma[i] = static_cast<float>(1.0 / sigma);
    g.norm_up[i] = exact::norm_upper(ss, dim);
    g.sigma[i] = sigma;
  }
  if (first_bad < rows_n) {
    const std::size_t i = static_cast<std::size_t>(first_bad);
    g.refusal = gram_row_refusal(rows + i * d, dim, centre, i);
    return g;
  }
  g.order.resize(g.n_padded);
  std::iota(g.order.begin(), g.order.end(), std::uint32_t{0});
  block_bounds(g);
  return g;
}

GramRows make_cosine_gram_rows(const double* unit_rows, std::size_t n, int dim, int threads) {
  GramRows g = make_gram_rows(unit_rows, n, dim, std::vector<double>(static_cast<std::size_t>(dim), 0.0), threads);
  if (g.refusal.empty()) std::fill_n(g.norm2.begin(), n, 1.f);
  return g;
}

void refuse_cosine_row(const VectorSet& v, std::size_t index, const std::string& which) {
  std::vector<double> row(static_cast<std::size_t>(v.dim()));
  v.row_f64(index, row.data());
  cpu::throw_cosine_norm(which, index, cpu::cosine_rule_norm(row.data(), v.dim()));
}

void sort_by_norm(GramRows& g, int threads) {
  std::vector<std::uint32_t> by(g.n);
  std::iota(by.begin(), by.end(), std::uint32_t{0});
  std::stable_sort(by.begin(), by.end(), [&](std::uint32_t x, std::uint32_t y) { return g.norm_up[x] < g.norm_up[y]; });
  const std::size_t dp = static_cast<std::size_t>(g.dim_padded);
  std::vector<std::uint16_t> half(g.half.size(), 0);
  std::vector<float> norm2 = g.norm2, inv_sigma = g.inv_sigma;
  std::vector<double> norm_up(g.n), sigma(g.n);
  std::vector<std::uint32_t> order = g.order;
  const auto rows_n = static_cast<std::ptrdiff_t>(g.n);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::ptrdiff_t rr = 0; rr < rows_n; ++rr) {
    const std::size_t r = static_cast<std::size_t>(rr), from = by[r];
    std::copy_n(g.half.begin() + static_cast<std::ptrdiff_t>(from * dp), dp, half.begin() + static_cast<std::ptrdiff_t>(r * dp));
    norm2[r] = g.norm2[from];
    inv_sigma[r] = g.inv_sigma[from];
    norm_up[r] = g.norm_up[from];
    sigma[r] = g.sigma[from];
    order[r] = g.order[from];
  }
  g.half = std::move(half);
  g.norm2 = std::move(norm2);
  g.inv_sigma = std::move(inv_sigma);
  g.norm_up = std::move(norm_up);
  g.sigma = std::move(sigma);
  g.order = std::move(order);
  block_bounds(g);
}

}  // namespace twobody::cuda
