#pragma once
// The CUDA driver's start-up (cuInit) grows with the devices it is shown: on a 4 × H200 host it took
// 1.01 s with all four visible and 0.28 s with one (bench/RESULTS.md, twelfth session), most of a
// small job's process time. A command that runs on one device, the default (no --devices, not split
// over MPI ranks), shows the driver that device alone before anything starts CUDA.
#include <optional>
#include <string>

namespace twobody::cli {

// What CUDA_VISIBLE_DEVICES should become for a run on the default device (the runtime's device 0):
// the first entry of `current` (an index, a GPU-/MIG- UUID), "0" when it is unset; nothing when it
// already names one device or none (an empty list, or a first entry that hides every device).
std::optional<std::string> default_device_visibility(const char* current);

}  // namespace twobody::cli
