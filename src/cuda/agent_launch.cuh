#pragma once
// Launching an agent's persistent grid: as many blocks as the multiprocessors hold at this block
// size and shared memory, on a stream of the run's own, with the caller's progress callback fed
// from the work-item counter while the kernel runs. Every agent launches through this.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/device_info.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/engine/work_share.hpp"

namespace twobody::cuda {

// Blocks of `kernel` a multiprocessor holds by its registers (the occupancy API at no shared memory).
template <class Kernel>
int blocks_by_registers(Kernel kernel, int threads) {
  int n = 0;
  TWOBODY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, 0));
  return n;
}

// The shared-memory cap is the kernel's, not the launch's: another host thread's run of the same
// kernel may set another between this one's setting and its launch; so setting, sizing and
// launching go one thread at a time (the launch is asynchronous: microseconds).
inline std::mutex& launch_mutex() {
  static std::mutex m;
  return m;
}

template <class Args>
class AgentLaunch {
 public:
  // `counters`: the kernels' settled-pair count and next work item (two words), and `evaluations`.
  AgentLaunch(Args& args, const Plan& plan, const DeviceInfo& info, unsigned long long* counters,
              unsigned long long* evaluations)
      : args_(args), plan_(plan), info_(info), counters_(counters), evaluations_(evaluations) {
    TWOBODY_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    TWOBODY_CUDA_CHECK(cudaStreamCreateWithFlags(&poll_, cudaStreamNonBlocking));
  }
  AgentLaunch(const AgentLaunch&) = delete;
  AgentLaunch& operator=(const AgentLaunch&) = delete;
  ~AgentLaunch() {
    // On an error the kernel may still run: wait for it before its buffers go back to the pool
    // (which may hand them to another thread's run at once).
    cudaStreamSynchronize(stream_);
    cudaStreamSynchronize(poll_);
    cudaStreamDestroy(stream_);
    cudaStreamDestroy(poll_);
  }

  // Progress: the task counter of a launch. Pair lists launch again over the units that ran out
  // of pages (the first `resumed` tasks) after `begun` units were begun; `units` in all.
  unsigned long long begun = 0, resumed = 0, units = 1;

  // Plan::share: the item space this run's choice gives (agent, items, layout), and the items
  // this run took (the share's ranges; all of them without a share).
  std::uint64_t signature = 0;
  unsigned long long items_taken = 0;

  template <class Kernel, class... Extra>
  void operator()(Kernel kernel, int threads, std::size_t bytes, const char* name, const Extra&... extra) {
    // Uploads and memsets went to the legacy stream, which a non-blocking stream does not wait for.
    // (Not the whole device: another host thread's run may have its kernel in flight on its own
    // stream, and this run's set-up is what should overlap it.)
    TWOBODY_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
    const unsigned long long items = args_.n_items;
    if (!plan_.share) {
      launch_range(kernel, threads, bytes, name, 0, items, true, extra...);
      items_taken = items;
      return;
    }
    // Several devices share the items: a launch a range taken, the outputs adding up on the
    // device; the counters (settled pairs, evaluations) zeroed once.
    bool first = true;
    while (const auto range = plan_.share->next(signature, items)) {
      launch_range(kernel, threads, bytes, name, range->first, range->second, first, extra...);
      items_taken += range->second - range->first;
      first = false;
    }
    args_.n_items = items;
    if (first) {
      TWOBODY_CUDA_CHECK(cudaMemsetAsync(counters_, 0, 2 * sizeof(unsigned long long), stream_));
      TWOBODY_CUDA_CHECK(cudaMemsetAsync(evaluations_, 0, sizeof(unsigned long long), stream_));
      TWOBODY_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
  }

 private:
  // One launch over the items [begin, end): the work-item counter starts at `begin` (the kernels
  // take items from it until `n_items`), the other counters zeroed on the first.
  template <class Kernel, class... Extra>
  void launch_range(Kernel kernel, int threads, std::size_t bytes, const char* name, unsigned long long begin,
                    unsigned long long end, bool first, const Extra&... extra) {
    {
      std::lock_guard<std::mutex> lock(launch_mutex());
      TWOBODY_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
      int per_sm = 0;
      TWOBODY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, bytes));
      const int blocks = std::max(1, per_sm) * info_.sms;
      if (first) {
        TWOBODY_CUDA_CHECK(cudaMemsetAsync(counters_, 0, 2 * sizeof(unsigned long long), stream_));
        TWOBODY_CUDA_CHECK(cudaMemsetAsync(evaluations_, 0, sizeof(unsigned long long), stream_));
      }
      begin_ = begin;
      if (begin != 0 || !first)
        TWOBODY_CUDA_CHECK(cudaMemcpyAsync(counters_ + 1, &begin_, sizeof begin_, cudaMemcpyHostToDevice, stream_));
      args_.n_items = end;
      kernel<<<blocks, threads, bytes, stream_>>>(args_, extra...);
      TWOBODY_CUDA_CHECK_LAUNCH(name);
    }
    if (plan_.progress && !plan_.share) report_progress();
    TWOBODY_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  unsigned long long begin_ = 0;  // the counter's first value, read by the copy in flight

  // While the kernel runs, a second stream reads the work-item counter so the caller's progress
  // callback sees how far the persistent grid has come.
  void report_progress() {
    unsigned long long done = 0;
    cudaError_t q;
    // Polls from 0.1 ms, doubling to every 50 ms: a short kernel is not held up by the wait (a
    // fixed 50 ms made every small GPU call from Python, which always passes a callback for
    // Ctrl-C, cost 50 ms), a long one is polled 20 times a second.
    auto wait = std::chrono::microseconds(100);
    while ((q = cudaStreamQuery(stream_)) == cudaErrorNotReady) {
      std::this_thread::sleep_for(wait);
      wait = std::min(2 * wait, std::chrono::microseconds(50000));
      TWOBODY_CUDA_CHECK(cudaMemcpyAsync(&done, args_.next_item, sizeof done, cudaMemcpyDeviceToHost, poll_));
      TWOBODY_CUDA_CHECK(cudaStreamSynchronize(poll_));
      const unsigned long long now = begun + (done > resumed ? done - resumed : 0);
      try {
        plan_.progress(std::min(1.0, static_cast<double>(now) / static_cast<double>(units)));
      } catch (...) {
        stop_grid();
        throw;
      }
    }
    if (q != cudaSuccess) TWOBODY_CUDA_CHECK(q);
  }

  // The caller stopped the run (its callback threw: Ctrl-C in Python): the work-item counter is
  // set past every item, so each block's next claim finds none and the persistent grid ends
  // after the items in flight (milliseconds) instead of running to the end; the exception then
  // unwinds the run. The write is repeated until read back, in case a block's atomicAdd of the
  // old value landed after it. (Errors are not checked here: an exception is in flight.)
  void stop_grid() {
    const unsigned long long stop = 1ull << 62;
    for (int attempt = 0; attempt < 100; ++attempt) {
      unsigned long long seen = 0;
      cudaMemcpyAsync(args_.next_item, &stop, sizeof stop, cudaMemcpyHostToDevice, poll_);
      cudaMemcpyAsync(&seen, args_.next_item, sizeof seen, cudaMemcpyDeviceToHost, poll_);
      cudaStreamSynchronize(poll_);
      if (seen >= stop) break;
    }
    cudaStreamSynchronize(stream_);
  }

  Args& args_;
  const Plan& plan_;
  const DeviceInfo& info_;
  unsigned long long* counters_;
  unsigned long long* evaluations_;
  cudaStream_t stream_ = nullptr, poll_ = nullptr;
};

}  // namespace twobody::cuda
