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
#include <exception>
#include <functional>
#include <type_traits>
#include <utility>
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

// A unit of work: anchors [a0, a1) against partners [b0, b1); `triangle` (auto traversal, a block
// against itself) keeps partners j > i only. Brute-force tiles and grid cell pairs are both lists
// of these, so one executor serves every CPU traversal.
struct BlockPair {
  std::size_t a0 = 0, a1 = 0, b0 = 0, b1 = 0;
  bool triangle = false;
};

// The partners of anchor i in a block: [b0, b1), or j > i only on a triangle. A grid may narrow
// this per anchor (a window along the last axis, grid_index.hpp).
struct WholeBlock {
  std::pair<std::size_t, std::size_t> operator()(const BlockPair& bp, std::size_t i) const {
    return {bp.triangle ? std::max(i + 1, bp.b0) : bp.b0, bp.b1};
  }
};

// The float64 rows: every pair's key in float64, a whole partner row at a time in a vectorised
// loop, handed to the sink (any pair function, any output).
template <int D, class PairFunction, class Sink>
class KeyRows {
 public:
  KeyRows(const PairFunction& f, const SoaView<D>& A, const SoaView<D>& B, std::size_t max_row, Sink& sink)
      : f_(f), A_(A), B_(B), keys_(std::max<std::size_t>(max_row, 1)), sink_(sink) {}
  void operator()(std::size_t i, std::size_t j0, std::size_t j1) {
    double a[D > 0 ? D : 1];
    for (int d = 0; d < D; ++d) a[d] = A_.x[d][i];
    key_row<D, PairFunction>(f_, a, B_, j0, j1, keys_.data());
    sink_.consume(i, j0, keys_.data(), j1 - j0, [this](double k) { return f_.natural_of(k); });
  }

 private:
  const PairFunction& f_;
  const SoaView<D>& A_;
  const SoaView<D>& B_;
  std::vector<double> keys_;
  Sink& sink_;
};

// Whether a row evaluator takes whole blocks (rows.block(bp)), or the block with each anchor's
// range (rows(i, j0, j1, bp)).
template <class Rows, class Block>
concept TakesWholeBlocks = requires(Rows& rows, const Block& bp) { rows.block(bp); };
template <class Rows, class Block>
concept TakesTheBlock = requires(Rows& rows, const Block& bp, std::size_t i) { rows(i, i, i, bp); };

// One block by the evaluator: whole, or anchor by anchor over its partners. A function template,
// not a generic lambda: nvcc's front end (this header reaches it through extend/run_custom.hpp)
// compiles a discarded `if constexpr` branch inside a generic lambda.
template <class Rows, class Block, class PartnersOf>
void run_one_block(Rows& rows, const Block& bp, const PartnersOf& partners_of) {
  if constexpr (TakesWholeBlocks<Rows, Block>) {
    // An evaluator of whole items (the EGO join's leaf pairs) chooses its anchors itself.
    rows.block(bp);
  } else {
    for (std::size_t i = bp.a0; i < bp.a1; ++i) {
      const auto [js, je] = partners_of(bp, i);
      if (js >= je) continue;
      // Rows that use the block (its periodic image) take it; the others see the range only.
      if constexpr (TakesTheBlock<Rows, Block>) rows(i, js, je, bp);
      else rows(i, js, je);
    }
  }
}

// Runs the blocks item_of(0 .. n_items-1) (or those each item makes, item_of.for_each(w, fn)) over
// OpenMP threads (dynamic schedule), one sink per
// thread, made by make_sink(), and one row evaluator per thread, make_rows(sink), called as
// rows(i, j0, j1) for each anchor's partners (partners_of(block, i)), or rows.block(item) once per
// item when the evaluator takes whole items; returns the sinks so the caller merges them in
// thread order.
template <class ItemOf, class MakeSink, class MakeRows, class PartnersOf = WholeBlock>
auto traverse_blocks(std::size_t n_items, ItemOf item_of, const TraversalShape& shape, MakeSink make_sink,
                     MakeRows make_rows, PartnersOf partners_of = {}) -> std::vector<decltype(make_sink())> {
  using Sink = decltype(make_sink());
  std::vector<Sink> sinks;
  sinks.reserve(shape.threads);
  for (int t = 0; t < shape.threads; ++t) sinks.push_back(make_sink());
  std::atomic<std::size_t> done{0};
  std::atomic<bool> stop{false};
  // The thread that completes every 64th item reports progress, one at a time (the flag): with a
  // dynamic schedule no fixed thread is sure to complete any of them.
  std::atomic_flag reporting = ATOMIC_FLAG_INIT;
  std::exception_ptr cancelled;  // written under `reporting`, read after the region

#pragma omp parallel num_threads(shape.threads)
  {
    Sink& sink = sinks[omp_get_thread_num()];
    auto rows = make_rows(sink);
    const auto run_block = [&](const auto& bp) { run_one_block(rows, bp, partners_of); };
#pragma omp for schedule(dynamic, 1)
    for (std::size_t w = 0; w < n_items; ++w) {
      if (stop.load(std::memory_order_relaxed)) continue;
      // An item is a block, or (item_of.for_each) the blocks it makes as it goes: a grid's cell.
      if constexpr (requires { item_of.for_each(w, run_block); }) item_of.for_each(w, run_block);
      else run_block(item_of(w));
      if constexpr (requires { sink.overflow(); }) {
        if (sink.overflow()) stop.store(true, std::memory_order_relaxed);
      }
      const std::size_t d = done.fetch_add(1, std::memory_order_relaxed) + 1;
      if (shape.progress && *shape.progress && (d & 63) == 0 && !reporting.test_and_set(std::memory_order_acquire)) {
        // A progress callback that throws cancels the run (the Python module's Ctrl-C): no
        // exception may leave a parallel region, so every thread stops at its next item and the
        // exception is thrown again after the region. Once stopped, nobody calls it again.
        if (!stop.load(std::memory_order_relaxed)) {
          try {
            (*shape.progress)(static_cast<double>(d) / static_cast<double>(n_items));
          } catch (...) {
            cancelled = std::current_exception();
            stop.store(true, std::memory_order_relaxed);
          }
        }
        reporting.clear(std::memory_order_release);
      }
    }
    if constexpr (requires { rows.finish(); }) rows.finish();
  }
  if (cancelled) std::rethrow_exception(cancelled);
  return sinks;
}

// Brute force: T x T tiles of the pair space; auto keeps tile pairs I <= J (the others are empty).
template <class MakeSink, class MakeRows>
auto traverse(std::size_t na, std::size_t nb, const TraversalShape& shape, MakeSink make_sink, MakeRows make_rows)
    -> std::vector<decltype(make_sink())> {
  const std::size_t T = shape.tile;
  const std::size_t ta = (na + T - 1) / T, tb = (nb + T - 1) / T;
  const bool is_auto = shape.is_auto;
  const auto item_of = [&](std::size_t w) {
    const std::size_t I = w / tb, J = w % tb;
    BlockPair bp;
    if (is_auto && J < I) return bp;  // below the diagonal: empty
    bp.a0 = I * T;
    bp.a1 = std::min(na, bp.a0 + T);
    bp.b0 = J * T;
    bp.b1 = std::min(nb, bp.b0 + T);
    bp.triangle = is_auto && I == J;
    return bp;
  };
  return traverse_blocks(ta * tb, item_of, shape, make_sink, make_rows);
}

}  // namespace twobody::cpu
