#pragma once
// The rows a dot-like matrix kernel hands to a float64 GEMM (cuda/gemm_matrix.cu): each named
// kernel that is a dot product of prepared rows, with its per-row scale, prepared on the host by
// the float64 rule's own operations so that only the GEMM's summation order differs from the
// rule (exact/gemm_bounds.hpp gives what that costs, docs/exactness.md the argument).
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "twobody/result.hpp"
#include "twobody/vectors.hpp"

namespace twobody {

enum class GemmForm {
  Dot,              // dot(a, b)
  Cosine,           // 1 − dot(a, b) / (norm(a) · norm(b))
  Correlation,      // dot(a − mean(a), b − mean(b)) / (norm(a − mean(a)) · norm(b − mean(b)))
  Distance,         // sqrt(sum((a − b)²)), through q_i + q_j − 2 x_i·x_j about a common centre
  SquaredDistance,  // sum((a − b)²), the same
};

// The form of a named kernel (matrix_kernels(): dot, cosine, pearson, spearman, l2,
// sqeuclidean), or none.
std::optional<GemmForm> gemm_form(std::string_view kernel);
bool is_distance(GemmForm f);

struct GemmRows {
  std::size_t n = 0;
  int d = 0;
  // The GEMM's operand, row-major n × d: the rows (dot, cosine), each less its mean
  // (correlations), less the common centre (distances). (Not zero-filled: each thread of the
  // preparation first touches its own rows; a zero fill of 433 MB on one thread was half the
  // route's time for a 10^4 x 5,419 matrix.)
  MatrixValues rows;
  // Per row: the norm (cosine: of the row; correlations: of the centred row), the squared norm q
  // of the shifted row (distances); empty for dot.
  std::vector<double> scale;
  // Distances: the rows as given, for the entries the route settles by the rule: the set's own
  // float64 rows where they are contiguous (raw_view, no copy), else their float64 copy (raw).
  MatrixValues raw;
  const double* raw_view = nullptr;
  const double* raw_rows() const { return raw_view ? raw_view : raw.data(); }
  std::size_t raw_size() const { return raw_view || !raw.empty() ? n * static_cast<std::size_t>(d) : 0; }
};

// The common centre of the distances' rows: the column means of a (and b), in float64.
std::vector<double> gemm_centre(const VectorSet& a, const VectorSet* b, int threads);
// `centre` is read for the distances only.
GemmRows make_gemm_rows(const VectorSet& v, GemmForm f, const std::vector<double>& centre, int threads);

}  // namespace twobody
