// The log and acos that the CPU and the GPU share (twobody/extend/portable_math.hpp): within one
// ulp of the host's libm over the whole range the engine uses, exact at the points that must be.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <random>

#include "test_support.hpp"
#include "twobody/extend/portable_math.hpp"

namespace {

double ulps(double a, double b) {
  if (a == b) return 0;
  return std::fabs(a - b) / (std::nextafter(std::fabs(b), INFINITY) - std::fabs(b));
}

TEST(PortableMath, LogWithinOneUlpOfLibm) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  double worst = 0;
  for (int i = 0; i < 2000000; ++i) {
    const double x = std::ldexp(1.0 + double(rng() >> 11) * 0x1p-53, int(rng() % 2044) - 1022);
    worst = std::fmax(worst, ulps(twobody::portable::log(x), std::log(x)));
  }
  EXPECT_LE(worst, 1.0);
  for (double x : {DBL_MIN, 0.5, 2.0, 1e-300, 1e300, DBL_MAX, 1.0000000000000002, 0.9999999999999999, 1.4142135623730951,
                   0.7071067811865476})
    EXPECT_LE(ulps(twobody::portable::log(x), std::log(x)), 1.0) << x;
  EXPECT_EQ(twobody::portable::log(1.0), 0.0);
  EXPECT_EQ(twobody::portable::log(DBL_MIN), std::log(DBL_MIN));  // the clamp of s = 0
}

TEST(PortableMath, AcosWithinOneUlpOfLibm) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  double worst = 0;
  for (int i = 0; i < 2000000; ++i) {
    const double c = 2.0 * double(rng() >> 11) * 0x1p-53 - 1.0;
    worst = std::fmax(worst, ulps(twobody::portable::acos(c), std::acos(c)));
    // Near ±1, where angular separations of close pairs live.
    const double n = 1.0 - std::ldexp(double(rng() >> 11) * 0x1p-53, -int(rng() % 50));
    worst = std::fmax(worst, ulps(twobody::portable::acos(n), std::acos(n)));
    worst = std::fmax(worst, ulps(twobody::portable::acos(-n), std::acos(-n)));
  }
  EXPECT_LE(worst, 1.0);
  EXPECT_EQ(twobody::portable::acos(1.0), 0.0);
  EXPECT_EQ(twobody::portable::acos(-1.0), std::acos(-1.0));
  EXPECT_EQ(twobody::portable::acos(0.0), std::acos(0.0));
  EXPECT_TRUE(std::isnan(twobody::portable::acos(1.5)));
}

}  // namespace

namespace {

// The expressions' exp, pow and log over every double (twobody/expression.hpp): within one ulp of
// the host's libm on random arguments, and C99 Annex F's values at the special ones.
TEST(PortableMath, ExpWithinOneUlpOfLibm) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-745.5, 710.0);
  double worst = 0;
  for (int i = 0; i < 1000000; ++i) {
    const double x = i % 2 ? u(rng) : std::ldexp(u(rng) / 710.0, -int(rng() % 40));
    worst = std::fmax(worst, ulps(twobody::portable::exp(x), std::exp(x)));
  }
  EXPECT_LE(worst, 1.0);
  using twobody::portable::exp;
  EXPECT_EQ(exp(0.0), 1.0);
  EXPECT_EQ(exp(-0.0), 1.0);
  EXPECT_EQ(exp(INFINITY), INFINITY);
  EXPECT_EQ(exp(-INFINITY), 0.0);
  EXPECT_EQ(exp(710.0), INFINITY);
  EXPECT_EQ(exp(-746.0), 0.0);
  EXPECT_TRUE(std::isnan(exp(NAN)));
  EXPECT_LE(std::fabs(exp(-744.0) - std::exp(-744.0)), 0x1p-1074);  // a subnormal result
  EXPECT_LE(ulps(exp(1.0), std::exp(1.0)), 1.0);
}

