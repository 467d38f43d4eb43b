// The CUDA backend: device discovery and the dispatch of (metric, dimension) to the per-metric
// translation units (run_*.cu).
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "twobody/cuda/cuda_check.hpp"
#include "twobody/cuda/device_info.hpp"
#include "twobody/cuda/device_buffer.hpp"
#include "twobody/cuda/kernel_shape.hpp"
#include "twobody/backend.hpp"
#include "twobody/engine.hpp"
#include "twobody/generate.hpp"
#include "twobody/metric_dispatch.hpp"

namespace twobody {
namespace cuda {


// Per device, read once: cudaGetDeviceProperties costs milliseconds (it reads every attribute),
// which a run of a few milliseconds should not pay each time.
DeviceInfo device_info() {
  int dev = 0;
  TWOBODY_CUDA_CHECK(cudaGetDevice(&dev));
  static std::mutex mutex;
  static std::map<int, DeviceInfo> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(dev);
  if (it == known.end()) {
    cudaDeviceProp prop{};
    TWOBODY_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    it = known
             .emplace(dev, DeviceInfo{prop.multiProcessorCount, prop.sharedMemPerBlockOptin, prop.name,
                                      prop.sharedMemPerMultiprocessor, prop.maxThreadsPerMultiProcessor,
                                      prop.maxBlocksPerMultiProcessor, prop.reservedSharedMemPerBlock})
             .first;
  }
  return it->second;
}

template <class F>
Result run_on_device(const F& f, const Plan& plan);  // instantiated in run_*.cu

namespace {

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(std::string name) : device_(std::move(name)) {}
  std::string name() const override { return "cuda"; }
  std::string device() const override { return device_; }
  std::string describe(const Plan& plan) const override {
    const std::string traversal =
        plan.path == "brute" ? "all pairs (requested)"
        : plan.stat->metric == Metric::Angular || plan.stat->output == OutputKind::Matrix
            ? "all pairs"
            : plan.path == "grid" ? "the cell grid (requested)"
                                  : "the cell grid when it evaluates under a quarter of all pairs (counted on the device "
                                    "after the cell sort; the run's plan says which ran)";
    return "cuda traversal: " + traversal + "\n" +
           "cuda path: float32 proxies with guard bands, pairs near an edge settled in float64; persistent grid of " +
           std::to_string(kThreads) + "-thread blocks claiming tiles of " + std::to_string(kAnchors) + " anchors x " +
           std::to_string(kChunk) + " partners; " +
           (plan.stat->output == OutputKind::Histogram
                ? "float-bits bin table and per-lane sub-histograms in shared memory"
            : plan.stat->output == OutputKind::Matrix ? "float64 matrix tiles copied out in row chunks"
            : plan.stat->output == OutputKind::PerPoint
                ? "range bands in registers; per point: the anchors' counts in registers, added to a global 64-bit "
                  "array once per tile or warp unit, the partners' by atomics (one per partner per warp)"
            : plan.stat->output == OutputKind::PairList
                ? "range bands in registers; pairs written warp-wide into pages of an output pool (one atomic per "
                  "page), drained to the host and the kernel resumed over the unfinished units when it is full"
                : "range bands in registers");
  }
  void warm_up() override {
    TWOBODY_CUDA_CHECK(cudaFree(nullptr));  // creates the primary context
    retain_pool_memory();
    // Pool memory mapped now, not inside the first run (the pool keeps it: retain_pool_memory).
    void* p = nullptr;
    TWOBODY_CUDA_CHECK(cudaMallocAsync(&p, std::size_t(256) << 20, cudaStreamLegacy));
    TWOBODY_CUDA_CHECK(cudaFreeAsync(p, cudaStreamLegacy));
    TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
    device_info();
    // Kernels load at their first launch, milliseconds each in a fresh process: a tiny run of the
    // grid path, in a periodic box and in open space, loads the cell index, CUB's sorts and scans
    // and the usual grid kernels while the command is still reading its files.
    const PointSet points = generate_uniform_box(4096, 3, 1.0, 1);
    Statistic s;
    s.metric = Metric::Periodic;
    s.box = Box::cube(3, 1.0);
    s.binning = Binning::logarithmic(0.01, 0.2, 20);
    RunOptions o;
    o.backend = "cuda";
    o.path = "grid";
    twobody::run(s, points, nullptr, o);
    s.metric = Metric::Euclidean;
    twobody::run(s, points, nullptr, o);
  }
  // Through the grid kernels (PairOutput's block-wide regions x nbins histograms).
  bool counts_regions() const override { return true; }
  // Through both agents (PairOutput's OutputMode::PerPoint).
  bool per_point() const override { return true; }
  Result run(const Plan& plan) override {
    const auto t0 = std::chrono::steady_clock::now();
    Result r = visit_pair_function(*plan.stat, plan.a->dim(), [&](const auto& f) { return run_on_device(f, plan); });
    // The whole call, teardown included, beside the phases the run reported.
    if (!r.info.plan.empty())
      r.info.plan += "; in all " +
                     std::to_string(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()) +
                     " ms";
    return r;
  }

 private:
  std::string device_;
};

}  // namespace
}  // namespace cuda

namespace {
// use_cuda_device's choice; -1: the thread's current device. Set on every thread that makes a
// backend (the current device is per host thread: the warm-up runs on its own).
std::atomic<int> chosen_device{-1};
}  // namespace

void use_cuda_device(int index) { chosen_device.store(index); }

std::unique_ptr<Backend> make_cuda_backend() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    cudaGetLastError();  // clear the sticky "no device" error
    return nullptr;
  }
  if (const int d = chosen_device.load(); d >= 0) TWOBODY_CUDA_CHECK(cudaSetDevice(d % n));
  return std::make_unique<cuda::CudaBackend>(cuda::device_info().name);
}

}  // namespace twobody
