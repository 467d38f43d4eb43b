#pragma once
// Fresh vector sets for the join and k-NN tests (CPU and CUDA).
#include <cmath>
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "twobody/joins.hpp"
#include "twobody/vectors.hpp"

namespace testing_support {

// n vectors of d coordinates, each offset + scale * a standard normal draw.
inline twobody::VectorSet gaussian_vectors(std::size_t n, int d, std::mt19937_64& rng, double offset = 0,
                                           double scale = 1) {
  std::normal_distribution<double> g(0.0, scale);
  std::vector<double> v(n * static_cast<std::size_t>(d));
  for (double& x : v) x = offset + g(rng);
  return twobody::VectorSet::from_rows(std::move(v), n, d);
}

// Coordinates in {0, 1, 2}: squared distances are small integers, so many pairs sit exactly at an
// integer eps^2, and many keys tie (the k-NN index order).
inline twobody::VectorSet lattice_vectors(std::size_t n, int d, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> u(0, 2);
  std::vector<double> v(n * static_cast<std::size_t>(d));
  for (double& x : v) x = u(rng);
  return twobody::VectorSet::from_rows(std::move(v), n, d);
}

// The seed's exponential set (chapters 3-4): each coordinate exponential of rate 40, truncated to
// [0, 1] by drawing again; dense near the origin, sparse far out.
inline twobody::VectorSet exponential_vectors(std::size_t n, int d, std::mt19937_64& rng) {
  std::exponential_distribution<double> e(40.0);
  std::vector<double> v(n * static_cast<std::size_t>(d));
  for (double& x : v)
    do x = e(rng);
    while (x > 1);
  return twobody::VectorSet::from_rows(std::move(v), n, d);
}

// Clusters of different spreads about random centres: many close pairs, near-duplicates and far ones.
inline twobody::VectorSet gaussian_mixture(std::size_t n, int d, std::mt19937_64& rng) {
  std::normal_distribution<double> g;
  std::vector<std::vector<double>> centres(7, std::vector<double>(static_cast<std::size_t>(d)));
  for (auto& c : centres)
    for (double& x : c) x = 4 * g(rng);
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t c = rng() % centres.size();
    const double spread = std::pow(10.0, -static_cast<double>(c % 4));
    for (int k = 0; k < d; ++k) v.push_back(centres[c][static_cast<std::size_t>(k)] + spread * g(rng));
  }
  return twobody::VectorSet::from_rows(std::move(v), n, d);
}

// eps with about `fraction` of the pairs within it, from the CPU's own distances (of the first
// `max_rows` vectors at most).
inline double eps_for(const twobody::VectorSet& v, twobody::Metric m, double fraction,
                      std::size_t max_rows = SIZE_MAX) {
  twobody::JoinOptions o;
  o.metric = m;
  o.eps = m == twobody::Metric::Cosine ? 2.0 : 1e150;
  twobody::RunOptions cpu;
  cpu.backend = "cpu";
  std::vector<double> d;
  for (const twobody::PairRecord& p : twobody::similarity_join(v.size() > max_rows ? v.slice(0, max_rows) : v, nullptr, o, cpu).pairs)
    d.push_back(p.value);
  std::sort(d.begin(), d.end());
  return d[static_cast<std::size_t>(fraction * static_cast<double>(d.size() - 1))];
}

}  // namespace testing_support
