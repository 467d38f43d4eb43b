#pragma once
// The neighbour runs of a chunk of the vector grid (vector_grid_index.cuh), host and device: the
// device lists its units with it, and the CPU tests replay the same listing against the float64
// rule (tests/vector_grid_choice_test.cpp: every pair in range met exactly once).
#include <cstddef>
#include <cstdint>

#include "twobody/detail/cuda/vector_grid_cells.hpp"

namespace twobody::cuda {

constexpr std::uint32_t kVectorGridChunkRows = 32;  // a warp's lanes

// Both sets' sorted cell keys (the one set's twice for a self-join).
struct VectorGridKeys {
  const std::uint64_t* a = nullptr;
  std::size_t na = 0;
  const std::uint64_t* b = nullptr;
  std::size_t nb = 0;
  bool self = true;
};

// The first position in [lo, hi) whose key is >= v (hi when none).
TWOBODY_VGRID_HD inline std::size_t vector_grid_lower_bound(const std::uint64_t* keys, std::size_t lo, std::size_t hi,
                                                            std::uint64_t v) {
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (keys[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The first position in [lo, hi) whose key is > v.
TWOBODY_VGRID_HD inline std::size_t vector_grid_upper_bound(const std::uint64_t* keys, std::size_t lo, std::size_t hi,
                                                            std::uint64_t v) {
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (keys[mid] <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Whether position p of the first set starts a chunk: every 32nd row of a cell from its first.
TWOBODY_VGRID_HD inline bool vector_grid_chunk_start(const std::uint64_t* keys, std::size_t p) {
  return (p - vector_grid_lower_bound(keys, 0, p, keys[p])) % kVectorGridChunkRows == 0;
}

// The rows of the chunk starting at q0: up to 32, within its cell.
TWOBODY_VGRID_HD inline std::uint32_t vector_grid_chunk_rows(const VectorGridKeys& k, std::uint32_t q0) {
  const std::size_t end = vector_grid_upper_bound(k.a, q0, k.na, k.a[q0]);
  const std::size_t n = end - q0;
  return static_cast<std::uint32_t>(n < kVectorGridChunkRows ? n : kVectorGridChunkRows);
}

// Calls visit(p0, p1, triangle) for each non-empty neighbour run of the chunk at q0: partners
// [p0, p1) of the second set's order; triangle: the self-join's own run, partners j > i only.
// The offsets of dimensions 0 .. m - 2 are the base-3 digits of a code (dimension 0 the most
// significant); the last dimension's cells [c - 1, c + 1] are consecutive keys, one range.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <class Visit>
TWOBODY_VGRID_HD void vector_grid_runs(const VectorGridGeometry& g, const VectorGridKeys& k, std::uint32_t q0,
                                       Visit&& visit) {
  const std::uint64_t key = k.a[q0];
  const int last = g.m - 1;
  std::int64_t c[kVectorGridMaxDims] = {};
  for (int t = 0; t < g.m; ++t) c[t] = static_cast<std::int64_t>((key / g.stride[t]) % static_cast<std::uint64_t>(g.cells[t]));
  int runs = 1;
  for (int t = 0; t < last; ++t) runs *= 3;
  for (int code = 0; code < runs; ++code) {
    std::uint64_t prefix = 0;
    bool inside = true;
    int first_nonzero = 0;  // the offset of the smallest t with a non-zero one (0: none)
    int rest = code;
    for (int t = last - 1; t >= 0; --t) {
      const int o = rest % 3 - 1;
      rest /= 3;
      if (o != 0) first_nonzero = o;
      const std::int64_t ct = c[t] + o;
      inside = inside && ct >= 0 && ct < g.cells[t];
      prefix += static_cast<std::uint64_t>(ct) * g.stride[t];  // (unused when outside)
    }
    if (!inside) continue;
    // A self-join's half shell: offsets whose first non-zero is +1 (larger keys), and the zero
    // offset's run from the own cell on (LID-UNICOMP).
    if (k.self && first_nonzero < 0) continue;
    const bool own = k.self && first_nonzero == 0;
    const std::int64_t lo = own ? c[last] : (c[last] > 0 ? c[last] - 1 : 0);
    const std::int64_t hi = c[last] + 1 < g.cells[last] ? c[last] + 1 : g.cells[last] - 1;
    std::size_t p0 = vector_grid_lower_bound(k.b, 0, k.nb, prefix + static_cast<std::uint64_t>(lo));
    const std::size_t p1 = vector_grid_upper_bound(k.b, p0, k.nb, prefix + static_cast<std::uint64_t>(hi));
    if (own) p0 = q0 + 1;  // (the own cell starts at or before q0 and p1 is past its end)
    if (p0 < p1) visit(static_cast<std::uint32_t>(p0), static_cast<std::uint32_t>(p1), own);
  }
}

// Pairs a chunk of qn rows at q0 computes against the run [p0, p1): on a triangle, query q0 + s
// meets the p1 - (q0 + s + 1) partners after it.
TWOBODY_VGRID_HD inline unsigned long long vector_grid_run_pairs(std::uint32_t q0, std::uint32_t qn, std::uint32_t p0,
                                                                 std::uint32_t p1, bool triangle) {
  const unsigned long long n = qn;
  return triangle ? n * p1 - n * q0 - n * (n + 1) / 2 : n * (p1 - p0);
}

}  // namespace twobody::cuda
