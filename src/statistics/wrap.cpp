#include <array>
#include <cmath>

#include <fmt/format.h>

#include "twobody/error.hpp"
#include "twobody/statistics.hpp"

namespace twobody {

namespace {

bool in_cell(const std::array<double, 3>& f) {
  return f[0] >= 0.0 && f[0] < 1.0 && f[1] >= 0.0 && f[1] < 1.0 && f[2] >= 0.0 && f[2] < 1.0;
}

// Into a triclinic cell: whole cell vectors subtracted (c, then b, then a, as the fractional
// coordinates floor), until the fractional coordinates are in [0, 1) as the planner tests them.
// A point within rounding of a face may land a hair outside again (-tiny becomes 1 after the shift):
// that coordinate is put on the face (0, its image) and the point rebuilt from its fractional
// coordinates.
void wrap_into_cell(PointSet& p, const Box& box) {
  auto X = p.coord(0), Y = p.coord(1), Z = p.coord(2);
  const double ax = box.length[0], by = box.length[1], cz = box.length[2];
  for (std::size_t i = 0; i < X.size(); ++i) {
    double &x = X[i], &y = Y[i], &z = Z[i];
    auto f = box.cell_coordinates(x, y, z);
    for (int pass = 0; pass < 2 && !in_cell(f); ++pass) {
      if (!(std::isfinite(f[0]) && std::isfinite(f[1]) && std::isfinite(f[2])))
        throw_input(fmt::format("point {} ({}, {}, {}) cannot be wrapped into the cell: not finite", i + 1, x, y, z));
      const double na = std::floor(f[0]), nb = std::floor(f[1]), nc = std::floor(f[2]);
      z -= nc * cz;
      y -= nc * box.yz + nb * by;
      x -= nc * box.xz + nb * box.xy + na * ax;
      f = box.cell_coordinates(x, y, z);
    }
    for (int pass = 0; pass < 4 && !in_cell(f); ++pass) {
      for (double& s : f)
        if (!(s >= 0.0 && s < 1.0)) s = 0.0;
      z = f[2] * cz;
      y = f[1] * by + f[2] * box.yz;
      x = f[0] * ax + f[1] * box.xy + f[2] * box.xz;
      f = box.cell_coordinates(x, y, z);
    }
    if (!in_cell(f))
      throw Error(ErrorKind::Internal, fmt::format("wrap_into_box: point {} ({}, {}, {}) stays outside the cell {}", i + 1,
                                                   x, y, z, box.describe()));
  }
}

}  // namespace

void wrap_into_box(PointSet& p, const Box& box) {
  if (box.triclinic()) {
    if (p.dim() != 3) throw_config(fmt::format("a triclinic cell takes 3-D points, not {}-D", p.dim()));
    return wrap_into_cell(p, box);
  }
  for (int d = 0; d < p.dim(); ++d) {
    const double L = box.length[d];
    for (double& x : p.coord(d)) {
      if (x >= 0.0 && x < L) continue;
      x -= L * std::floor(x / L);
      if (x >= L || x < 0.0) x = 0.0;  // -tiny wraps to L in rounding; L is the image of 0
    }
  }
}

}  // namespace twobody
