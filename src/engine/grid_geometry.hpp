#pragma once
// The cells of a limited-range traversal, shared by the CPU and CUDA grid paths: cells at least
// r_max / refine wide, over the periodic box or the joint bounding box of both sets.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "twobody/box.hpp"
#include "twobody/config.hpp"
#include "twobody/points.hpp"

namespace twobody {

struct GridGeometry {
  int dim = 0;
  bool periodic = false;
  int refine = 1;
  std::array<double, kMaxDim> origin{};
  std::array<double, kMaxDim> width{};
  std::array<std::int64_t, kMaxDim> cells{};
  std::int64_t total = 1;

  std::int64_t cell_of(const PointSet& p, std::size_t i) const {
    std::int64_t id = 0;
    for (int d = 0; d < dim; ++d) {
      auto c = static_cast<std::int64_t>(std::floor((p.coord(d)[i] - origin[d]) / width[d]));
      c = std::clamp<std::int64_t>(c, 0, cells[d] - 1);
      id = id * cells[d] + c;
    }
    return id;
  }
};

// Cells of at least rmax/refine (with a 1e-6 relative margin, so that rounding in the cell index
// never separates a pair closer than rmax by more than `refine` cells), at most about
// max_cells in all. Open space spans the frame (every point of the run inside it: a point
// outside would still be clamped into an edge cell, but kernels that prune by cell bounds would
// miss its pairs); the PointSet form takes the joint bounding box of both sets.
inline GridGeometry make_grid_geometry(const Frame& frame, double rmax, const Box* box, int refine,
                                       std::int64_t max_cells) {
  GridGeometry g;
  g.dim = frame.dim;
  g.periodic = box != nullptr;
  g.refine = refine;
  const double target = rmax * (1.0 + 1e-6) / refine;
  std::array<double, kMaxDim> extent{};
  for (int d = 0; d < g.dim; ++d) {
    if (box) {
      g.origin[d] = 0.0;
      extent[d] = box->length[d];
    } else {
      g.origin[d] = frame.lo[d];
      extent[d] = frame.hi[d] - frame.lo[d];
    }
  }
  // Coarsen uniformly until the cell count fits.
  double w = target;
  for (;;) {
    g.total = 1;
    for (int d = 0; d < g.dim; ++d) {
      const double n = std::floor(extent[d] / w);
      g.cells[d] = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::min(n, 1e9)));
      g.total *= g.cells[d];
      if (g.total > max_cells) break;
    }
    if (g.total <= max_cells) break;
    w *= 1.5;
  }
  for (int d = 0; d < g.dim; ++d)
    g.width[d] = extent[d] > 0 ? extent[d] / static_cast<double>(g.cells[d]) : 1.0;
  // Open space: the last cell is closed on the right (the maximum lands in it through the clamp).
  return g;
}

inline GridGeometry make_grid_geometry(const PointSet& a, const PointSet& b, double rmax, const Box* box,
                                       int refine, std::int64_t max_cells) {
  Frame f;
  f.dim = a.dim();
  if (!box) f = Frame::of(a, b);
  return make_grid_geometry(f, rmax, box, refine, max_cells);
}

}  // namespace twobody
