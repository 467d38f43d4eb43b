#pragma once
// Progress over a parallel loop's blocks, from inside its OpenMP region: thread 0 reports the
// fraction done; a callback that throws (a cancel: the Python module's Ctrl-C) stops the loop, since
// no exception may leave a parallel region, and the exception is thrown again after it (rethrow).
// Every other thread stops at its next block (stopped()). Once stopped, nobody reports again.
#include <omp.h>

#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>

namespace twobody::cpu {

class BlockProgress {
 public:
  // `total` blocks, of which `done` count as done already (a sample run before the loop).
  BlockProgress(const std::function<void(double)>& report, std::size_t total, std::size_t done = 0)
      : report_(report), total_(static_cast<double>(total)), done_(done) {}
  bool stopped() const { return stop_.load(std::memory_order_relaxed); }
  // After each block, on the thread that ran it.
  void block_done() {
    const std::size_t d = done_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (!report_ || omp_get_thread_num() != 0 || stopped()) return;
    try {
      report_(static_cast<double>(d) / total_);
    } catch (...) {
      cancelled_ = std::current_exception();  // (thread 0's alone)
      stop_.store(true, std::memory_order_relaxed);
    }
  }
  // After the region.
  void rethrow() const {
    if (cancelled_) std::rethrow_exception(cancelled_);
  }

 private:
  const std::function<void(double)>& report_;
  double total_;
  std::atomic<std::size_t> done_;
  std::atomic<bool> stop_{false};
  std::exception_ptr cancelled_;
};

}  // namespace twobody::cpu
