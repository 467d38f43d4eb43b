#pragma once
// Bin lookup in key space, shared by every backend.
#include <cmath>
#include <cstdint>
#include <vector>

#include "twobody/binning.hpp"
#include "twobody/config.hpp"

namespace twobody {

// Key edges padded with +inf to a power-of-two length, so the lookup is a fixed number of
// branch-free steps of a binary search (log2 of the padded length).
struct KeyEdges {
  std::vector<double> padded;  // size: power of two >= nbins + 1
  int nbins = 0;
  int steps = 0;  // log2(padded.size())

  // include_hi (a range [lo, hi], Statistic::includes_hi): the last edge becomes the next double
  // above key(hi), so that `key < edge` admits key(hi) itself.
  template <class PairFunction>
  static KeyEdges make(const Binning& b, const PairFunction& f, bool include_hi = false) {
    std::vector<double> keys;
    keys.reserve(b.edges().size());
    for (double e : b.edges()) keys.push_back(f.key_of(e));
    if (include_hi && !keys.empty()) keys.back() = std::nextafter(keys.back(), HUGE_VAL);
    return from_keys(std::move(keys));
  }
  static KeyEdges from_keys(std::vector<double> keys);  // must be strictly increasing
  double lo() const { return padded[0]; }
  double hi() const { return padded[nbins]; }
};

// Returns the bin k with e[k] <= key < e[k+1], or -1 when key is outside [e[0], e[nbins]).
// NaN keys are outside too, since every comparison with NaN is false.
TWOBODY_HD int find_bin(const double* e, int nbins, int steps, double key) {
  if (!(key >= e[0]) || !(key < e[nbins])) return -1;
  int k = 0;
  for (int s = steps - 1; s >= 0; --s) {
    const int probe = k + (1 << s);
    k = (e[probe] <= key) ? probe : k;
  }
  return k;
}

}  // namespace twobody
