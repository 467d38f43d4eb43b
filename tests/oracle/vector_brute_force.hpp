#pragma once
// The float64 rule for vectors (docs/exactness.md), written apart from the engine: what every
// join and k-NN must equal, pair for pair. Rows are given as float64 (the exact promotion of the
// stored values).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace oracle {

struct Rows {
  std::vector<double> v;  // n x d, row-major
  std::size_t n = 0;
  int d = 0;
  const double* row(std::size_t i) const { return v.data() + i * static_cast<std::size_t>(d); }
};

// Rows divided by their norm sqrt(sum_k x_k^2) (sum in order): the cosine rule's rows.
inline Rows normalised(const Rows& r) {
  Rows out = r;
  for (std::size_t i = 0; i < r.n; ++i) {
    double s = 0;
    for (int k = 0; k < r.d; ++k) s += r.row(i)[k] * r.row(i)[k];
    const double norm = std::sqrt(s);
    for (int k = 0; k < r.d; ++k) out.v[i * static_cast<std::size_t>(r.d) + static_cast<std::size_t>(k)] /= norm;
  }
  return out;
}

// The key of a pair: sum_k (a_k - b_k)^2 in order, or (cosine, normalised rows) 1 - sum_k a_k b_k.
inline double key(const double* a, const double* b, int d, bool cosine) {
  double s = 0;
  if (cosine) {
    for (int k = 0; k < d; ++k) s += a[k] * b[k];
    return 1.0 - s;
  }
  for (int k = 0; k < d; ++k) {
    const double t = a[k] - b[k];
    s += t * t;
  }
  return s;
}

struct Pair {
  std::uint64_t i, j;
  double key;
};

// Every pair with key <= limit: auto (b null) i < j, cross every (i, j); sorted by (i, j).
inline std::vector<Pair> join(const Rows& a, const Rows* b, double limit, bool cosine) {
  const Rows A = cosine ? normalised(a) : a;
  const Rows B = b ? (cosine ? normalised(*b) : *b) : A;
  std::vector<Pair> out;
  for (std::size_t i = 0; i < A.n; ++i)
    for (std::size_t j = b ? 0 : i + 1; j < B.n; ++j) {
      const double k = key(A.row(i), B.row(j), A.d, cosine);
      if (k <= limit) out.push_back({i, j, k});
    }
  return out;
}

// The k smallest (key, j) of every query: against b, or (b null) the other rows of a.
inline std::vector<std::vector<std::pair<double, std::uint64_t>>> knn(const Rows& a, const Rows* b, int k, bool cosine) {
  const Rows A = cosine ? normalised(a) : a;
  const Rows B = b ? (cosine ? normalised(*b) : *b) : A;
  std::vector<std::vector<std::pair<double, std::uint64_t>>> out(A.n);
  for (std::size_t i = 0; i < A.n; ++i) {
    std::vector<std::pair<double, std::uint64_t>> all;
    for (std::size_t j = 0; j < B.n; ++j)
      if (b || j != i) all.emplace_back(key(A.row(i), B.row(j), A.d, cosine), j);
    std::sort(all.begin(), all.end());
    all.resize(static_cast<std::size_t>(k));
    out[i] = std::move(all);
  }
  return out;
}

}  // namespace oracle
