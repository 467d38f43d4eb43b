#pragma once
// Which device a run goes to (RunOptions::devices) and the backend that runs it there. One place
// decides it for run(), explain(), runs_on() and the device distribution (device_distribution.hpp).
#include <memory>
#include <string>
#include <vector>

#include "twobody/detail/engine/backend.hpp"

namespace twobody {

// TWOBODY_SIMULATED_DEVICES=N (1 to 64): N simulated devices, each the CPU backend on one thread,
// so that the split over devices (its queue, decomposition and merge) is tested without a GPU. 0
// when unset. Error(Config) for any other value.
int simulated_devices();

// The devices a run may name: the simulated ones when set, else CUDA's.
int device_count();

// Error(Config) when `opt.devices` names a device beyond device_count() (or below 0), or asks the
// cpu backend for devices (simulated devices aside).
void check_devices(const RunOptions& opt);

// The backend `name` (auto | cpu | cuda) names, on `device` (-1: as use_cuda_device chose; a
// simulated device: the CPU backend).
std::unique_ptr<Backend> select_backend(const std::string& name, int device = -1);

// The device a run that is not split goes to: the first of RunOptions::devices, or -1.
inline int first_device(const RunOptions& opt) { return opt.devices.empty() ? -1 : opt.devices.front(); }

}  // namespace twobody
