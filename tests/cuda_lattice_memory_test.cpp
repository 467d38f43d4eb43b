// Device memory around lattice maps: what the stream-ordered pool keeps after a run counts as
// available to the next (cuda/device_buffer.hpp's available_device_bytes), and a failed CUDA call,
// once handled, is not reported by a later map's launches. CUDA builds only (it calls the runtime).
#include <gtest/gtest.h>

#include "lattice_cases.hpp"
#include "twobody/detail/cuda/device_buffer.hpp"

namespace {

using namespace twobody;
using namespace lattice_cases;

TEST_F(CudaLattice, MemoryThePoolKeepsCountsAsAvailableAndAFailureIsNotStale) {
  const std::size_t before = cuda::available_device_bytes();
  { cuda::DeviceBuffer<unsigned char> gigabyte(std::size_t(1) << 30); }
  TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
  // Freed into the pool, which keeps it: still available to the next run.
  EXPECT_GE(cuda::available_device_bytes() + (std::size_t(64) << 20), before);
  // A failed allocation, handled; the next map's launches must not report it.
  EXPECT_ANY_THROW(cuda::DeviceBuffer<unsigned char>(std::size_t(1) << 50));
  const Case c = make_case(71, LatticeKernel::CoulombSwitched, Support::Ball, 3, 1000, false);
  expect_same_bits(c, Precision::Single, "after a failed allocation");
}

}  // namespace
