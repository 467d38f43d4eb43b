#pragma once
// The rows of a Gram-tile join (cuda/gram_tiles.hpp) as the tensor cores read them, prepared on
// the host from the float64 rule rows (exact/gram_bounds.hpp names the arithmetic):
//   x' = fl64(x − c) about a common centre c (the column means of both sets, float64),
//   σ  = a power of two with max_k |σ x'_k| in [1/2, 1) (1 for a row equal to the centre),
//   h  = fp16(σ x') rounded to nearest, subnormals kept, zeros beyond d and beyond the last row,
//   N  = fl32(fl64(Σ_k x'_k²)) and n = norm_upper(fl64(Σ_k x'_k²), d).
// Rows may be reordered (sort_by_norm; `order` maps them back). Rows are padded to a multiple of kGramRowBlock and coordinates to a multiple of kGramChunk, so
// the kernel stages whole tiles without bounds checks; per block of kGramRowBlock rows the largest
// n and the smallest σ give the tile's error bound. Plain C++ (the CPU suite tests it).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace twobody::cuda {

constexpr int kGramRowBlock = 128;  // rows of a CTA tile (gram_tiles.cu)
constexpr int kGramChunk = 32;      // FP16 coordinates staged at a time (two MMAs of depth 16)

struct GramRows {
  std::size_t n = 0, n_padded = 0;  // rows, and rows with the padding
  int dim = 0, dim_padded = 0;
  std::vector<std::uint16_t> half;      // n_padded x dim_padded FP16 bits of σ x', row-major
  std::vector<float> norm2;             // N, n_padded (0 for padding)
  std::vector<float> inv_sigma;         // 1 / σ, exact in float32 (1 for padding)
  std::vector<double> norm_up, sigma;   // n and σ of each real row (the bound's inputs)
  std::vector<double> block_norm_max;   // per block of kGramRowBlock rows: max n
  std::vector<double> block_sigma_min;  //                                    min σ
  std::vector<std::uint32_t> order;     // the set's index of each row, n_padded (padding: itself)
  std::string refusal;                  // "" when the rows can take the path
};

// The common centre of one or two sets of float64 rows (n x dim each, row-major): column means.
std::vector<double> gram_centre(const double* a, std::size_t na, const double* b, std::size_t nb, int dim, int threads);

// The rows prepared, or (refusal not empty) why they cannot take the FP16 Gram path: a value that
// is not finite, or a centred row whose largest coordinate lies outside [2^-40, 2^40] (then 1/σ, N
// or D could leave float32's normal range, which the bound does not cover). Zero rows are fine.
GramRows make_gram_rows(const double* rows, std::size_t n, int dim, const std::vector<double>& centre, int threads);

// The rows reordered by increasing norm (ties by index), `order` saying where each came from: a
// tile's rows then have similar norms, so its bound (from its largest norm) is close to each of
// its pairs' own, and fewer pairs are left undecided when the norms spread widely.
void sort_by_norm(GramRows& rows);

// The FP16 bits of v rounded to nearest (ties to even), subnormals kept: one rounding from float64
// (a conversion through float32 would round twice).
std::uint16_t half_bits(double v);
double half_value(std::uint16_t bits);

}  // namespace twobody::cuda
