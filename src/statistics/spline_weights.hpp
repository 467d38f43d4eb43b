#pragma once
// The B-spline weights of the mutual-information estimator (twobody/mutual_information.hpp): the
// k non-zero B-splines of order k at z on the clamped uniform knot vector of M bins, by de Boor's
// triangular scheme (Piegl and Tiller's BasisFuns) — the Cox–de Boor recursion without the zero
// terms. z = M − k + 1 (the sample at its row's maximum) takes the last span, so its weights
// are those of the limit from below and still sum to 1.
#include <cmath>
#include <cstdint>

#include "twobody/config.hpp"

namespace twobody::spline {

inline constexpr int kMaxOrder = 8;

// The knot t_i of the clamped uniform vector: 0 for i < k, i − k + 1 up to M − 1, M − k + 1 after.
TWOBODY_HD double knot(int i, int bins, int order) {
  const int top = bins - order + 1;
  const int t = i - order + 1;
  return t < 0 ? 0.0 : (t > top ? static_cast<double>(top) : static_cast<double>(t));
}

// The weights w[0..k) of the B-splines first, first + 1, …, first + k − 1 at z in [0, M − k + 1];
// returns first.
TWOBODY_HD int weights(double z, int bins, int order, double* w) {
  const int top = bins - order + 1;
  int m = static_cast<int>(z);  // floor: z ≥ 0
  if (m >= top) m = top - 1;
  const int span = m + order - 1, p = order - 1;
  double left[kMaxOrder], right[kMaxOrder];
  w[0] = 1.0;
  for (int j = 1; j <= p; ++j) {
    left[j] = z - knot(span + 1 - j, bins, order);
    right[j] = knot(span + j, bins, order) - z;
    double saved = 0.0;
    for (int r = 0; r < j; ++r) {
      const double temp = w[r] / (right[r + 1] + left[j - r]);
      w[r] = saved + right[r + 1] * temp;
      saved = left[j - r] * temp;
    }
    w[j] = saved;
  }
  return m;
}

// A sample's position z: fl(fl(x − lo) / fl(hi − lo)) · (M − k + 1) rounded; 0 for a constant row.
TWOBODY_HD double position(double x, double lo, double hi, int bins, int order) {
  if (!(hi > lo)) return 0.0;
  return ((x - lo) / (hi - lo)) * static_cast<double>(bins - order + 1);
}

}  // namespace twobody::spline
