#include "twobody/statistics.hpp"

namespace twobody {

BinnedResult paircount(const PointSet& a, const PointSet* b, const Binning& bins,
                       const std::optional<Box>& box, bool weighted, const RunOptions& opt) {
  Statistic s;
  s.traversal = b ? Traversal::Cross : Traversal::Auto;
  s.metric = box ? Metric::Periodic : Metric::Euclidean;
  if (box) s.box = *box;
  s.reduction = reduce::Histogram{bins, 0, opt.mean_separation};
  s.weighted = weighted;
  BinnedResult out{bins, run(s, a, b, opt), {}};
  add_mean_separation_columns(out);
  return out;
}

}  // namespace twobody
