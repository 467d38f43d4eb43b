#pragma once
// The cell grid as kernels see it, and the one rule for which cells neighbour a cell, used both to
// weigh each cell's work and to traverse it, so the two always agree.
#include <cstdint>

#include "twobody/config.hpp"
#include "twobody/detail/engine/grid_geometry.hpp"

namespace twobody::cuda {

// `reach[d]`: how many cells along axis d a pair closer than r_max can be apart (cells at least
// r_max / reach[d] wide). `images`: every neighbour cell is met through one periodic image only
// (open space, or at least 2·reach + 1 cells along every periodic axis), so a run of partner
// cells can be moved next to the anchor cell by one shift per axis (NeighbourRun::image) and
// compared with plain differences.
struct GridShape {
  int dim = 0;
  int reach[kMaxDim] = {};
  bool periodic = false;
  bool images = false;
  int cells[kMaxDim] = {};
  double origin[kMaxDim] = {};
  double width[kMaxDim] = {};
  float length[kMaxDim] = {};  // periodic box sides, float32 (the image shifts)
  std::uint32_t total = 0;
};

inline GridShape grid_shape(const GridGeometry& g, const int* reach = nullptr) {
  GridShape s;
  s.dim = g.dim;
  s.periodic = g.periodic;
  s.images = true;
  for (int d = 0; d < g.dim; ++d) {
    s.reach[d] = reach ? reach[d] : g.refine;
    s.cells[d] = static_cast<int>(g.cells[d]);
    s.origin[d] = g.origin[d];
    s.width[d] = g.width[d];
    s.length[d] = static_cast<float>(g.width[d] * static_cast<double>(g.cells[d]));
    if (g.periodic && g.cells[d] < 2 * s.reach[d] + 1) s.images = false;
  }
  s.total = static_cast<std::uint32_t>(g.total);
  return s;
}

// One run of partner cells as the anchor cell sees it: the offset of its column along every axis
// but the last (unwrapped, -reach..reach), and the shift that brings its points next to the
// anchor cell (a multiple of the box side per axis; zero in open space). Meaningful when
// GridShape::images.
struct NeighbourRun {
  int offset[kMaxDim];
  float image[kMaxDim];
};

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

// Calls visit(lo, hi, run) for runs of consecutive cell ids (inclusive) that together hold every
// cell within reach[d] cells of cell c along every axis d, each exactly once (c included). Along
// an axis of a periodic box with at most 2·reach + 1 cells every cell is a neighbour (the offsets
// would wrap onto each other); along the last axis neighbours are consecutive ids, so they come
// as one run, or two where the offsets wrap.
template <class Visit>
__device__ inline void for_each_neighbour_run(const GridShape& g, std::uint32_t c, Visit&& visit) {
  const int last = g.dim - 1;
  int coord[kMaxDim];
  std::uint32_t rest = c;
  for (int d = last; d >= 0; --d) {
    coord[d] = static_cast<int>(rest % static_cast<std::uint32_t>(g.cells[d]));
    rest /= static_cast<std::uint32_t>(g.cells[d]);
  }
  int span[kMaxDim];
  int rows = 1;
  for (int d = 0; d < last; ++d) {
    span[d] = g.periodic && g.cells[d] < 2 * g.reach[d] + 1 ? g.cells[d] : 2 * g.reach[d] + 1;
    rows *= span[d];
  }
  NeighbourRun run;
  for (int d = 0; d < kMaxDim; ++d) {
    run.offset[d] = 0;
    run.image[d] = 0.f;
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
      const int R = g.reach[d];
      run.image[d] = 0.f;
      if (g.periodic && g.cells[d] < 2 * R + 1) {
        n = idx;
        run.offset[d] = n - coord[d];
      } else {
        n = coord[d] + idx - R;
        run.offset[d] = idx - R;
        if (g.periodic) {
          run.image[d] = n < 0 ? -g.length[d] : (n >= g.cells[d] ? g.length[d] : 0.f);
          n = n < 0 ? n + g.cells[d] : (n >= g.cells[d] ? n - g.cells[d] : n);
        } else if (n < 0 || n >= g.cells[d]) {
          inside = false;
        }
      }
      base += static_cast<std::uint32_t>(n) * scale;
      scale *= static_cast<std::uint32_t>(g.cells[d]);
    }
    if (!inside) continue;
    base *= static_cast<std::uint32_t>(nl);
    // Along the last axis one run, or two where the offsets wrap; gathered first so that `visit`
    // is expanded at one call site (the kernels inline it, and their code must stay small).
    const int R = g.reach[last];
    const float L = g.length[last];
    std::uint32_t lo[2], hi[2];
    float image[2] = {0.f, 0.f};
    int n = 1;
    if (g.periodic && nl < 2 * R + 1) {
      lo[0] = base;
      hi[0] = base + nl - 1;
    } else {
      const int a = cl - R, b = cl + R;
      if (!g.periodic) {
        lo[0] = base + max(a, 0);
        hi[0] = base + min(b, nl - 1);
      } else if (a < 0) {
        lo[0] = base;
        hi[0] = base + b;
        lo[1] = base + a + nl;
        hi[1] = base + nl - 1;
        image[1] = -L;
        n = 2;
      } else if (b >= nl) {
        lo[0] = base + a;
        hi[0] = base + nl - 1;
        lo[1] = base;
        hi[1] = base + b - nl;
        image[1] = L;
        n = 2;
      } else {
        lo[0] = base + a;
        hi[0] = base + b;
      }
    }
#pragma unroll 1
    for (int q = 0; q < n; ++q) {
      run.image[last] = image[q];
      visit(lo[q], hi[q], run);
    }
  }
}

}  // namespace twobody::cuda
