#include "twobody/cuda/run_on_device.cuh"

namespace twobody::cuda {
template Result run_on_device(const Euclidean<4>&, const Plan&);
template Result run_on_device(const Euclidean<5>&, const Plan&);
template Result run_on_device(const Euclidean<6>&, const Plan&);
template Result run_on_device(const Euclidean<7>&, const Plan&);
template Result run_on_device(const Euclidean<8>&, const Plan&);
}  // namespace twobody::cuda
