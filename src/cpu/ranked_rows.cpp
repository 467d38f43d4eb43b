#include "twobody/detail/cpu/ranked_rows.hpp"

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <vector>

namespace twobody::cpu {

VectorSet ranked_rows(const VectorSet& v, int threads) {
  const std::size_t n = v.size(), d = static_cast<std::size_t>(v.dim());
  std::vector<double> out(n * d);
  const std::ptrdiff_t rows = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel num_threads(std::max(1, threads))
  {
    std::vector<double> x(d);
    std::vector<std::size_t> order(d);
#pragma omp for schedule(static)
    for (std::ptrdiff_t ip = 0; ip < rows; ++ip) {
      const std::size_t i = static_cast<std::size_t>(ip);
      v.row_f64(i, x.data());
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::sort(order.begin(), order.end(), [&](std::size_t p, std::size_t q) { return x[p] < x[q] || (x[p] == x[q] && p < q); });
      for (std::size_t s = 0; s < d;) {
        std::size_t e = s + 1;
        while (e < d && x[order[e]] == x[order[s]]) ++e;
        const double rank = static_cast<double>(s + 1 + e) / 2;  // the mean of ranks s+1 … e
        for (std::size_t t = s; t < e; ++t) out[i * d + order[t]] = rank;
        s = e;
      }
    }
  }
  return VectorSet::from_rows(std::move(out), n, v.dim());
}

}  // namespace twobody::cpu
