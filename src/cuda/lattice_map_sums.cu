// Lattice maps' sums after the GPU's passes: lattice_map_sums.hpp.
#include "twobody/detail/cuda/lattice_map_sums.hpp"

#include <cstdint>
#include <utility>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/cuda/staged_upload.hpp"
#include "twobody/detail/cuda/staged_widening.hpp"

namespace twobody::cuda {

namespace {

// Single's values on the device: each 64-bit integer of steps rounded once to float64 (the
// integer's conversion; the power of two is exact) as SumGrid::value does on the host, then to
// float32; excluded nodes 0. The map then comes back as its float32 values (half the bytes of
// float64s), widened on the host as the staging empties, with no other pass over it there.
__global__ void lattice_values_kernel(const long long* sums, float* values, const unsigned char* excluded,
                                      unsigned long long slots, int comps, int exponent) {
  for (unsigned long long s = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; s < slots;
       s += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    const bool ex = excluded && excluded[s / static_cast<unsigned long long>(comps)];
    const double v = ex ? 0.0 : ldexp(__ll2double_rn(sums[s]), exponent);
    values[s] = __double2float_rn(v);
  }
}

// The CPU's overflow sums added to the device's, a thread a slot: 64-bit integers, or 128-bit ones
// (two words, low first, as FixedSum) with the low word's carry; the masks or-ed.
__global__ void add_sums_kernel(unsigned long long* sums, const unsigned long long* extra, unsigned long long slots, bool wide) {
  for (unsigned long long s = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; s < slots;
       s += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    if (!wide) {
      sums[s] += extra[s];
      continue;
    }
    const unsigned long long lo = sums[2 * s] + extra[2 * s];
    sums[2 * s + 1] += extra[2 * s + 1] + (lo < extra[2 * s] ? 1ull : 0ull);
    sums[2 * s] = lo;
  }
}
__global__ void or_mask_kernel(unsigned char* mask, const unsigned char* extra, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<unsigned long long>(gridDim.x) * blockDim.x)
    mask[i] |= extra[i];
}

}  // namespace

std::future<cpu::LatticeSums> start_cpu_overflow(const LatticePlan& plan, const RegularBins& r,
                                                 const std::array<lattice::AxisBins, 3>& axis) {
  lattice::Binned overflow;
  overflow.sources.assign(r.spill.begin(), r.spill.end());
  overflow.start.assign(r.spill_start.begin(), r.spill_start.end());
  overflow.axis = axis;
  LatticePlan quiet = plan;
  quiet.progress = nullptr;
  quiet.clock = nullptr;
  return std::async(std::launch::async, [quiet = std::move(quiet), overflow = std::move(overflow)] {
    return cpu::lattice_sums(quiet, overflow);
  });
}

void add_cpu_overflow(const cpu::LatticeSums& extra, void* sums, unsigned char* mask, unsigned long long slots) {
  const bool wide = extra.narrow.empty();
  DeviceBuffer<unsigned long long> words(slots * (wide ? 2 : 1));
  upload_bytes(words.get(), wide ? static_cast<const void*>(extra.wide.data()) : static_cast<const void*>(extra.narrow.data()),
               words.size() * sizeof(unsigned long long));
  add_sums_kernel<<<1024, 256>>>(static_cast<unsigned long long*>(sums), words.get(), slots, wide);
  TWOBODY_CUDA_CHECK(cudaGetLastError());
  if (!extra.excluded.empty()) {
    const DeviceBuffer<std::uint8_t> ex(extra.excluded);
    or_mask_kernel<<<1024, 256>>>(mask, ex.get(), ex.size());
    TWOBODY_CUDA_CHECK(cudaGetLastError());
  }
  TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
}

void single_values_back(const long long* sums, const unsigned char* excluded, unsigned long long slots, int comps,
                        int exponent, double* out) {
  DeviceBuffer<float> values(slots);
  lattice_values_kernel<<<1024, 256>>>(sums, values.get(), excluded, slots, comps, exponent);
  TWOBODY_CUDA_CHECK(cudaGetLastError());
  download_widened(out, values.get(), slots);
}

}  // namespace twobody::cuda
