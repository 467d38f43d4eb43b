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

Result distance_matrix(const PointSet& a, const PointSet* b, const std::optional<Box>& box, const RunOptions& opt) {
  return run(matrix_statistic(b != nullptr, box ? Metric::Periodic : Metric::Euclidean, box), a, b, opt);
}

Result angular_matrix(const PointSet& radec_a, const PointSet* radec_b, const RunOptions& opt) {
  const PointSet ua = sky_to_unit_vectors(radec_a);
  PointSet ub;
  if (radec_b) ub = sky_to_unit_vectors(*radec_b);
  return run(matrix_statistic(radec_b != nullptr, Metric::Angular, std::nullopt), ua, radec_b ? &ub : nullptr, opt);
}

}  // namespace twobody
