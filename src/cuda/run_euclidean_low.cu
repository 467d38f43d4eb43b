#include "twobody/cuda/run_on_device.cuh"

namespace twobody::cuda {
template Result run_on_device(const Euclidean<1>&, const Plan&);
template Result run_on_device(const Euclidean<2>&, const Plan&);
template Result run_on_device(const Euclidean<3>&, const Plan&);

int counting_tiles_histogram_blocks(int dim) {
  const auto blocks = [](auto kernel) {
    int n = 0;
    TWOBODY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, kThreads, 0));
    return std::max(1, n);
  };
  switch (dim) {
    case 1: return blocks(counting_tiles_kernel<1, OutputMode::Histogram, false, true, FastPath<Euclidean<1>>::Proxy, Euclidean<1>>);
    case 2: return blocks(counting_tiles_kernel<2, OutputMode::Histogram, false, true, FastPath<Euclidean<2>>::Proxy, Euclidean<2>>);
    default: return blocks(counting_tiles_kernel<3, OutputMode::Histogram, false, true, FastPath<Euclidean<3>>::Proxy, Euclidean<3>>);
  }
}
}  // namespace twobody::cuda
