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
