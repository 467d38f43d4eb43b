#pragma once
// The cells of a limited-range traversal, shared by the CPU and CUDA grid paths: cells at least
// r_max / refine wide, over the periodic box or the joint bounding box of both sets.
#include <algorithm>
#include <array>
#include <limits>
#include <cmath>
#include <cstdint>

#include "twobody/box.hpp"
#include "twobody/config.hpp"
#include "twobody/points.hpp"

namespace twobody {

// In a triclinic cell the cells are slabs of the fractional coordinates, each scaled by its face
// distance: u_i = f_i h_i (u = M x, M from the cell; u_c = z). The minimum image d* of a pair has
// |Δf_i| = |d*·r_i| ≤ |d*| / h_i (r_i the reciprocal vector, |r_i| = 1/h_i), so |Δu_i| ≤ |d*|:
// cells of u-width r_max / refine hold every pair within r_max in the usual ±refine cell offsets
// along each axis, however skewed the cell. Distances in u are not distances, so the CPU's
// per-anchor windows (which prune by distance to a cell's bounds) stay off there.
struct GridGeometry {
  int dim = 0;
  bool periodic = false;
  bool sheared = false;  // a triclinic cell: cells in u = M x
  int refine = 1;
  std::array<double, kMaxDim> origin{};
  std::array<double, kMaxDim> width{};
  std::array<std::int64_t, kMaxDim> cells{};
  std::int64_t total = 1;
  std::array<double, 9> to_cells{};  // M, row-major (sheared only)

  double grid_coordinate(const PointSet& p, std::size_t i, int d) const {
    if (!sheared) return p.coord(d)[i];
    const double* m = &to_cells[3 * d];
    return m[0] * p.coord(0)[i] + m[1] * p.coord(1)[i] + m[2] * p.coord(2)[i];
  }

  std::int64_t cell_of(const PointSet& p, std::size_t i) const {
    std::int64_t id = 0;
    for (int d = 0; d < dim; ++d) {
      auto c = static_cast<std::int64_t>(std::floor((grid_coordinate(p, i, d) - origin[d]) / width[d]));
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
// fill_cap: a capped grid starts from the width whose cells would just fill max_cells and coarsens
// in 2 % steps, so that it gets nearly max_cells cells; otherwise (the CUDA grid, tuned so) the
// width grows from r_max / refine in steps of 1.5, which leaves up to 3.4 times fewer in 3-D.
inline GridGeometry make_grid_geometry(const Frame& frame, double rmax, const Box* box, int refine,
                                       std::int64_t max_cells, bool fill_cap = false) {
  GridGeometry g;
  g.dim = frame.dim;
  g.periodic = box != nullptr;
  g.refine = refine;
  const double target = rmax * (1.0 + 1e-6) / refine;
  std::array<double, kMaxDim> extent{};
  if (box && box->triclinic()) {
    // u_c = z, u_b = h_b f_b, u_a = h_a f_a (the fractional coordinates of Box::cell_coordinates).
    const auto h = box->face_distances();
    const double ax = box->length[0], by = box->length[1], cz = box->length[2];
    g.sheared = true;
    g.to_cells = {h[0] / ax, -h[0] * box->xy / (ax * by), h[0] * (box->xy * box->yz / (by * cz) - box->xz / cz) / ax,
                  0.0,       h[1] / by,                   -h[1] * box->yz / (by * cz),
                  0.0,       0.0,                         1.0};
    for (int d = 0; d < 3; ++d) extent[d] = h[d];
  }
  for (int d = 0; d < g.dim; ++d) {
    if (box) {
      g.origin[d] = 0.0;
      if (!g.sheared) extent[d] = box->length[d];
    } else {
      g.origin[d] = frame.lo[d];
      extent[d] = frame.hi[d] - frame.lo[d];
    }
  }
  // Coarsen uniformly until the cell count fits. (A cutoff of eps = 0, the range [0, 2^-1074],
  // over a refine of 2 or 3 rounds the target to 0, which no factor coarsens: start at the least
  // normal width, still no narrower than the target.)
  double w = std::max(target, std::numeric_limits<double>::min());
  double step = 1.5;
  if (fill_cap) {
    double log_volume = 0;  // (in logarithms: extents of 1e300 would overflow the product)
    int spread = 0;
    for (int d = 0; d < g.dim; ++d)
      if (extent[d] > 0) {
        log_volume += std::log(extent[d]);
        ++spread;
      }
    if (spread > 0) w = std::max(w, std::exp((log_volume - std::log(static_cast<double>(max_cells))) / spread));
    step = 1.02;
  }
  for (;;) {
    g.total = 1;
    for (int d = 0; d < g.dim; ++d) {
      const double n = std::floor(extent[d] / w);
      g.cells[d] = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::min(n, 1e9)));
      g.total *= g.cells[d];
      if (g.total > max_cells) break;
    }
    if (g.total <= max_cells) break;
    w *= step;
  }
  for (int d = 0; d < g.dim; ++d)
    g.width[d] = extent[d] > 0 ? extent[d] / static_cast<double>(g.cells[d]) : 1.0;
  // Open space: the last cell is closed on the right (the maximum lands in it through the clamp).
  return g;
}

inline GridGeometry make_grid_geometry(const PointSet& a, const PointSet& b, double rmax, const Box* box,
                                       int refine, std::int64_t max_cells, bool fill_cap = false) {
  Frame f;
  f.dim = a.dim();
  if (!box) f = Frame::of(a, b);
  return make_grid_geometry(f, rmax, box, refine, max_cells, fill_cap);
}

}  // namespace twobody
