#include "twobody/cuda/run_on_device.cuh"

namespace twobody::cuda {
template Result run_on_device(const PeriodicEuclidean<4>&, const Plan&);
template Result run_on_device(const PeriodicEuclidean<5>&, const Plan&);
template Result run_on_device(const PeriodicEuclidean<6>&, const Plan&);
template Result run_on_device(const PeriodicEuclidean<7>&, const Plan&);
template Result run_on_device(const PeriodicEuclidean<8>&, const Plan&);
}  // namespace twobody::cuda
