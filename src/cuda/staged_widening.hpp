#pragma once
// A float32 array brought back as float64 (staged_upload.cpp), apart from staged_upload.hpp, which
// every device buffer includes: only the lattice maps' single-precision values call it.
#include <cstddef>

namespace twobody::cuda {

// `count` floats from device `src` into host `dst` as doubles (exactly: every float is a double),
// through the staging's pinned buffers, the host's threads widening one while the copy engine fills
// the other: half the bytes over the bus of a float64 map. Returns once done.
void download_widened(double* dst, const float* src, std::size_t count);

}  // namespace twobody::cuda
