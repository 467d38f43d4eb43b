#pragma once
// What the k-NN tiles (gram_knn.hpp) need beside the Gram rows (gram_rows.hpp) for the bound in
// distance space (exact/gram_bounds.hpp: gram_knn_bound), prepared on the host from the same rows:
// per row, in the Gram rows' order (sorted by norm or not; `order` maps them to the set),
//   N̂ = fl32(fl64(Σ_k ĥ_k²))   the squared norm of the rounded row ĥ = h/σ (exact in float64), which
//                               the tiles take instead of N, so that s̃ approximates ‖ĥ_i − ĥ_j‖²;
//   m ≥ ‖ĥ‖, ρ ≥ ‖ĥ − x'‖ (the row's FP16 rounding, measured), and a lower bound of ‖x'‖;
// and per block of kGramRowBlock rows the largest m, ρ and n and the smallest lower bound of ‖x'‖
// (the tiles' bound and the norm-gap pruning). Plain C++ (the CPU suite tests it): the reference
// of the same terms computed on the device (gram_knn_rows_device.hpp), which gives them bit for bit.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "twobody/detail/cuda/gram_rows.hpp"
#include "twobody/detail/exact/gram_bounds.hpp"

namespace twobody::cuda {

// One block of kGramRowBlock rows: the bound's inputs for every pair it is in.
struct GramKnnBlock {
  double m_max;    // largest ‖ĥ‖ (upper bounds)
  double rho_max;  // largest ‖ĥ − x'‖ (upper bounds)
  double n_max;    // largest ‖x'‖ (upper bounds: GramRows::norm_up)
  double n_min;    // smallest ‖x'‖ (lower bounds)
};

// The bound in distance space of every pair of blocks i and j (from their largest m, ρ and n).
TWOBODY_GRAM_HD inline exact::GramKnnBound block_knn_bound(const exact::GramFormat& f, int d, const GramKnnBlock& i,
                                                           const GramKnnBlock& j) {
  return exact::gram_knn_bound(f, d, i.m_max, j.m_max, i.rho_max, j.rho_max, i.n_max, j.n_max);
}

struct GramKnnRows {
  std::vector<float> norm2;          // N̂, n_padded (0 for padding)
  std::vector<double> rounded_norm;  // m of each real row
  std::vector<double> rounding;      // ρ of each real row
  std::vector<double> norm_low;      // lower bound of ‖x'‖ of each real row
  std::vector<GramKnnBlock> blocks;  // n_padded / kGramRowBlock (a block without real rows: zeros)
};

// A row's terms from its three float64 sums over k in stored order: hat = Σ ĥ_k², err = Σ δ_k²
// (δ = ĥ − x', each difference rounded), shifted = Σ x'_k². One function for the host and the
// device (gram_knn_rows_device.hpp), so both give the same bits.
struct GramKnnRowTerms {
  float norm2;          // N̂
  double rounded_norm;  // m
  double rounding;      // ρ
  double norm_low;      // lower bound of ‖x'‖
};
TWOBODY_GRAM_HD inline GramKnnRowTerms gram_knn_row_terms(double hat, double err, double shifted, int dim) {
  // Σ fl(δ)² is within γ_{d+2} of ‖δ‖² (δ's own rounding, the square, the sum), plus what the
  // squares of tiny δ may lose to underflow (2^-1074 each).
  const double sq = exact::outward_up(err * (1 + exact::gamma64(dim + 3)) + static_cast<double>(dim) * 0x1p-1074);
  return {static_cast<float>(hat), exact::norm_upper(hat, dim), exact::outward_up(std::sqrt(sq)),
          exact::norm_lower(shifted, dim)};
}

// The terms of the rows `g` was prepared from (`rows`: the set's float64 rule rows, g.n x g.dim,
// in the set's order; `centre` the one g was made about). g must not be a refusal.
GramKnnRows make_gram_knn_rows(const GramRows& g, const double* rows, const std::vector<double>& centre, int threads);

// Entries a query's list keeps for k neighbours among `partners` (the k-NN tiles' K'): k and room
// for the candidates in the bound's band beyond the k-th (k/2, at least 32), in whole warps, at
// most every partner; `forced` (a test's override, 0: none) within [k, partners].
std::size_t gram_knn_capacity(int k, std::size_t partners, std::size_t forced = 0);

}  // namespace twobody::cuda
