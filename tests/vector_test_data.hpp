#pragma once
// Fresh vector sets for the join and k-NN tests (CPU and CUDA).
#include <random>
#include <vector>

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

}  // namespace testing_support
