#pragma once
// The cell grid as kernels see it, and the one rule for which cells neighbour a cell, used both to
// weigh each cell's work and to traverse it, so the two always agree.
#include <cstdint>

#include "twobody/config.hpp"
#include "twobody/grid_geometry.hpp"

namespace twobody::cuda {

struct GridShape {
  int dim = 0;
  int refine = 1;
  bool periodic = false;
  int cells[kMaxDim] = {};
  double origin[kMaxDim] = {};
  double width[kMaxDim] = {};
  std::uint32_t total = 0;
};

inline GridShape grid_shape(const GridGeometry& g) {
  GridShape s;
  s.dim = g.dim;
  s.refine = g.refine;
  s.periodic = g.periodic;
  for (int d = 0; d < g.dim; ++d) {
    s.cells[d] = static_cast<int>(g.cells[d]);
    s.origin[d] = g.origin[d];
    s.width[d] = g.width[d];
  }
  s.total = static_cast<std::uint32_t>(g.total);
  return s;
}

// Same rule as GridGeometry::cell_of.
__device__ inline std::uint32_t cell_of(const GridShape& g, const double* const* x, std::uint32_t i) {
  std::uint32_t id = 0;
  for (int d = 0; d < g.dim; ++d) {
    long long c = static_cast<long long>(floor((x[d][i] - g.origin[d]) / g.width[d]));
    c = c < 0 ? 0 : (c >= g.cells[d] ? g.cells[d] - 1 : c);
    id = id * static_cast<std::uint32_t>(g.cells[d]) + static_cast<std::uint32_t>(c);
  }
  return id;
}

// Calls visit(lo, hi) for runs of consecutive cell ids (inclusive) that together hold every cell
// within `refine` cells of cell c along every axis, each exactly once (c included). Along an axis
// of a periodic box with at most 2·refine + 1 cells every cell is a neighbour (the offsets would
// wrap onto each other); along the last axis neighbours are consecutive ids, so they come as one
// run, or two where the offsets wrap.
template <class Visit>
__device__ inline void for_each_neighbour_run(const GridShape& g, std::uint32_t c, Visit&& visit) {
  const int R = g.refine, last = g.dim - 1;
  int coord[kMaxDim];
  std::uint32_t rest = c;
  for (int d = last; d >= 0; --d) {
    coord[d] = static_cast<int>(rest % static_cast<std::uint32_t>(g.cells[d]));
    rest /= static_cast<std::uint32_t>(g.cells[d]);
  }
  int span[kMaxDim];
  int rows = 1;
  for (int d = 0; d < last; ++d) {
    span[d] = g.periodic && g.cells[d] <= 2 * R + 1 ? g.cells[d] : 2 * R + 1;
    rows *= span[d];
  }
  const int nl = g.cells[last], cl = coord[last];
  for (int r = 0; r < rows; ++r) {
    int k = r;
    std::uint32_t base = 0, scale = 1;
    bool inside = true;
    for (int d = last - 1; d >= 0; --d) {
      const int idx = k % span[d];
      k /= span[d];
      int n;
      if (g.periodic && g.cells[d] <= 2 * R + 1) {
        n = idx;
      } else {
        n = coord[d] + idx - R;
        if (g.periodic) n = n < 0 ? n + g.cells[d] : (n >= g.cells[d] ? n - g.cells[d] : n);
        else if (n < 0 || n >= g.cells[d]) inside = false;
      }
      base += static_cast<std::uint32_t>(n) * scale;
      scale *= static_cast<std::uint32_t>(g.cells[d]);
    }
    if (!inside) continue;
    base *= static_cast<std::uint32_t>(nl);
    if (g.periodic && nl <= 2 * R + 1) {
      visit(base, base + nl - 1);
    } else {
      int lo = cl - R, hi = cl + R;
      if (!g.periodic) {
        visit(base + max(lo, 0), base + min(hi, nl - 1));
      } else if (lo < 0) {
        visit(base, base + hi);
        visit(base + lo + nl, base + nl - 1);
      } else if (hi >= nl) {
        visit(base + lo, base + nl - 1);
        visit(base, base + hi - nl);
      } else {
        visit(base + lo, base + hi);
      }
    }
  }
}

}  // namespace twobody::cuda
