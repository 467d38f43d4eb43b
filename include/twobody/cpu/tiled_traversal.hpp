#pragma once
// The CPU traversal: the pair space is cut into tiles of T anchor points by T partner points
// (seed 001's hierarchical decomposition, one level), tiles are handed to OpenMP threads
// dynamically, and within a tile each anchor computes the keys of a whole partner row into a
// buffer in a loop the compiler vectorises, before the sink bins them. Auto traversal visits tile
// pairs I <= J and, on the diagonal tile, partners j > i only: each unordered pair exactly once.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <vector>

#include "twobody/points.hpp"

namespace twobody::cpu {

template <int D>
struct SoaView {
  const double* x[D > 0 ? D : 1];
  std::size_t n = 0;

  explicit SoaView(const PointSet& p) : n(p.size()) {
    for (int d = 0; d < D; ++d) x[d] = p.coord(d).data();
  }
};

struct TraversalShape {
  bool is_auto = true;
  int threads = 1;
  std::size_t tile = 1024;
  const std::function<void(double)>* progress = nullptr;
};

// Pick a tile so every thread gets several tiles even for small inputs, and a partner tile of D
// coordinates stays in L1/L2 for large ones.
inline std::size_t choose_tile(std::size_t n, int threads) {
  std::size_t t = 1024;
  while (t > 64 && n / t < static_cast<std::size_t>(4 * threads)) t /= 2;
  return t;
}

template <int D, class PairFunction>
void key_row(const PairFunction& f, const double (&a)[D > 0 ? D : 1], const SoaView<D>& B,
             std::size_t j0, std::size_t j1, double* keys) {
  const std::size_t n = j1 - j0;
#pragma omp simd
  for (std::size_t t = 0; t < n; ++t) {
    double b[D > 0 ? D : 1];
    for (int d = 0; d < D; ++d) b[d] = B.x[d][j0 + t];
    keys[t] = f.key(a, b);
  }
}

// Runs the traversal with one sink per thread, made by make_sink(); returns the sinks so the
// caller merges them (and can inspect overflow) in thread order, deterministically.
template <int D, class PairFunction, class MakeSink>
auto traverse(const PairFunction& f, const SoaView<D>& A, const SoaView<D>& B,
              const TraversalShape& shape, MakeSink make_sink)
    -> std::vector<decltype(make_sink())> {
  using Sink = decltype(make_sink());
  const std::size_t T = shape.tile;
  const std::size_t ta = (A.n + T - 1) / T, tb = (B.n + T - 1) / T;
  // Work items: tile pairs, enumerated row by row; auto keeps I <= J.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> items;
  items.reserve(shape.is_auto ? ta * (ta + 1) / 2 : ta * tb);
  for (std::size_t I = 0; I < ta; ++I)
    for (std::size_t J = shape.is_auto ? I : 0; J < tb; ++J)
      items.emplace_back(static_cast<std::uint32_t>(I), static_cast<std::uint32_t>(J));

  const auto natural = [&f](double k) { return f.natural_of(k); };
  std::vector<Sink> sinks;
  sinks.reserve(shape.threads);
  for (int t = 0; t < shape.threads; ++t) sinks.push_back(make_sink());
  std::atomic<std::size_t> done{0};
  std::atomic<bool> stop{false};

#pragma omp parallel num_threads(shape.threads)
  {
    Sink& sink = sinks[omp_get_thread_num()];
    std::vector<double> keys(T);
#pragma omp for schedule(dynamic, 1)
    for (std::size_t w = 0; w < items.size(); ++w) {
      if (stop.load(std::memory_order_relaxed)) continue;
      const std::size_t I = items[w].first, J = items[w].second;
      const std::size_t i0 = I * T, i1 = std::min(A.n, i0 + T);
      const std::size_t j0 = J * T, j1 = std::min(B.n, j0 + T);
      for (std::size_t i = i0; i < i1; ++i) {
        double a[D > 0 ? D : 1];
        for (int d = 0; d < D; ++d) a[d] = A.x[d][i];
        const std::size_t js = (shape.is_auto && I == J) ? i + 1 : j0;
        if (js >= j1) continue;
        key_row<D, PairFunction>(f, a, B, js, j1, keys.data());
        sink.consume(i, js, keys.data(), j1 - js, natural);
      }
      if constexpr (requires { sink.overflow(); }) {
        if (sink.overflow()) stop.store(true, std::memory_order_relaxed);
      }
      const std::size_t d = done.fetch_add(1, std::memory_order_relaxed) + 1;
      if (shape.progress && *shape.progress && omp_get_thread_num() == 0)
        (*shape.progress)(static_cast<double>(d) / static_cast<double>(items.size()));
    }
  }
  return sinks;
}

}  // namespace twobody::cpu
