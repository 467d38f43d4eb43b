// The CUDA backend: device discovery and the dispatch of (metric, dimension) to the per-metric
// translation units (run_*.cu).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "twobody/cuda/copies_model.hpp"
#include "twobody/cuda/cuda_check.hpp"
#include "twobody/cuda/device_info.hpp"
#include "twobody/cuda/device_buffer.hpp"
#include "twobody/cuda/kernel_shape.hpp"
#include "twobody/backend.hpp"
#include "twobody/chunked_run.hpp"
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
                                      prop.maxBlocksPerMultiProcessor, prop.reservedSharedMemPerBlock,
                                      static_cast<std::size_t>(prop.l2CacheSize)})
             .first;
  }
  return it->second;
}

template <class F>
Result run_on_device(const F& f, const Plan& plan);  // instantiated in run_*.cu
template <Binning2D::Kind K>
Result run_binned2d_on_device(const Plan& plan);  // instantiated in run_binned2d_*.cu

namespace {

// Points a set may have in one launch: at most 2^31 (32-bit indices in the kernels, with room for
// a tile's end past the last point) and small enough
// that two sets, their float32 copies and a cell index fit in a third of the free device memory
// (about 2·(12 + 8)·D + 40 bytes a point, counted generously). TWOBODY_CUDA_CHUNK_POINTS lowers it
// (the tests run chunked launches on small sets).
std::size_t chunk_points(const Plan& plan) {
  std::size_t chunk = std::size_t(1) << 31;
  std::size_t free_b = 0, total_b = 0;
  TWOBODY_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const std::size_t per_point = 2 * (20 * static_cast<std::size_t>(plan.a->dim()) + 40);
  chunk = std::min(chunk, std::max<std::size_t>(1 << 20, free_b / 3 / per_point));
  if (const char* env = std::getenv("TWOBODY_CUDA_CHUNK_POINTS"))
    chunk = std::min(chunk, static_cast<std::size_t>(std::max(1LL, std::atoll(env))));
  return chunk;
}

// Seed 000's Fig. 15 decision tree, with this device's numbers: the output's size against
// α = 16 bytes (registers) and β = the shared memory a block may use; for type II the input
// against the L2 (the seed's read-only cache test: shared tiles are used either way, the grid
// agent shares partners by shuffles), and the number of private copies by the copies model.
std::string fig15_line(const Plan& plan) {
  const DeviceInfo info = device_info();
  const Statistic& s = *plan.stat;
  const std::size_t nb = plan.edges.nbins > 0 ? static_cast<std::size_t>(plan.edges.nbins) : s.binning.nbins();
  const std::size_t input = (plan.a->size() + (plan.is_auto() ? 0 : plan.b->size())) * plan.a->dim() * sizeof(float);
  const auto kb = [](std::size_t b) { return std::to_string((b + 1023) / 1024) + " KB"; };
  std::string out = "planner (seed 000 Fig. 15; " + std::to_string(info.sms) + " SMs, " + kb(info.smem_optin) +
                    " shared memory a block, " + std::to_string(info.l2_bytes >> 20) + " MB L2): ";
  switch (s.output) {
    case OutputKind::Reduction:
      return out + "output " + std::string(s.weighted ? "16" : "8") +
             " B <= alpha = 16 B: type I, partners in shared tiles, the count in registers";
    case OutputKind::PairList:
    case OutputKind::PerPoint:
    case OutputKind::Matrix:
      return out + "output unknown or quadratic in the points, above beta = " + kb(info.smem_optin) +
             ": type III, the direct output buffer (pages of a global pool)";
    case OutputKind::Histogram: {
      const std::size_t bytes = 8 * nb;
      if (bytes > info.smem_optin)
        return out + "output " + kb(bytes) + " > beta: type III (histogram in global memory)";
      const SmLimits lim = sm_limits(info);
      const auto bytes_at = [&](int h) { return counting_tiles_smem(true, static_cast<int>(nb), h); };
      const int dim = plan.a->dim();
      const int reg_blocks = s.metric == Metric::Euclidean && dim <= 3 ? counting_tiles_histogram_blocks(dim) : 3;
      const CopiesChoice c = choose_copies(static_cast<int>(nb) + 2, lim, kThreads, reg_blocks, bytes_at,
                                           static_cast<double>(plan.a->size()), true,
                                           kCountingTilesCollisionPenalty);
      return out + "output " + kb(bytes) + " between alpha and beta: type II; input " + kb(input) +
             (input <= info.l2_bytes ? " fits" : " exceeds") + " the L2 (read-only path " +
             (input <= info.l2_bytes ? "usable" : "thrashed") + "): shared tiles, shuffles in the grid agent; " +
             std::to_string(c.copies) + " private copies by the copies model (gamma: warp-level copies while they fit)";
    }
  }
  return out;
}

// --explain for 2-D bins: what run_binned2d does.
std::string describe_binned2d(const Plan& plan) {
  const Statistic& s = *plan.stat;
  const Binning2D& b = s.binning2d;
  const std::string nb = std::to_string(b.nbins());
  return std::string("2-D bins: the pairs within the reach ") +
         (b.kind() == Binning2D::Kind::RpPi ? "sqrt(rpmax^2 + pimax^2)" : "smax") + " = " + std::to_string(b.cutoff()) +
         ", found as the range [0, reach) (the float32 proxy's guard band decides only \"certainly beyond\"); every other "
         "pair binned in float64 on the device by " +
         (b.kind() == Binning2D::Kind::RpPi ? "RpPiBins" : "SMuBins") + (b.midpoint_los() ? "Mock" : "") +
         " (edge tables in device memory); " + nb + " flat bins " +
         (s.regions > 0
              ? "and " + std::to_string(s.regions) + " x " + nb +
                    " jackknife region counters, counted by 64-bit atomics in global memory, pair by pair"
              : "in sub-histograms in shared memory where one copy a block (all pairs) or a warp (grid) fits half the "
                "shared memory a block may use, else by 64-bit atomics in global memory, pair by pair (the run's plan "
                "says which)") +
         "; no counting tiles";
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(std::string name) : device_(std::move(name)) {}
  std::string name() const override { return "cuda"; }
  std::string device() const override { return device_; }
  std::string describe(const Plan& plan) const override {
    const Statistic& s = *plan.stat;
    const std::string traversal =
        plan.path == "brute" ? "all pairs (requested)"
        : plan.stat->metric == Metric::Angular || plan.stat->output == OutputKind::Matrix
            ? "all pairs"
            : plan.path == "grid" ? "the cell grid (requested)"
                                  : "the cell grid when it evaluates under a quarter of all pairs (counted on the device "
                                    "after the cell sort; the run's plan says which ran)";
    return fig15_line(plan) + "\n" + "cuda traversal: " + traversal + "\n" +
           "cuda path: float32 proxies with guard bands, pairs near an edge settled in float64; persistent grid of " +
           std::to_string(kThreads) + "-thread blocks claiming tiles of " + std::to_string(kAnchors) + " anchors x " +
           std::to_string(kChunk) + " partners; " +
           (s.binning2d.active() ? describe_binned2d(plan)
            : s.mean_separation
                ? "mean separations: the generic agents alone (no counting tiles), the float-bits bin table in shared "
                  "memory deciding each pair's bin, then its float64 key, whose natural value s and log s are summed in "
                  "double per bin (times w_i w_j when weighted): per block in shared memory when the 2 x " +
                      std::to_string(plan.edges.nbins) +
                      " doubles fit beside the histogram, else by atomics in global memory (the run's plan says which)"
            : plan.stat->output == OutputKind::Histogram
                ? "all pairs, Euclidean, unweighted, equal-width bins: counting tiles (bin from sqrt.approx and a "
                  "rounding add, pairs within a bound of an edge revisited in float64, bin-major private copies); "
                  "otherwise the float-bits bin table and per-lane sub-histograms in shared memory"
            : plan.stat->output == OutputKind::Reduction
                ? "all pairs, Euclidean, unweighted: counting tiles (the sign bit of |a|^2 + |b|^2 - 2a.b - r^2, "
                  "groups with a pair within the cancellation bound revisited in float64) where that bound is "
                  "narrow, the products on the tensor cores (split TF32 MMAs) where their wider bound allows; "
                  "otherwise range bands in registers"
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
  // Through both agents, the pairs of the reach binned in float64 (run_binned2d in run_on_device.cuh).
  bool bins_2d() const override { return true; }
  // Through both agents (PairOutput's Means kernels).
  bool mean_separation() const override { return true; }
  Result run(const Plan& plan) override {
    const auto t0 = std::chrono::steady_clock::now();
    auto run_one = [](const Plan& p) {
      if (p.stat->binning2d.active())
        return p.stat->binning2d.kind() == Binning2D::Kind::RpPi ? run_binned2d_on_device<Binning2D::Kind::RpPi>(p)
                                                                 : run_binned2d_on_device<Binning2D::Kind::SMu>(p);
      return visit_pair_function(*p.stat, p.a->dim(), [&](const auto& f) { return run_on_device(f, p); });
    };
    const std::size_t chunk = chunk_points(plan);
    Result r = plan.a->size() > chunk || plan.b->size() > chunk ? run_in_chunks(plan, chunk, run_one) : run_one(plan);
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
