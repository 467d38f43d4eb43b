#pragma once
// Per-dimension least and greatest coordinate, sums for the variance, and whether every coordinate
// is finite, of one or two vector sets: one parallel pass. The EGO join (ego_index.hpp) and the
// GPU's vector grid (cuda/vector_grid_choice.hpp) take their cells' origins and extents from it
// and rank the dimensions by the variance. Per-thread partials are merged in thread order, so
// the same threads give the same bits.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "twobody/vectors.hpp"

namespace twobody::cpu {

struct DimStats {
  std::vector<double> lo, hi, sum, sum2;
  std::size_t n = 0;
  bool finite = true;

  explicit DimStats(int d) : lo(d, HUGE_VAL), hi(d, -HUGE_VAL), sum(d, 0.0), sum2(d, 0.0) {}
  void add(const VectorSet& v, int threads) {
    const int d = v.dim();
    const auto rows = static_cast<std::ptrdiff_t>(v.size());
    threads = std::max(1, threads);
    std::vector<DimStats> part(static_cast<std::size_t>(threads), DimStats(d));
    std::vector<char> bad(static_cast<std::size_t>(threads), 0);
#pragma omp parallel num_threads(threads)
    {
      std::vector<double> r(static_cast<std::size_t>(d));
      const std::size_t t = static_cast<std::size_t>(omp_get_thread_num());
      DimStats* mine = &part[t];
      char* mine_bad = &bad[t];
#pragma omp for schedule(static)
      for (std::ptrdiff_t i = 0; i < rows; ++i) {
        v.row_f64(static_cast<std::size_t>(i), r.data());
        for (int k = 0; k < d; ++k) {
          const double x = r[static_cast<std::size_t>(k)];
          if (!std::isfinite(x)) *mine_bad = 1;
          mine->lo[k] = std::min(mine->lo[k], x);
          mine->hi[k] = std::max(mine->hi[k], x);
          mine->sum[k] += x;
          mine->sum2[k] += x * x;
        }
      }
    }
    for (std::size_t t = 0; t < part.size(); ++t) {
      for (int k = 0; k < d; ++k) {
        lo[k] = std::min(lo[k], part[t].lo[k]);
        hi[k] = std::max(hi[k], part[t].hi[k]);
        sum[k] += part[t].sum[k];
        sum2[k] += part[t].sum2[k];
      }
      finite = finite && !bad[t];
    }
    n += v.size();
  }
  // The variance only ranks the dimensions: its rounding does not matter.
  double variance(int k) const {
    const double m = sum[k] / static_cast<double>(n);
    return sum2[k] / static_cast<double>(n) - m * m;
  }
};

}  // namespace twobody::cpu
