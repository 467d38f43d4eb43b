#include "twobody/statistics.hpp"

namespace twobody {

Statistic neighbour_statistic(bool cross, const Binning& range, const std::optional<Box>& box, bool weighted) {
  Statistic s;
  s.traversal = cross ? Traversal::Cross : Traversal::Auto;
  s.metric = box ? Metric::Periodic : Metric::Euclidean;
  if (box) s.box = *box;
  s.reduction = reduce::PerPoint{range};
  s.weighted = weighted;
  return s;
}

Result neighbour_counts(const PointSet& a, const PointSet* b, const Binning& range, const std::optional<Box>& box,
                        bool weighted, const RunOptions& opt) {
  return run(neighbour_statistic(b != nullptr, range, box, weighted), a, b, opt);
}

}  // namespace twobody
