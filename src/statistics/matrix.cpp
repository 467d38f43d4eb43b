#include <algorithm>
#include <cmath>

#include "twobody/error.hpp"
#include "twobody/statistics.hpp"

namespace twobody {

Statistic matrix_statistic(bool cross, Metric metric, const std::optional<Box>& box) {
  Statistic s;
  s.traversal = cross ? Traversal::Cross : Traversal::Auto;
  s.metric = metric;
  if (box) s.box = *box;
  s.reduction = reduce::Matrix{};
  return s;
}

namespace {

// A distance is the square root of its float64 square: two points farther apart than ~1.3e154
// would show infinity where their distance is finite. Refused when the sets' joint bounding box
// allows such a pair (a box's minimum image is never longer than half its diagonal).
void refuse_overflowing_distances(const PointSet& a, const PointSet* b, const std::optional<Box>& box) {
  if (box) return;
  double diag2 = 0;
  for (int d = 0; d < a.dim(); ++d) {
    auto [lo, hi] = std::minmax_element(a.coord(d).begin(), a.coord(d).end());
    double l = a.size() ? *lo : 0.0, h = a.size() ? *hi : 0.0;
    if (b && b->size()) {
      const auto [blo, bhi] = std::minmax_element(b->coord(d).begin(), b->coord(d).end());
      l = a.size() ? std::min(l, *blo) : *blo;
      h = a.size() ? std::max(h, *bhi) : *bhi;
    }
    diag2 += (h - l) * (h - l);
  }
  if (!std::isfinite(diag2))
    throw_input("the points span more than float64 can square (a bounding-box diagonal beyond 1.3e154): "
                "their distances would overflow; rescale the data");
}

}  // namespace

Result distance_matrix(const PointSet& a, const PointSet* b, const std::optional<Box>& box, const RunOptions& opt) {
  if (b && b->dim() == a.dim()) refuse_overflowing_distances(a, b, box);
  else if (!b) refuse_overflowing_distances(a, nullptr, box);
  return run(matrix_statistic(b != nullptr, box ? Metric::Periodic : Metric::Euclidean, box), a, b, opt);
}

Result angular_matrix(const PointSet& radec_a, const PointSet* radec_b, const RunOptions& opt) {
  const PointSet ua = sky_to_unit_vectors(radec_a);
  PointSet ub;
  if (radec_b) ub = sky_to_unit_vectors(*radec_b);
  return run(matrix_statistic(radec_b != nullptr, Metric::Angular, std::nullopt), ua, radec_b ? &ub : nullptr, opt);
}

}  // namespace twobody
