#pragma once
// The work items of one run shared by several devices of a process, each running the whole plan
// on its own copy of the sets (upload and cell index made once a device, as on one device). The
// kernels' items (grid units, anchor chunks, tiles: whatever the agent takes from its work-item
// counter) are cut into `ranges` contiguous ranges that the devices take one at a time, so a
// faster device takes more; each range is one launch, its outputs added on the device, and the
// devices' results added on the host (counts, and sums on the run's exact-sum grids: the same
// bits as one device). Exactly once: only runs whose item space is the first claimant's (its
// `signature`: agent, item count, layout) take ranges; a run of another item space (another
// device model may choose another agent) takes none, and leaves the ranges to the others.
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <optional>
#include <utility>

namespace twobody {

class WorkShare {
 public:
  explicit WorkShare(int ranges) : ranges_(ranges < 1 ? 1 : ranges) {}

  // The next range [begin, end) of `items`, or none: every range taken, or another item space.
  std::optional<std::pair<std::uint64_t, std::uint64_t>> next(std::uint64_t signature, std::uint64_t items) {
    std::lock_guard<std::mutex> lock(m_);
    if (!claimed_) {
      claimed_ = true;
      signature_ = signature;
      items_ = items;
    }
    if (signature != signature_ || items != items_ || next_ >= ranges_) return std::nullopt;
    ++by_thread_[std::this_thread::get_id()];
    const std::uint64_t k = static_cast<std::uint64_t>(next_++), R = static_cast<std::uint64_t>(ranges_);
    return std::pair<std::uint64_t, std::uint64_t>{items * k / R, items * (k + 1) / R};
  }
  // Ranges taken so far (of ranges()).
  int taken() const {
    std::lock_guard<std::mutex> lock(m_);
    return next_;
  }
  int ranges() const { return ranges_; }
  // Ranges taken by the host thread `t` (a device's runs take their ranges on its thread).
  int taken_by(std::thread::id t) const {
    std::lock_guard<std::mutex> lock(m_);
    const auto it = by_thread_.find(t);
    return it == by_thread_.end() ? 0 : it->second;
  }

 private:
  mutable std::mutex m_;
  const int ranges_;
  bool claimed_ = false;
  std::uint64_t signature_ = 0, items_ = 0;
  int next_ = 0;
  std::map<std::thread::id, int> by_thread_;
};

}  // namespace twobody
