#pragma once
// The transcendental functions whose results the engine sums or bins (Σ w log s for every mean
// separation, θ = acos(cos θ) for the angular ones, and exp, log, pow in pair expressions,
// twobody/expression.hpp), computed by one implementation on the host and on the device, so that
// a CPU run and a GPU run, and builds by different compilers, report the same bits (the host's libm
// and CUDA's libdevice each round their last bit their own way, and a libm may change between
// releases). All are fdlibm's algorithms (Sun Microsystems, 1993: e_log.c, e_acos.c, e_exp.c,
// e_pow.c, error below 1 ulp; "Permission to use, copy, modify, and distribute this software is
// freely granted, provided that this notice is preserved"), written with IEEE operations
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

namespace detail {
// fdlibm's log of a positive normal double x, times 2^extra (extra: the scaling of a subnormal).
TWOBODY_HD double log_core(double x, int extra) {
  constexpr double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  constexpr double Lg1 = 6.666666666666735130e-01, Lg2 = 3.999999999940941908e-01, Lg3 = 2.857142874366239149e-01,
                   Lg4 = 2.222219843214978396e-01, Lg5 = 1.818357216161805012e-01, Lg6 = 1.531383769920937332e-01,
                   Lg7 = 1.479819860511658591e-01;
  const std::uint64_t u = detail::bits(x);
  int k = static_cast<int>((u >> 52) & 0x7ff) - 1023 + extra;
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
}  // namespace detail

// Natural logarithm of a positive normal double (callers clamp s at the smallest normal double);
// 0 → −inf is not needed and not handled (returns the log of the smallest normal's exponent).
TWOBODY_HD double log(double x) { return detail::log_core(x, 0); }

// The logarithm over every double, as C99's log: NaN for x < 0 and NaN, −inf at ±0, +inf at +inf;
// a subnormal is scaled by 2^54 exactly first (fdlibm's way).
TWOBODY_HD double log_any(double x) {
  if (x != x) return x;
  if (x < 0) return detail::from_bits(0x7ff8000000000000ull);
  if (x == 0) return -detail::from_bits(0x7ff0000000000000ull);
  if (x == detail::from_bits(0x7ff0000000000000ull)) return x;
  if (x < 0x1p-1022) return detail::log_core(x * 0x1p54, -54);
  return detail::log_core(x, 0);
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

// exp and pow (fdlibm's e_exp.c and e_pow.c). Their results are scaled by 2^n in two exact
// steps and one rounding, so a subnormal result is correctly rounded from the same bits on every
// platform (a libm's scalbn is not needed).
namespace detail {
TWOBODY_HD std::int32_t high(double x) { return static_cast<std::int32_t>(bits(x) >> 32); }
TWOBODY_HD std::uint32_t low(double x) { return static_cast<std::uint32_t>(bits(x)); }
TWOBODY_HD double with_high(double x, std::uint32_t h) {
  return from_bits((static_cast<std::uint64_t>(h) << 32) | (bits(x) & 0xffffffffull));
}
TWOBODY_HD double low_cleared(double x) { return from_bits(bits(x) & 0xffffffff00000000ull); }
// y · 2^n for y in [0.5, 2] and n ≥ −1100 whose product is subnormal: exact to 2^(n+1000), then
// one correctly rounded multiplication by 2^−1000.
TWOBODY_HD double scale_down(double y, int n) {
  const double up = from_bits(static_cast<std::uint64_t>(1023 + n + 1000) << 52);
  return (y * up) * 0x1p-1000;
}
constexpr double kP1 = 1.66666666666666019037e-01, kP2 = -2.77777777770155933842e-03,
                 kP3 = 6.61375632143793436117e-05, kP4 = -1.65339022054652515390e-06,
                 kP5 = 4.13813679705723846039e-08;
TWOBODY_HD double inf() { return from_bits(0x7ff0000000000000ull); }
TWOBODY_HD double nan() { return from_bits(0x7ff8000000000000ull); }
}  // namespace detail

// e^x: fdlibm's reduction x = k·ln2 + r (ln2 in two parts), a rational approximation of e^r and
// the exponent added to the bits.
TWOBODY_HD double exp(double x) {
  using namespace detail;
  constexpr double o_threshold = 7.09782712893383973096e+02, u_threshold = -7.45133219101941108420e+02;
  constexpr double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10,
                   inv_ln2 = 1.44269504088896338700e+00;
  const std::uint32_t hx = static_cast<std::uint32_t>(high(x)) & 0x7fffffffu;
  const bool negative = x < 0;
  if (x != x) return x + x;
  if (hx >= 0x40862E42u) {  // |x| ≥ 709.78
    if (hx >= 0x7ff00000u) return negative ? 0.0 : x;
    if (x > o_threshold) return inf();
    if (x < u_threshold) return 0.0;
  }
  double hi = 0, lo = 0;
  int k = 0;
  if (hx > 0x3fd62e42u) {  // |x| > ln2 / 2
    if (hx < 0x3FF0A2B2u) {  // and < 1.5 ln2
      hi = negative ? x + ln2_hi : x - ln2_hi;
      lo = negative ? -ln2_lo : ln2_lo;
      k = negative ? -1 : 1;
    } else {
      k = static_cast<int>(inv_ln2 * x + (negative ? -0.5 : 0.5));  // truncation toward zero
      const double t = k;
      hi = x - t * ln2_hi;
      lo = t * ln2_lo;
    }
    x = hi - lo;
  } else if (hx < 0x3e300000u) {  // |x| < 2^-28
    return 1.0 + x;
  }
  const double t = x * x;
  const double c = x - t * (kP1 + t * (kP2 + t * (kP3 + t * (kP4 + t * kP5))));
  if (k == 0) return 1.0 - ((x * c) / (c - 2.0) - x);
  const double y = 1.0 - ((lo - (x * c) / (2.0 - c)) - hi);
  if (k >= -1021) return with_high(y, static_cast<std::uint32_t>(high(y)) + (static_cast<std::uint32_t>(k) << 20));
  return scale_down(y, k);
}

// x^y as C99's pow (special cases of Annex F), otherwise fdlibm's: log2|x| in extra precision
// (t1 + t2), y·log2|x| split into an integer n and a part in [−1/2, 1/2], 2^part by the rational
// approximation of exp, and the sign of a negative x to an odd integer y.
TWOBODY_HD double pow(double x, double y) {
  using namespace detail;
  constexpr double bp[] = {1.0, 1.5}, dp_h[] = {0.0, 5.84962487220764160156e-01},
                   dp_l[] = {0.0, 1.35003920212974897128e-08};
  constexpr double L1 = 5.99999999999994648725e-01, L2 = 4.28571428578550184252e-01, L3 = 3.33333329818377432918e-01,
                   L4 = 2.72728123808534006489e-01, L5 = 2.30660745775561754067e-01, L6 = 2.06975017800338417784e-01;
  constexpr double lg2 = 6.93147180559945286227e-01, lg2_h = 6.93147182464599609375e-01,
                   lg2_l = -1.90465429995776804525e-09, ovt = 8.0085662595372944372e-17;
  constexpr double cp = 9.61796693925975554329e-01, cp_h = 9.61796700954437255859e-01,
                   cp_l = -7.02846165095275826516e-09;
  constexpr double ivln2 = 1.44269504088896338700e+00, ivln2_h = 1.44269502162933349609e+00,
                   ivln2_l = 1.92596299112661746887e-08;
  if (y == 0) return 1.0;
  if (x == 1.0) return 1.0;
  if (x != x || y != y) return x + y;
  const double ax = fabs(x), ay = fabs(y);
  // y odd (1), even (2) or not an integer (0); every |y| ≥ 2^53 is even.
  int yisint = 0;
  if (ay >= 0x1p53) yisint = 2;
  else if (trunc(y) == y) yisint = trunc(y * 0.5) == y * 0.5 ? 2 : 1;
  if (ay == inf()) {
    if (ax == 1.0) return 1.0;
    return (ax > 1.0) == (y > 0) ? inf() : 0.0;
  }
  if (y == 1.0) return x;
  if (y == -1.0) return 1.0 / x;
  if (y == 2.0) return x * x;
  if (y == 0.5 && !(high(x) < 0)) return sqrt(x);
  if (ax == 0.0 || ax == 1.0 || ax == inf()) {
    double z = ax;
    if (y < 0) z = 1.0 / z;
    if (high(x) < 0) {
      if (ax == 1.0 && yisint == 0) return nan();
      if (yisint == 1) z = -z;
    }
    return z;
  }
  if (x < 0 && yisint == 0) return nan();
  const double s = x < 0 && yisint == 1 ? -1.0 : 1.0;
  std::int32_t ix = high(ax);
  double t1, t2;
  if (ay > 0x1p31) {
    // |y| > 2^31: the result over- or underflows unless |x| is within an ulp or so of 1.
    if (ay > 0x1p64 || ix < 0x3fefffff || ix > 0x3ff00000) return (ax < 1.0 ? y < 0 : y > 0) ? s * inf() : s * 0.0;
    const double t = ax - 1.0;
    const double w = (t * t) * (0.5 - t * (0.3333333333333333333333 - t * 0.25));
    const double u = ivln2_h * t;
    const double v = t * ivln2_l - w * ivln2;
    t1 = low_cleared(u + v);
    t2 = v - (t1 - u);
  } else {
    double axn = ax;
    int n = 0;
    if (ix < 0x00100000) {  // subnormal
      axn *= 0x1p53;
      n -= 53;
      ix = high(axn);
    }
    n += (ix >> 20) - 0x3ff;
    const std::int32_t j = ix & 0x000fffff;
    ix = j | 0x3ff00000;
    int k;
    if (j <= 0x3988E) k = 0;        // |x| < sqrt(3/2)
    else if (j < 0xBB67A) k = 1;    // |x| < sqrt(3)
    else {
      k = 0;
      n += 1;
      ix -= 0x00100000;
    }
    axn = with_high(axn, static_cast<std::uint32_t>(ix));
    // ss = s_h + s_l = (x − bp) / (x + bp)
    const double u = axn - bp[k];
    const double v = 1.0 / (axn + bp[k]);
    const double ss = u * v;
    const double s_h = low_cleared(ss);
    double t_h = from_bits(static_cast<std::uint64_t>(static_cast<std::uint32_t>(((ix >> 1) | 0x20000000) + 0x00080000 + (k << 18))) << 32);
    double t_l = axn - (t_h - bp[k]);
    const double s_l = v * ((u - s_h * t_h) - s_h * t_l);
    // log(ax) / log2
    double s2 = ss * ss;
    double r = s2 * s2 * (L1 + s2 * (L2 + s2 * (L3 + s2 * (L4 + s2 * (L5 + s2 * L6)))));
    r += s_l * (s_h + ss);
    s2 = s_h * s_h;
    t_h = low_cleared(3.0 + s2 + r);
    t_l = r - ((t_h - 3.0) - s2);
    const double uu = s_h * t_h;
    const double vv = s_l * t_h + t_l * ss;
    const double p_h = low_cleared(uu + vv);
    const double p_l = vv - (p_h - uu);
    const double z_h = cp_h * p_h;
    const double z_l = cp_l * p_h + p_l * cp + dp_l[k];
    const double t = static_cast<double>(n);
    t1 = low_cleared(((z_h + z_l) + dp_h[k]) + t);
    t2 = z_l - (((t1 - t) - dp_h[k]) - z_h);
  }
  // y·(t1 + t2) = p_h + p_l
  const double y1 = low_cleared(y);
  const double p_l = (y - y1) * t1 + y * t2;
  double p_h = y1 * t1;
  double z = p_l + p_h;
  std::int32_t j = high(z);
  const std::uint32_t i = low(z);
  if (j >= 0x40900000) {  // z ≥ 1024
    if (((static_cast<std::uint32_t>(j) - 0x40900000u) | i) != 0 || p_l + ovt > z - p_h) return s * inf();
  } else if ((j & 0x7fffffff) >= 0x4090cc00) {  // z ≤ −1075
    if (((static_cast<std::uint32_t>(j) - 0xc090cc00u) | i) != 0 || p_l <= z - p_h) return s * 0.0;
  }
  // z = n + r with |r| ≤ 1/2
  const std::int32_t ia = j & 0x7fffffff;
  std::int32_t k = (ia >> 20) - 0x3ff;
  std::int32_t n = 0;
  if (ia > 0x3fe00000) {
    n = j + (0x00100000 >> (k + 1));
    k = ((n & 0x7fffffff) >> 20) - 0x3ff;
    const double t = from_bits(static_cast<std::uint64_t>(static_cast<std::uint32_t>(n & ~(0x000fffff >> k))) << 32);
    n = ((n & 0x000fffff) | 0x00100000) >> (20 - k);
    if (j < 0) n = -n;
    p_h -= t;
  }
  const double t = low_cleared(p_l + p_h);
  const double u = t * lg2_h;
  const double v = (p_l - (t - p_h)) * lg2 + t * lg2_l;
  z = u + v;
  const double w = v - (z - u);
  const double tt = z * z;
  const double tq = z - tt * (kP1 + tt * (kP2 + tt * (kP3 + tt * (kP4 + tt * kP5))));
  const double r = (z * tq) / (tq - 2.0) - (w + z * w);
  z = 1.0 - (r - z);
  const std::int32_t e = static_cast<std::int32_t>(static_cast<std::uint32_t>(high(z)) + (static_cast<std::uint32_t>(n) << 20));
  if ((e >> 20) <= 0) return s * scale_down(z, n);
  return s * with_high(z, static_cast<std::uint32_t>(e));
}

}  // namespace twobody::portable

