#pragma once
// The matrix kernels' float64 rule (docs/exactness.md, "Matrices of vectors"), written apart from
// the engine as plain loops from the kernels' definitions: what every entry of vector_matrix must
// equal, bit for bit. Rows are float64 (the exact promotion of the stored values); sums run
// k = 0 … d−1 in stored order from +0, means are sum/d, norms sqrt(sum x·x), no FMA (the tests are
// compiled with -ffp-contract=off).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "twobody/extend/portable_math.hpp"

namespace oracle {

using Row = std::vector<double>;

inline double sum_of(const Row& x) {
  double s = 0;
  for (double v : x) s += v;
  return s;
}

inline Row centred(const Row& x) {
  const double mean = sum_of(x) / static_cast<double>(x.size());
  Row c(x.size());
  for (std::size_t k = 0; k < x.size(); ++k) c[k] = x[k] - mean;
  return c;
}

inline double dot_of(const Row& x, const Row& y) {
  double s = 0;
  for (std::size_t k = 0; k < x.size(); ++k) s += x[k] * y[k];
  return s;
}

inline double norm_of(const Row& x) { return std::sqrt(dot_of(x, x)); }

// scipy.stats.rankdata(x, method="average"): 1-based ranks, ties given the mean of their ranks.
inline Row ranks_of(const Row& x) {
  const std::size_t d = x.size();
  Row r(d);
  for (std::size_t k = 0; k < d; ++k) {
    std::size_t below = 0, equal = 0;
    for (std::size_t m = 0; m < d; ++m) below += x[m] < x[k], equal += x[m] == x[k];
    r[k] = static_cast<double>(below) + static_cast<double>(equal + 1) / 2;
  }
  return r;
}

inline double pearson_of(const Row& x, const Row& y) {
  const Row cx = centred(x), cy = centred(y);
  return dot_of(cx, cy) / (norm_of(cx) * norm_of(cy));
}

// The named kernel `name` (p: lp's order) of rows x and y.
inline double kernel(const std::string& name, const Row& x, const Row& y, double p = 2) {
  const std::size_t d = x.size();
  double s = 0;
  if (name == "l2" || name == "sqeuclidean") {
    for (std::size_t k = 0; k < d; ++k) s += (x[k] - y[k]) * (x[k] - y[k]);
    return name == "l2" ? std::sqrt(s) : s;
  }
  if (name == "l1") {
    for (std::size_t k = 0; k < d; ++k) s += std::fabs(x[k] - y[k]);
    return s;
  }
  if (name == "chebyshev") {
    for (std::size_t k = 0; k < d; ++k) s = std::max(s, std::fabs(x[k] - y[k]));
    return s;
  }
  if (name == "lp") {
    for (std::size_t k = 0; k < d; ++k) s += twobody::portable::pow(std::fabs(x[k] - y[k]), p);
    return twobody::portable::pow(s, 1 / p);
  }
  if (name == "cosine") return 1 - dot_of(x, y) / (norm_of(x) * norm_of(y));
  if (name == "dot") return dot_of(x, y);
  if (name == "pearson") return pearson_of(x, y);
  if (name == "spearman") return pearson_of(ranks_of(x), ranks_of(y));
  return std::nan("");
}

}  // namespace oracle
