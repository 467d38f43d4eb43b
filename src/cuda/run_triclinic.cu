#include "twobody/detail/cuda/run_on_device.cuh"

namespace twobody::cuda {
template Result run_on_device(const PeriodicTriclinic&, const Plan&);
}  // namespace twobody::cuda
