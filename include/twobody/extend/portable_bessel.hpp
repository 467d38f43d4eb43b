#pragma once
// The modified Bessel function I₀ of Kaiser–Bessel gridding, by one implementation on the host and
// the device (as portable_math.hpp's exp and log: IEEE operations only, no contraction), so that a
// CPU and a GPU lattice map have the same bits.
#include "twobody/config.hpp"

namespace twobody::portable {

// I₀(x) = Σ_k (x²/4)^k / (k!)² for 0 ≤ x ≤ 700. The series' terms are all positive, so summing
// them in order loses nothing to cancellation: each term carries at most about 3k roundings and
// the sum stops when a term falls below 2^−56 of it, k ≤ x/2 + 60; relative error below
// (1.5x + 200)·2^−53.
TWOBODY_HD double bessel_i0(double x) {
  const double q = 0.25 * x * x;
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < 2000; ++k) {
    const double dk = k;
    term = term * q / (dk * dk);
    sum += term;
    if (term < sum * 0x1p-56) break;
  }
  return sum;
}

}  // namespace twobody::portable
