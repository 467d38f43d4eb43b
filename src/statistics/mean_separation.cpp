#include <limits>

#include "twobody/statistics.hpp"

namespace twobody {

void add_mean_separation_columns(BinnedResult& r) {
  const Result& x = r.raw;
  if (x.separation_sum.empty()) return;
  const bool weighted = !x.weighted.empty();
  std::vector<double> mean(x.counts.size()), mean_log(x.counts.size());
  for (std::size_t k = 0; k < x.counts.size(); ++k) {
    const double n = weighted ? x.weighted[k] : static_cast<double>(x.counts[k]);
    const bool empty = x.counts[k] == 0 || n == 0;
    mean[k] = empty ? std::numeric_limits<double>::quiet_NaN() : x.separation_sum[k] / n;
    mean_log[k] = empty ? std::numeric_limits<double>::quiet_NaN() : x.log_separation_sum[k] / n;
  }
  r.derived.push_back({"ravg", std::move(mean)});
  r.derived.push_back({"meanlogr", std::move(mean_log)});
}

}  // namespace twobody