TEST(PortableMath, PowWithinOneUlpOfLibm) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  double worst = 0;
  for (int i = 0; i < 1000000; ++i) {
    const double x = std::ldexp(1.0 + double(rng() >> 11) * 0x1p-53, int(rng() % 200) - 100);
    const double y = i % 3 == 0 ? std::round(u(rng) * 40) : u(rng) * (i % 3 == 1 ? 8.0 : 300.0);
    const double p = twobody::portable::pow(x, y), q = std::pow(x, y);
    if (std::isinf(q) || q == 0) {
      EXPECT_EQ(p, q) << x << " ^ " << y;
      continue;
    }
    if (!std::isnormal(q)) {  // subnormal: within one step of 2^-1074
      EXPECT_LE(std::fabs(p - q), 0x1p-1074) << x << " ^ " << y;
      continue;
    }
    worst = std::fmax(worst, ulps(p, q));
    if (std::fmod(y, 2.0) == 1.0 || std::fmod(y, 2.0) == -1.0) worst = std::fmax(worst, ulps(twobody::portable::pow(-x, y), -q));
  }
  EXPECT_LE(worst, 1.0);
  using twobody::portable::pow;
  const double cases[][2] = {{0.0, 0.0},   {NAN, 0.0},     {1.0, NAN},      {-1.0, INFINITY}, {-1.0, -INFINITY},
                             {0.5, INFINITY}, {2.0, INFINITY}, {0.5, -INFINITY}, {2.0, -INFINITY}, {0.0, -1.0},
                             {-0.0, -1.0}, {-0.0, -2.0},   {-0.0, 3.0},     {-0.0, 0.5},      {-INFINITY, 3.0},
                             {-INFINITY, 2.0}, {-INFINITY, -3.0}, {-2.0, 0.5}, {-8.0, 1.0 / 3.0}, {2.0, 1024.0},
                             {2.0, -1074.0}, {2.0, -1075.0}, {3.0, 0.5},    {-3.0, 3.0},      {10.0, -2.0},
                             {1.0000000000000002, 1e20}, {0.9999999999999999, 1e20}, {-1.0000000000000002, 3e9 + 1},
                             {1e-310, 0.5}, {1e-310, 2.5}, {0x1p-1074, 0.25}};
  for (const auto& c : cases) {
    const double p = pow(c[0], c[1]), q = std::pow(c[0], c[1]);
    if (std::isnan(q)) EXPECT_TRUE(std::isnan(p)) << c[0] << " ^ " << c[1];
    else if (std::isfinite(q) && q != 0 && !std::isnormal(q)) EXPECT_LE(std::fabs(p - q), 0x1p-1074) << c[0] << " ^ " << c[1];
    else EXPECT_LE(ulps(p, q), 1.0) << c[0] << " ^ " << c[1] << ": " << p << " vs " << q;
    if (!std::isnan(q) && (q == 0 || std::isinf(q))) EXPECT_EQ(std::signbit(p), std::signbit(q)) << c[0] << " ^ " << c[1];
  }
}

TEST(PortableMath, LogAnyCoversEveryDouble) {
  using twobody::portable::log_any;
  EXPECT_EQ(log_any(0.0), -INFINITY);
  EXPECT_EQ(log_any(-0.0), -INFINITY);
  EXPECT_EQ(log_any(INFINITY), INFINITY);
  EXPECT_TRUE(std::isnan(log_any(-1.0)));
  EXPECT_TRUE(std::isnan(log_any(-INFINITY)));
  EXPECT_TRUE(std::isnan(log_any(NAN)));
  for (double x : {0x1p-1074, 1e-310, 3e-320, 0x1p-1023, 0.5, 10.0})
    EXPECT_LE(ulps(log_any(x), std::log(x)), 1.0) << x;
  EXPECT_EQ(log_any(2.5), twobody::portable::log(2.5));
}

}  // namespace
