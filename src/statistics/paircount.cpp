#include "twobody/statistics.hpp"

namespace twobody {

BinnedResult paircount(const PointSet& a, const PointSet* b, const Binning& bins,
                       const std::optional<Box>& box, bool weighted, const RunOptions& opt) {
  Statistic s;
  s.traversal = b ? Traversal::Cross : Traversal::Auto;
  s.metric = box ? Metric::Periodic : Metric::Euclidean;
  if (box) s.box = *box;
  s.binning = bins;
  s.output = OutputKind::Histogram;
  s.weighted = weighted;
  return {bins, run(s, a, b, opt), {}};
}

}  // namespace twobody
