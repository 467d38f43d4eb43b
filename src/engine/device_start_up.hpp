#pragma once
// The CUDA backend's start-up without its warm-up runs (twobody::start_up_device): the default
// device's context and memory pool, and the pinned buffers of large copies. Nothing without CUDA
// or a device; the CUDA runtime's errors are thrown (the caller swallows them).

namespace twobody {

void start_up_cuda_device();

}  // namespace twobody
