#pragma once
// Exact sums on the GPU (twobody/exact_sums.hpp): each term put on its run's grid as a 64-bit
// integer of steps, the steps added into 128-bit sums in shared or global memory with two 64-bit
// integer atomics (the low word's carry, seen in the value the atomic returns, goes to the high
// word). Integer atomics commute, so the sums do not depend on which thread adds first, and they
// are the CPU's: the same terms (float64 products, IEEE on both sides, no FMA), the same rounding
// onto the grid, exact integer addition.
#include <cstdint>

#include "twobody/exact_sums.hpp"

namespace twobody::cuda {

// SumGrid's two factors 2^−exponent (a kernel argument).
struct DeviceSumGrid {
  double inverse_step = 1.0, inverse_step2 = 1.0;
  DeviceSumGrid() = default;
  explicit DeviceSumGrid(const SumGrid& g) : inverse_step(g.inverse_step), inverse_step2(g.inverse_step2) {}
};

// A 128-bit sum in __int128's layout (two's complement, low word first): the host reads the array
// back as FixedSum.
struct DeviceFixedSum {
  unsigned long long lo, hi;
};
static_assert(sizeof(DeviceFixedSum) == sizeof(FixedSum), "a device sum is read back as a FixedSum");

#ifdef __CUDACC__
// SumGrid::steps on the device: the one rounding (to nearest, ties to even) is the conversion's.
__device__ __forceinline__ long long grid_steps(const DeviceSumGrid& g, double term) {
  return __double2ll_rn(term * g.inverse_step * g.inverse_step2);
}

// *s += v (steps, signed).
__device__ __forceinline__ void add_steps(DeviceFixedSum* s, long long v) {
  const unsigned long long u = static_cast<unsigned long long>(v);
  const unsigned long long old = atomicAdd(&s->lo, u);
  const unsigned long long hi = (v < 0 ? ~0ull : 0ull) + (old + u < old ? 1ull : 0ull);
  if (hi) atomicAdd(&s->hi, hi);
}

// *s += (hi·2^64 + lo): a block's or a thread's sum into a wider one.
__device__ __forceinline__ void add_sum(DeviceFixedSum* s, unsigned long long lo, unsigned long long hi) {
  const unsigned long long old = atomicAdd(&s->lo, lo);
  hi += old + lo < old ? 1ull : 0ull;
  if (hi) atomicAdd(&s->hi, hi);
}
__device__ __forceinline__ void add_sum(DeviceFixedSum* s, __int128 v) {
  add_sum(s, static_cast<unsigned long long>(v), static_cast<unsigned long long>(static_cast<unsigned __int128>(v) >> 64));
}
__device__ __forceinline__ bool is_zero(const DeviceFixedSum& s) { return (s.lo | s.hi) == 0; }
#endif

}  // namespace twobody::cuda
