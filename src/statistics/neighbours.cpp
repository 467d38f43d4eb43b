#include "twobody/statistics.hpp"

namespace twobody {

Result neighbour_counts(const PointSet& a, const PointSet* b, const Binning& range, const std::optional<Box>& box,
                        bool weighted, const RunOptions& opt) {
  Statistic s;
  s.traversal = b ? Traversal::Cross : Traversal::Auto;
  s.metric = box ? Metric::Periodic : Metric::Euclidean;
  if (box) s.box = *box;
  s.binning = range;
  s.output = OutputKind::PerPoint;
  s.weighted = weighted;
  return run(s, a, b, opt);
}

}  // namespace twobody
