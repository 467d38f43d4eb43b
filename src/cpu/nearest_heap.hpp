#pragma once
// A query's k best partners as a max-heap of (key, partner index): the lists' order, equal keys
// to the smaller index. The brute force (run_vectors.cpp) and the EGO trees (ego_knn.cpp) keep
// their lists with it, so both give the same lists.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "twobody/detail/cpu/vector_rows.hpp"
#include "twobody/result.hpp"

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

// Partners u < n with keys[u] and index index_of(u) offered to the list in turn, `skip` (a self
// k-NN's query) left out. Once the list is full a key above its k-th cannot enter (the order puts
// it after every entry), so it is passed over before its index is looked up: most keys are.
template <class IndexOf>
void keep_nearest_of(std::vector<NearEntry>& heap, std::size_t k, const double* keys, std::size_t n, IndexOf index_of,
                     std::uint64_t skip) {
  double kth = heap.size() == k ? heap.front().first : std::numeric_limits<double>::infinity();
  for (std::size_t u = 0; u < n; ++u) {
    if (keys[u] > kth) continue;
    const std::uint64_t j = index_of(u);
    if (j == skip) continue;
    keep_nearest(heap, k, {keys[u], j});
    if (heap.size() == k) kth = heap.front().first;
  }
}

// The list, nearest first, as query i's row of `out` (its keys, partners and natural values); the
// heap is left sorted.
inline void put_nearest(std::vector<NearEntry>& heap, std::size_t k, Metric m, std::size_t i, NearestLists& out) {
  std::sort_heap(heap.begin(), heap.end());
  for (std::size_t q = 0; q < k; ++q) {
    out.key[i * k + q] = heap[q].first;
    out.index[i * k + q] = heap[q].second;
    out.value[i * k + q] = natural_of_vector_key(m, heap[q].first);
  }
}

// A brute force's blocks of queries: at most `tile` rows, and at least one block a thread (a band
// of a hybrid run may hold a few rows only, against every partner).
inline std::size_t query_tile(std::size_t na, int threads, std::size_t tile) {
  const std::size_t per_thread = (na + static_cast<std::size_t>(threads) - 1) / static_cast<std::size_t>(threads);
  return std::clamp<std::size_t>(per_thread, std::min<std::size_t>(16, tile), tile);
}

// The k-NN result of `na` queries, its lists to be filled (put_nearest).
inline Result nearest_result(std::size_t na, int k) {
  Result r;
  r.output = OutputKind::Nearest;
  r.nearest.k = k;
  const std::size_t n = na * static_cast<std::size_t>(k);
  r.nearest.index.resize(n);
  r.nearest.key.resize(n);
  r.nearest.value.resize(n);
  return r;
}

}  // namespace twobody::cpu
