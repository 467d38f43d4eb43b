#pragma once
// The CUDA backend's start-up without its warm-up runs (twobody::start_up_device): the default
// device's context and memory pool, and the pinned buffers of large copies. Nothing without CUDA
// or a device; the CUDA runtime's errors are thrown (the caller swallows them).

namespace twobody {

void start_up_cuda_device();

// Whether this process has made a CUDA backend (and so started the driver): "auto" weighs a GPU's
// start-up only before it (auto_choice.hpp). False without CUDA.
bool cuda_backend_made();

}  // namespace twobody
