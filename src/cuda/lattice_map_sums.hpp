#pragma once
// What becomes of the GPU lattice traversal's sums after its passes (lattice_gather.cu): seed
// 002's overflow of a capped regular depth, summed on the CPU beside the GPU and added to them as
// integers; and single precision's values, made on the device and brought back.
#include <array>
#include <future>

#include "twobody/detail/cuda/lattice_tiles.hpp"
#include "twobody/detail/engine/lattice_bins.hpp"
#include "twobody/detail/engine/lattice_plan.hpp"

namespace twobody::cuda {

// The sources of `r` beyond its capped depth (r.spill, on the plan's `axis` bins) summed by the
// CPU's traversal (cpu::lattice_sums) on a thread of their own, from now on: beside the padded
// bins' upload and the gather. No progress and no clock there (the GPU's passes keep those).
std::future<cpu::LatticeSums> start_cpu_overflow(const LatticePlan& plan, const RegularBins& r,
                                                 const std::array<lattice::AxisBins, 3>& axis);

// `extra` (the CPU's sums of `slots` map slots, and its mask) added to the device's `sums` (64-bit
// integers, or 128-bit as FixedSum) and `mask`: the bits of one traversal over every source.
// Returns once done.
void add_cpu_overflow(const cpu::LatticeSums& extra, void* sums, unsigned char* mask, unsigned long long slots);

// Single: the device's 64-bit sums of `slots` map slots (`comps` a node) rounded to float32 values
// on the device as the host rounds them (SumGrid::value, then float32; nodes `excluded` marks are
// 0), and brought back into `out` as doubles.
void single_values_back(const long long* sums, const unsigned char* excluded, unsigned long long slots, int comps,
                        int exponent, double* out);

}  // namespace twobody::cuda
