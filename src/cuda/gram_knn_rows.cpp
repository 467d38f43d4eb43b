#include "twobody/detail/cuda/gram_knn_rows.hpp"

#include <algorithm>
#include <cmath>

#include "twobody/detail/exact/gram_bounds.hpp"

namespace twobody::cuda {

namespace {

// The values of all FP16 bit patterns as float32 (exact: 11 significant bits, exponents in range),
// built once: a lookup a coordinate.
const std::vector<float>& half_values() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (std::size_t b = 0; b < t.size(); ++b) t[b] = static_cast<float>(half_value(static_cast<std::uint16_t>(b)));
    return t;
  }();
  return table;
}

}  // namespace

GramKnnRows make_gram_knn_rows(const GramRows& g, const double* rows, const std::vector<double>& centre, int threads) {
  GramKnnRows k;
  const std::size_t n = g.n, d = static_cast<std::size_t>(g.dim), dp = static_cast<std::size_t>(g.dim_padded);
  k.norm2.assign(g.n_padded, 0.f);
  k.rounded_norm.assign(n, 0.0);
  k.rounding.assign(n, 0.0);
  k.norm_low.assign(n, 0.0);
  const std::vector<float>& values = half_values();
  const auto rows_n = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::ptrdiff_t rr = 0; rr < rows_n; ++rr) {
    const std::size_t r = static_cast<std::size_t>(rr);
    const double* x = rows + static_cast<std::size_t>(g.order[r]) * d;
    const std::uint16_t* h = g.half.data() + r * dp;
    const double inv_sigma = 1.0 / g.sigma[r];  // a power of two: ĥ = h/σ exact
    double hat = 0, err = 0, shifted = 0;
    for (std::size_t c = 0; c < d; ++c) {
      const double xs = x[c] - centre[c];  // x', as make_gram_rows computes it
      const double v = static_cast<double>(values[h[c]]) * inv_sigma;
      const double delta = v - xs;
      hat += v * v;  // exact squares (11-bit values), summed in order: within γ_d
      err += delta * delta;
      shifted += xs * xs;
    }
    const GramKnnRowTerms t = gram_knn_row_terms(hat, err, shifted, g.dim);
    k.norm2[r] = t.norm2;
    k.rounded_norm[r] = t.rounded_norm;
    k.rounding[r] = t.rounding;
    k.norm_low[r] = t.norm_low;
  }
  const std::size_t blocks = g.n_padded / kGramRowBlock;
  k.blocks.assign(blocks, GramKnnBlock{0, 0, 0, 0});
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t r0 = b * kGramRowBlock, r1 = std::min(n, r0 + kGramRowBlock);
    if (r0 >= r1) continue;
    GramKnnBlock blk{0, 0, 0, HUGE_VAL};
    for (std::size_t r = r0; r < r1; ++r) {
      blk.m_max = std::max(blk.m_max, k.rounded_norm[r]);
      blk.rho_max = std::max(blk.rho_max, k.rounding[r]);
      blk.n_max = std::max(blk.n_max, g.norm_up[r]);
      blk.n_min = std::min(blk.n_min, k.norm_low[r]);
    }
    k.blocks[b] = blk;
  }
  return k;
}

std::size_t gram_knn_capacity(int k, std::size_t partners, std::size_t forced) {
  const std::size_t kk = static_cast<std::size_t>(k);
  if (forced) return std::clamp(forced, kk, std::max(kk, partners));
  const std::size_t want = (kk + std::max<std::size_t>(32, kk / 2) + 31) / 32 * 32;
  return std::max(kk, std::min(want, partners));
}

}  // namespace twobody::cuda
