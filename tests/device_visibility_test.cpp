// The CLI's narrowing of CUDA_VISIBLE_DEVICES to the default device (apps/twobody/device_visibility):
// the runtime's device 0 is the first entry of the list, in whatever form the user wrote it.
#include <gtest/gtest.h>

#include "../apps/twobody/device_visibility.hpp"

using twobody::cli::default_device_visibility;

TEST(DeviceVisibility, UnsetShowsDeviceZero) { EXPECT_EQ(default_device_visibility(nullptr), "0"); }

TEST(DeviceVisibility, AListKeepsItsFirstEntryAsWritten) {
  EXPECT_EQ(default_device_visibility("2,3"), "2");
  EXPECT_EQ(default_device_visibility("3,1,0"), "3");
  EXPECT_EQ(default_device_visibility("GPU-8932f937-d72c-4106-c12f-20bd9faed9f6,GPU-1b2c"),
            "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6");
  EXPECT_EQ(default_device_visibility("MIG-GPU-a/1/0,MIG-GPU-a/2/0"), "MIG-GPU-a/1/0");
}

TEST(DeviceVisibility, OneDeviceOrNoneIsLeftAlone) {
  EXPECT_EQ(default_device_visibility("1"), std::nullopt);
  EXPECT_EQ(default_device_visibility(""), std::nullopt);
  EXPECT_EQ(default_device_visibility("-1"), std::nullopt);
  EXPECT_EQ(default_device_visibility("-1,0"), std::nullopt);  // CUDA shows none: stay so
  EXPECT_EQ(default_device_visibility(",0"), std::nullopt);
}
