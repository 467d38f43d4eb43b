#include "twobody/detail/cuda/run_on_device.cuh"

namespace twobody::cuda {
template Result run_binned2d_on_device<Binning2D::Kind::RpPi>(const Plan&);
}  // namespace twobody::cuda
