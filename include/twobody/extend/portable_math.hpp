#pragma once
// The two transcendental functions whose results the engine sums (Σ w log s for every mean
// separation, and θ = acos(cos θ) for the angular ones), computed by one implementation on the
// host and on the device, so that a CPU run and a GPU run report the same bits (the host's libm
// and CUDA's libdevice each round their last bit their own way). Both are fdlibm's algorithms
// (Sun Microsystems, 1993: e_log.c and e_acos.c, error below 1 ulp), written with IEEE operations
// only: +, −, ×, / and sqrt are correctly rounded on both sides, and the library compiles with no
// contraction into FMA (-ffp-contract=off on the host, --fmad=false for CUDA), so each step rounds
// the same way everywhere.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "twobody/config.hpp"

namespace twobody::portable {

namespace detail {
TWOBODY_HD std::uint64_t bits(double x) {
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
TWOBODY_HD double from_bits(std::uint64_t u) {
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}
}  // namespace detail

// Natural logarithm of a positive normal double (callers clamp s at the smallest normal double);
// 0 → −inf is not needed and not handled (returns the log of the smallest normal's exponent).
TWOBODY_HD double log(double x) {
  constexpr double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  constexpr double Lg1 = 6.666666666666735130e-01, Lg2 = 3.999999999940941908e-01, Lg3 = 2.857142874366239149e-01,
                   Lg4 = 2.222219843214978396e-01, Lg5 = 1.818357216161805012e-01, Lg6 = 1.531383769920937332e-01,
                   Lg7 = 1.479819860511658591e-01;
  const std::uint64_t u = detail::bits(x);
  int k = static_cast<int>((u >> 52) & 0x7ff) - 1023;
  std::uint64_t m = u & 0x000fffffffffffffull;  // the mantissa, 1.m in [1, 2)
  // Put 1.m in [sqrt(2)/2, sqrt(2)): m above sqrt(2)'s mantissa halves it (exponent 1022).
  const std::uint64_t hi = m >> 32;
  const std::uint64_t i = (hi + 0x95f64) & 0x100000;  // fdlibm's test against sqrt(2)
  const double y = detail::from_bits(m | ((i ^ 0x3ff00000ull) << 32));
  k += static_cast<int>(i >> 20);
  const double f = y - 1.0;
  const double dk = k;
  const double s = f / (2.0 + f);
  const double z = s * s;
  const double w = z * z;
  const double t1 = w * (Lg2 + w * (Lg4 + w * Lg6));
  const double t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
  const double R = t2 + t1;
  // fdlibm's choice of the form by the mantissa's high bits (the half-square form where f is
  // largest).
  const std::int32_t h = static_cast<std::int32_t>(hi);
  if (((h - 0x6147a) | (0x6b851 - h)) > 0) {
    const double hfsq = 0.5 * f * f;
    return dk * ln2_hi - ((hfsq - (s * (hfsq + R) + dk * ln2_lo)) - f);
  }
  return dk * ln2_hi - ((s * (f - R) - dk * ln2_lo) - f);
}

// Arc cosine in radians of x in [−1, 1] (callers clamp); x outside gives NaN.
TWOBODY_HD double acos(double x) {
  constexpr double pi = 3.14159265358979311600e+00, pio2_hi = 1.57079632679489655800e+00,
                   pio2_lo = 6.12323399573676603587e-17;
  constexpr double pS0 = 1.66666666666666657415e-01, pS1 = -3.25565818622400915405e-01,
                   pS2 = 2.01212532134862925881e-01, pS3 = -4.00555345006794114027e-02,
                   pS4 = 7.91534994289814532176e-04, pS5 = 3.47933107596021167570e-05;
  constexpr double qS1 = -2.40339491173441421878e+00, qS2 = 2.02094576023350569471e+00,
                   qS3 = -6.88283971605453293030e-01, qS4 = 7.70381505559019352791e-02;
  const auto p_of = [&](double z) { return z * (pS0 + z * (pS1 + z * (pS2 + z * (pS3 + z * (pS4 + z * pS5))))); };
  const auto q_of = [&](double z) { return 1.0 + z * (qS1 + z * (qS2 + z * (qS3 + z * qS4))); };
  const double ax = x < 0 ? -x : x;
  if (ax >= 1.0) {
    if (x == 1.0) return 0.0;
    if (x == -1.0) return pi + 2.0 * pio2_lo;
    return (x - x) / (x - x);  // NaN
  }
  if (ax < 0.5) {
    if (ax <= 0x1p-57) return pio2_hi + pio2_lo;
    const double z = x * x;
    const double r = p_of(z) / q_of(z);
    return pio2_hi - (x - (pio2_lo - x * r));
  }
  if (x < 0) {
    const double z = (1.0 + x) * 0.5;
    const double s = sqrt(z);
    const double r = p_of(z) / q_of(z);
    const double w = r * s - pio2_lo;
    return pi - 2.0 * (s + w);
  }
  const double z = (1.0 - x) * 0.5;
  const double s = sqrt(z);
  const double df = detail::from_bits(detail::bits(s) & 0xffffffff00000000ull);  // s's high word
  const double c = (z - df * df) / (s + df);
  const double r = p_of(z) / q_of(z);
  const double w = r * s + c;
  return 2.0 * (df + w);
}

}  // namespace twobody::portable
