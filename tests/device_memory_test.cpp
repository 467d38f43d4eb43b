// The device memory budget (twobody/device_memory.hpp): sizes as the CLI's --device-memory and the
// Python module read them, and refusals of what is not a size or too small to hold any run.
#include <gtest/gtest.h>

#include <string>

#include "twobody/device_memory.hpp"
#include "twobody/error.hpp"

namespace twobody {
namespace {

TEST(DeviceMemory, SizesInBytesAndBinaryPrefixes) {
  EXPECT_EQ(parse_memory_size("2G", "x"), std::size_t{2} << 30);
  EXPECT_EQ(parse_memory_size("2g", "x"), std::size_t{2} << 30);
  EXPECT_EQ(parse_memory_size("512M", "x"), std::size_t{512} << 20);
  EXPECT_EQ(parse_memory_size("512MB", "x"), std::size_t{512} << 20);
  EXPECT_EQ(parse_memory_size("1.5GiB", "x"), std::size_t{3} << 29);
  EXPECT_EQ(parse_memory_size("4096K", "x"), std::size_t{4} << 20);
  EXPECT_EQ(parse_memory_size("1T", "x"), std::size_t{1} << 40);
  EXPECT_EQ(parse_memory_size("3e9", "x"), std::size_t{3000000000});
  EXPECT_EQ(parse_memory_size("1048576", "x"), std::size_t{1} << 20);
  EXPECT_EQ(parse_memory_size("2000000B", "x"), std::size_t{2000000});
}

TEST(DeviceMemory, RefusesWhatIsNotASizeOrHoldsNoRun) {
  for (const std::string bad : {"", "G", "two", "2X", "2GG", "2 G", "-1G", "nan", "inf", "1e400", "1023K", "100",
                                "0", "2Gi", "5EB"}) {
    try {
      parse_memory_size(bad, "--device-memory");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Config) << bad;
      EXPECT_NE(std::string(e.what()).find("--device-memory"), std::string::npos) << e.what();
    }
  }
}

TEST(DeviceMemory, TheLimitIsProcessWideUntilSetAgain) {
  const std::size_t before = device_memory_limit();
  set_device_memory_limit(std::size_t{3} << 30);
  EXPECT_EQ(device_memory_limit(), std::size_t{3} << 30);
  set_device_memory_limit(0);
  EXPECT_EQ(device_memory_limit(), 0u);
  set_device_memory_limit(before);
}

}  // namespace
}  // namespace twobody
