#pragma once
// The hybrid backend's work queue (HEGJoin, seed 004 §4.4.1): units of work ordered heaviest
// first, one index at each end. The GPU workers take from the heavy end, the CPU team from the
// light end, each a run of consecutive units (a band) holding about the work it asks for; the
// queue is done when the two indices meet, so every unit is taken exactly once.
#include <algorithm>
#include <cstddef>
#include <mutex>
#include <vector>

namespace twobody {

class HybridQueue {
 public:
  enum class End { Heavy, Light };
  struct Take {
    std::size_t first = 0, last = 0;  // units [first, last)
    double work = 0;
    bool empty() const { return first == last; }
  };

  // Each unit's estimated work, in queue order (heaviest first).
  explicit HybridQueue(const std::vector<double>& work) : prefix_(work.size() + 1, 0.0), back_(work.size()) {
    for (std::size_t u = 0; u < work.size(); ++u) prefix_[u + 1] = prefix_[u] + std::max(0.0, work[u]);
  }

  // Units from `end` until their work reaches min(target, cap × the work left), at least
  // `min_units` of them (or what is left); empty once the ends have met.
  Take take(End end, double target, double cap = 1.0, std::size_t min_units = 1) {
    min_units = std::max<std::size_t>(min_units, 1);
    std::lock_guard<std::mutex> lock(mutex_);
    Take t;
    if (front_ >= back_) {
      t.first = t.last = back_;
      return t;
    }
    const double want = std::min(target, cap * (prefix_[back_] - prefix_[front_]));
    const auto begin = prefix_.begin();
    if (end == End::Heavy) {
      // The first `last` with work(front, last) >= want.
      auto at = std::lower_bound(begin + static_cast<std::ptrdiff_t>(front_) + 1,
                                 begin + static_cast<std::ptrdiff_t>(back_) + 1, prefix_[front_] + want);
      const std::size_t last = std::min(back_, static_cast<std::size_t>(at - begin));
      t = {front_, std::max(last, std::min(back_, front_ + min_units)), 0.0};
      front_ = t.last;
    } else {
      // The last `first` with work(first, back) >= want.
      auto at = std::upper_bound(begin + static_cast<std::ptrdiff_t>(front_), begin + static_cast<std::ptrdiff_t>(back_),
                                 prefix_[back_] - want);
      const std::size_t first = at == begin + static_cast<std::ptrdiff_t>(front_) ? front_ : static_cast<std::size_t>(at - begin) - 1;
      t = {std::min(first, back_ - std::min(back_ - front_, min_units)), back_, 0.0};
      back_ = t.first;
    }
    t.work = prefix_[t.last] - prefix_[t.first];
    return t;
  }

  std::size_t units() const { return prefix_.size() - 1; }
  double total() const { return prefix_.back(); }
  double work(std::size_t first, std::size_t last) const { return prefix_[last] - prefix_[first]; }

 private:
  std::mutex mutex_;
  std::vector<double> prefix_;  // prefix_[u]: the work of units [0, u)
  std::size_t front_ = 0, back_ = 0;
};

}  // namespace twobody
