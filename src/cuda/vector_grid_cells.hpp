#pragma once
// The cells of the GPU's vector grid (vector_grid.hpp), one rule on the host (the choice's
// sample, tests) and the device (the index): m <= 6 of the d dimensions, each cut into cells of a
// width w_t >= eps, a row's cell along dimension t
//
//     c_t(x) = clamp(floor(fl(fl(x_t - o_t) / w_t)), 0, C_t - 1)      (float64, o_t <= every x_t)
//
// and its key the mixed-radix number sum_t c_t * stride_t (dimension 0 the most significant, so
// the keys sort the cells lexicographically). A pair can be in range only if its cells differ by
// at most 1 along every grid dimension, so the 3^m cells about a row's own hold all its partners.
//
// Why the float64 cells never drop a pair in range (key < hi, docs/exactness.md): the rule's key
// is a rounded sum of the non-negative terms fl(fl(a_k - b_k)^2), so it is at least each of them
// (rounding is monotone), and fl(d^2) < hi bounds |a_k - b_k| <= sqrt(hi)(1 + 4u) (u = 2^-53;
// below the normal range by 2^-510). D = fl(sqrt(hi))(1 + 2^-40) + 2^-500 is above both. For x
// within [o_t, o_t + E_t] (E_t the extent), fl(x - o_t) and the division each err by at most
// u times their value, so |q_a - q_b| <= (|a_t - b_t| + 4.01 u E_t) / w_t: with w_t >= D + 2^-48 E_t
// (= D + 32 u E_t, more than the rounding of w_t itself costs) that is at most 1, hence
// |floor(q_a) - floor(q_b)| <= 1; and clamping to [0, C_t - 1] is 1-Lipschitz, so it keeps that.
// Any wider cell keeps it too: widths beyond D only cost pruning (the cap on cells below).
#include <cstdint>

#if defined(__CUDACC__)
#define TWOBODY_VGRID_HD __host__ __device__
#else
#define TWOBODY_VGRID_HD
#endif

namespace twobody::cuda {

constexpr int kVectorGridMaxDims = 6;

struct VectorGridGeometry {
  int m = 0;                                // grid dimensions, 1..6
  int dims[kVectorGridMaxDims] = {};        // their stored-order indices, by decreasing variance
  double origin[kVectorGridMaxDims] = {};   // the least coordinate of both sets
  double width[kVectorGridMaxDims] = {};    // >= D + 2^-48 E_t
  std::int64_t cells[kVectorGridMaxDims] = {};      // C_t >= 1, their product <= 2^62
  std::uint64_t stride[kVectorGridMaxDims] = {};    // of the key
};

// c_t(x) as above. (For x >= o, q >= 0; q's conversion is guarded below 2^62.)
TWOBODY_VGRID_HD inline std::int64_t vector_grid_cell(double x, double origin, double width, std::int64_t cells) {
  const double q = (x - origin) / width;
  if (!(q > 0)) return 0;
  if (q >= 0x1p62) return cells - 1;
  const auto c = static_cast<std::int64_t>(q);  // truncation: floor for q >= 0
  return c < cells ? c : cells - 1;
}

// The cell key of a row (its coordinates in stored order).
TWOBODY_VGRID_HD inline std::uint64_t vector_grid_key(const VectorGridGeometry& g, const double* row) {
  std::uint64_t key = 0;
  for (int t = 0; t < g.m; ++t)
    key += static_cast<std::uint64_t>(vector_grid_cell(row[g.dims[t]], g.origin[t], g.width[t], g.cells[t])) * g.stride[t];
  return key;
}

}  // namespace twobody::cuda
