#pragma once
// The CUDA backend's start-up without its warm-up runs (twobody::start_up_device): the default
// device's context and memory pool, and the pinned buffers of large copies. Nothing without CUDA
// or a device; the CUDA runtime's errors are thrown (the caller swallows them).

namespace twobody {

void start_up_cuda_device();

// Whether a GPU's start-up still lies ahead of this process: CUDA is built and nothing has yet
// tried to make a CUDA backend (which starts the driver, or finds no device). "auto" weighs the
// start-up only then (auto_choice.hpp). The CLI's warm-up thread tries at once.
bool device_start_up_ahead();

}  // namespace twobody
