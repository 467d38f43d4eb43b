#pragma once
// The rows of a Gram-tile join (cuda/gram_tiles.hpp) as the tensor cores read them, prepared on
// the host from the float64 rule rows (exact/gram_bounds.hpp names the arithmetic):
//   x' = fl64(x − c) about a common centre c (the column means of both sets, float64),
//   σ  = a power of two with max_k |σ x'_k| in [1/2, 1) (1 for a row equal to the centre),
//   h  = fp16(σ x') rounded to nearest, subnormals kept, zeros beyond d and beyond the last row,
//   N  = fl32(fl64(Σ_k x'_k²)) and n = norm_upper(fl64(Σ_k x'_k²), d).
// Rows may be reordered (sort_by_norm; `order` maps them back). Rows are padded to a multiple of kGramRowBlock and coordinates to a multiple of kGramChunk, so
// the kernel stages whole tiles without bounds checks; per block of kGramRowBlock rows the largest
// n and the smallest σ give the tile's error bound. Plain C++ (the CPU suite tests it): the
// reference of the joins' preparation on the GPU (gram_rows_device.hpp), which gives these rows
// bit for bit.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "twobody/detail/exact/gram_bounds.hpp"
#include "twobody/vectors.hpp"

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

// The centred rows' largest coordinate must lie in [kGramLeast, kGramMost] (or be 0), and their
// squared norm be finite: then 1/σ, N and D stay in float32's normal range, which the bound
// assumes. The host and the device preparation (gram_rows_device.hpp) test rows by this one rule.
constexpr double kGramLeast = 0x1p-40, kGramMost = 0x1p40;
TWOBODY_GRAM_HD inline bool gram_row_fits(double max_abs, double sum_sq) {
  return std::isfinite(sum_sq) && (max_abs == 0 || (max_abs >= kGramLeast && max_abs <= kGramMost));
}

// σ of a row whose centred coordinates reach max_abs: the power of two with max_abs·σ in [1/2, 1),
// σ = 2^-(e + 1) for max_abs in [2^e, 2^(e + 1)); 1 for a row equal to the centre.
TWOBODY_GRAM_HD inline double gram_row_scale(double max_abs) {
  const int e = max_abs > 0 ? std::ilogb(max_abs) : -1;
  return std::ldexp(1.0, -(e + 1));
}

// Why a row (float64, `dim` values) cannot take the path, in the refusal's words ("" if it can);
// `index` is its 0-based index in its set. And the same for the centre (a mean that is not finite).
std::string gram_row_refusal(const double* row, int dim, const std::vector<double>& centre, std::size_t index);
std::string gram_centre_refusal(const std::vector<double>& centre);

// The common centre of one or two sets of float64 rows (n x dim each, row-major): column means,
// each the sum of chunks of kGramCentreRows rows (A's, then B's), every chunk summed row by row
// and the chunks added in order: a fixed order, the same on any number of threads and on the device.
constexpr std::size_t kGramCentreRows = 4096;
std::vector<double> gram_centre(const double* a, std::size_t na, const double* b, std::size_t nb, int dim, int threads);

// The rows prepared, or (refusal not empty) why they cannot take the FP16 Gram path: a value that
// is not finite, or a centred row whose largest coordinate lies outside [2^-40, 2^40] (then 1/σ, N
// or D could leave float32's normal range, which the bound does not cover). Zero rows are fine.
GramRows make_gram_rows(const double* rows, std::size_t n, int dim, const std::vector<double>& centre, int threads);

// The cosine distance's rows (exact/gram_bounds.hpp: gram_cosine_bound): the rule's normalised
// rows (cpu::RuleRows) prepared about a zero centre (x' = x̂ exactly), every real row's N set to 1,
// so that the tiles' epilogue gives s̃ = 2·fl32(1 − D). The host reference of the device's cosine
// preparation (GramPreparation::cosine).
GramRows make_cosine_gram_rows(const double* unit_rows, std::size_t n, int dim, int threads);

// Throws the cosine rule's error for row `index` of `v` (a norm of 0 or not finite), in the words
// of the rule's own normalisation (cpu/vector_rows.hpp), its norm computed the rule's way.
[[noreturn]] void refuse_cosine_row(const VectorSet& v, std::size_t index, const std::string& which);

// The rows reordered by increasing norm (ties by index), `order` saying where each came from: a
// tile's rows then have similar norms, so its bound (from its largest norm) is close to each of
// its pairs' own, and fewer pairs are left undecided when the norms spread widely.
void sort_by_norm(GramRows& rows, int threads = 1);

// The FP16 bits of v rounded to nearest (ties to even), subnormals kept: one rounding from float64
// (a conversion through float32 would round twice). Inline and branch-free in the rounding: it
// runs once a coordinate of every row.
inline std::uint16_t half_bits(double v) {
  // On the bits: a float64 is sign, 11-bit exponent, 52-bit fraction. The FP16 result keeps 10
  // fraction bits of a normal value (exponent -14..15) or the multiples of 2^-24 below 2^-14;
  // the bits dropped decide the rounding, to nearest with ties to even, in one step.
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  const auto sign = static_cast<std::uint16_t>((b >> 48) & 0x8000);
  const int e = static_cast<int>((b >> 52) & 0x7ff) - 1023;  // unbiased (-1023: zero or subnormal)
  if (e > 15) return static_cast<std::uint16_t>(sign | 0x7c00);  // infinity (never for |σx'| < 1); NaN too
  if (e < -25) return sign;  // below half the smallest subnormal (2^-25), float64 subnormals included
  const std::uint64_t m = (b & ((std::uint64_t{1} << 52) - 1)) | (std::uint64_t{1} << 52);  // 53 bits
  // The result in units of the FP16 spacing at its exponent: 2^(e - 10) for a normal, 2^-24 below.
  const int shift = e >= -14 ? 42 : 28 - e;  // bits of m dropped
  std::uint64_t q = m >> shift;
  const std::uint64_t rest = m & ((std::uint64_t{1} << shift) - 1), half = std::uint64_t{1} << (shift - 1);
  q += static_cast<std::uint64_t>(rest > half) | (static_cast<std::uint64_t>(rest == half) & q & 1);
  // Normal: q in [1024, 2048], the exponent field e + 15 added to q's implicit bit (a carry to 2048
  // moves to the next binade, and past 15 to infinity, by the same addition). Subnormal: q units of
  // 2^-24, 1024 being the smallest normal's bits.
  const std::uint64_t bits = e >= -14 ? (static_cast<std::uint64_t>(e + 14) << 10) + q : q;
  return static_cast<std::uint16_t>(sign | (bits < 0x7c00 ? bits : 0x7c00));
}
double half_value(std::uint16_t bits);

}  // namespace twobody::cuda
