#pragma once
// A float32 array brought back as float64, and a destination's pages made ready (staged_upload.cpp),
// apart from staged_upload.hpp, which every device buffer includes: only the lattice maps call them.
#include <cstddef>

namespace twobody::cuda {

// `count` floats from device `src` into host `dst` as doubles (exactly: every float is a double),
// through the staging's pinned buffers, the host's threads widening one while the copy engine fills
// the other: half the bytes over the bus of a float64 map. Returns once done.
void download_widened(double* dst, const float* src, std::size_t count);

// The pages of `bytes` of fresh host memory at `p` faulted in by the host's threads (a write a
// page), for a large download's destination made ready while the GPU still works.
void fault_in(void* p, std::size_t bytes);

}  // namespace twobody::cuda
