#pragma once
// The float64 brute force of a triclinic cell (rows a = (ax, 0, 0), b = (bx, by, 0), c = (cx, cy,
// cz)), written apart from the engine: every pair's squared separation is the least over all 125
// images n in [-2, 2]^3 (points in the cell differ by less than one cell vector, so the shortest
// image is among them) of
//     x = ((dx - nc cx) - nb bx) - na ax,  y = (dy - nc cy) - nb by,  z = dz - nc cz,  x² + y² + z²
// in that order, the formula docs/molecular-dynamics.md defines as the float64 answer. It finds
// no image by rounding and keeps no candidate set: it tries them all.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "oracle/brute_force.hpp"

namespace oracle {

struct Cell {
  double ax, bx, by, cx, cy, cz;
};

inline double d2_image(const Cell& c, double dx, double dy, double dz, int na, int nb, int nc) {
  const double z = dz - nc * c.cz;
  const double y = (dy - nc * c.cy) - nb * c.by;
  const double x = ((dx - nc * c.cx) - nb * c.bx) - na * c.ax;
  double s = 0;
  s += x * x;
  s += y * y;
  s += z * z;
  return s;
}

inline double d2_triclinic(const Cell& c, const std::vector<double>& a, const std::vector<double>& b) {
  const double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
  double best = d2_image(c, dx, dy, dz, 0, 0, 0);
  for (int na = -2; na <= 2; ++na)
    for (int nb = -2; nb <= 2; ++nb)
      for (int nc = -2; nc <= 2; ++nc) best = std::min(best, d2_image(c, dx, dy, dz, na, nb, nc));
  return best;
}

// Histogram, per-point counts and pairs of one range [edges.front(), edges.back()) in the cell.
struct TriclinicCounts {
  std::vector<std::uint64_t> counts;              // per bin
  std::vector<std::uint64_t> point_a, point_b;    // partners in range per point (b: cross only)
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs;  // (i, j) in range, sorted
  std::vector<double> pair_d2;
};

inline TriclinicCounts triclinic_counts(const Cell& c, const Points& a, const Points* b, const std::vector<double>& edges) {
  TriclinicCounts t;
  t.counts.assign(edges.size() - 1, 0);
  const Points& B = b ? *b : a;
  t.point_a.assign(a.x.size(), 0);
  if (b) t.point_b.assign(B.x.size(), 0);
  for (std::size_t i = 0; i < a.x.size(); ++i)
    for (std::size_t j = b ? 0 : i + 1; j < B.x.size(); ++j) {
      const double d2 = d2_triclinic(c, a.x[i], B.x[j]);
      const int k = bin_of_d2(d2, edges);
      if (k < 0) continue;
      ++t.counts[k];
      ++t.point_a[i];
      ++(b ? t.point_b[j] : t.point_a[j]);
      t.pairs.push_back({i, j});
      t.pair_d2.push_back(d2);
    }
  return t;
}

}  // namespace oracle
