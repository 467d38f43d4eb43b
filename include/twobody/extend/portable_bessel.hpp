#pragma once
// The modified Bessel function I₀ of Kaiser–Bessel gridding, by one implementation on the host and
// the device (as portable_math.hpp's exp and log: IEEE operations only, no contraction), so that a
// CPU and a GPU lattice map have the same bits.
#include "twobody/config.hpp"

// Unrolled on the device, so that the short arrays below stay in registers.
#ifdef __CUDA_ARCH__
#define TWOBODY_BESSEL_UNROLL _Pragma("unroll")
#else
#define TWOBODY_BESSEL_UNROLL
#endif

namespace twobody::portable {

// I₀(x) = Σ_k (x²/4)^k / (k!)² for 0 ≤ x ≤ 700. The series' terms are all positive, so summing
// them loses nothing to cancellation. For x ≤ 20 (Kaiser–Bessel's β for widths up to 8 cells is
// below 19) it is the polynomial of its first 37 coefficients, each 1/(k!)² rounded once (hex
// literals: the host and the device read the same bits), by Estrin's scheme: no division, the
// terms left out below 2^−60 of the sum; all terms positive, each coefficient's path carries at
// most ~50 roundings (q^32 alone 31), so the relative error is below 75·2^−53. Beyond, the terms by their
// recurrence, the sum stopping when a term falls below 2^−56 of it (k ≤ x/2 + 60; each term about
// 3k roundings). Relative error below (1.5x + 200)·2^−53 either way.
TWOBODY_HD double bessel_i0(double x) {
  const double q = 0.25 * x * x;
  if (x <= 20 && x >= -20) {
    constexpr double c[37] = {
      0x1.0000000000000p+0, 0x1.0000000000000p+0, 0x1.0000000000000p-2,
      0x1.c71c71c71c71cp-6, 0x1.c71c71c71c71cp-10, 0x1.23456789abcdfp-14,
      0x1.02e85c0898b71p-19, 0x1.522a43f65486ap-25, 0x1.522a43f65486ap-31,
      0x1.0b313289be0b9p-37, 0x1.5601885e63e5dp-44, 0x1.69ca9cf3b7f54p-51,
      0x1.4197a7f5154bcp-58, 0x1.e725594ee52e9p-66, 0x1.3e22d70ef3b5fp-73,
      0x1.69f7da8510bcdp-81, 0x1.69f7da8510bcdp-89, 0x1.40a2dc2460523p-97,
      0x1.faaf2fa1c79e5p-106, 0x1.674f8e46c208cp-114, 0x1.cbeaf38dc529fp-123,
      0x1.0afb53e9cec0bp-131, 0x1.1a6d4e307528fp-140, 0x1.1159d2b18fe1fp-149,
      0x1.e5f504c9e358cp-159, 0x1.8e189760fbc74p-168, 0x1.2d843c1f0a6f9p-177,
      0x1.a787875e855a5p-187, 0x1.149733d53cf71p-196, 0x1.50c6b70b8d80dp-206,
      0x1.7f2d2fd687f7dp-216, 0x1.984bda886ca72p-226, 0x1.984bda886ca72p-236,
      0x1.7fed0e5ee6853p-246, 0x1.541631ef14d5ap-256, 0x1.1c48e3508671dp-266,
      0x1.c13d73dae76b2p-277,
    };
    // Estrin's scheme: pairs of coefficients, then pairs of pairs with q², q⁴, ... — six levels
    // deep instead of Horner's 36 dependent steps (the CPU's MRI gridding spent three quarters of
    // its time waiting on them).
    double a[19], b[10], d[5];
    TWOBODY_BESSEL_UNROLL
    for (int i = 0; i < 18; ++i) a[i] = c[2 * i] + c[2 * i + 1] * q;
    a[18] = c[36];
    const double q2 = q * q;
    TWOBODY_BESSEL_UNROLL
    for (int i = 0; i < 9; ++i) b[i] = a[2 * i] + a[2 * i + 1] * q2;
    b[9] = a[18];
    const double q4 = q2 * q2;
    TWOBODY_BESSEL_UNROLL
    for (int i = 0; i < 5; ++i) d[i] = b[2 * i] + b[2 * i + 1] * q4;
    const double q8 = q4 * q4;
    const double e0 = d[0] + d[1] * q8, e1 = d[2] + d[3] * q8;
    const double q16 = q8 * q8;
    return (e0 + e1 * q16) + d[4] * (q16 * q16);
  }
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

#undef TWOBODY_BESSEL_UNROLL
