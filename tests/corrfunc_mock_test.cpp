// DD(θ) of the shared galaxy mock against Corrfunc 2.5.3's DDtheta_mocks built in double precision
// (autocorr=1, the mock's own angular bins). Corrfunc counts each unordered pair twice in auto
// mode; the numbers below are its counts halved. Recorded 2026-11-22 (see bench/RESULTS.md).
#include <gtest/gtest.h>

#include <fstream>

#include "twobody/io.hpp"
#include "twobody/statistics.hpp"

using namespace twobody;

TEST(CorrfuncMock, AngularCountsEqualDDthetaMocks) {
  const std::string dir = TWOBODY_SHARED_DATA;
  const std::string mock = dir + "/Mr19_mock_northonly.rdcz.ff", binfile = dir + "/angular_bins_corrfunc.txt";
  if (!std::ifstream(mock) || !std::ifstream(binfile)) GTEST_SKIP() << "shared mock not present";
  const std::vector<std::uint64_t> corrfunc_double = {
      2936, 5062, 8506, 13778, 23048, 38528, 65526, 110272, 187034, 313508, 530662, 930214,
      1671728, 3099042, 5828652, 10976410, 20847164, 39328118, 74387848, 139896124};
  ReadOptions o;
  o.columns = {1, 2};
  const auto radec = read_points(mock, o);
  RunOptions ro;
  ro.backend = "cpu";
  const auto r = angular(radec, nullptr, Binning::from_file(binfile), false, ro);
  ASSERT_EQ(r.raw.counts.size(), corrfunc_double.size());
  for (std::size_t k = 0; k < corrfunc_double.size(); ++k)
    EXPECT_EQ(2 * r.raw.counts[k], corrfunc_double[k]) << "bin " << k;
}
