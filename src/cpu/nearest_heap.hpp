#pragma once
// A query's k best partners as a max-heap of (key, partner index): the lists' order, equal keys
// to the smaller index. The brute force (run_vectors.cpp) and the EGO trees (ego_knn.cpp) keep
// their lists with it, so both give the same lists.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace twobody::cpu {

using NearEntry = std::pair<double, std::uint64_t>;

inline void keep_nearest(std::vector<NearEntry>& heap, std::size_t k, const NearEntry& e) {
  if (heap.size() < k) {
    heap.push_back(e);
    std::push_heap(heap.begin(), heap.end());
  } else if (e < heap.front()) {
    std::pop_heap(heap.begin(), heap.end());
    heap.back() = e;
    std::push_heap(heap.begin(), heap.end());
  }
}

}  // namespace twobody::cpu
