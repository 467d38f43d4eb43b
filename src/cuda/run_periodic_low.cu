#include "twobody/cuda/run_on_device.cuh"

namespace twobody::cuda {
template Result run_on_device(const PeriodicEuclidean<1>&, const Plan&);
template Result run_on_device(const PeriodicEuclidean<2>&, const Plan&);
template Result run_on_device(const PeriodicEuclidean<3>&, const Plan&);
}  // namespace twobody::cuda
