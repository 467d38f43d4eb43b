#pragma once
// Runs a validated plan with a concrete pair function on the CPU: picks the sink for the output
// kind, traverses, merges. Shared by the built-in metrics and by user pair functions.
#include <algorithm>
#include <string>

#include "twobody/backend.hpp"
#include "twobody/cpu/output_sinks.hpp"
#include "twobody/cpu/tiled_traversal.hpp"
#include "twobody/error.hpp"

namespace twobody::cpu {

template <int D, class PairFunction>
Result run_plan(const PairFunction& f, const Plan& plan) {
  const Statistic& s = *plan.stat;
  const SoaView<D> A(*plan.a), B(*plan.b);
  TraversalShape shape;
  shape.is_auto = plan.is_auto();
  shape.threads = std::max(1, plan.threads);
  shape.tile = choose_tile(std::max(A.n, B.n), shape.threads);
  shape.progress = &plan.progress;
  const PairWeights w = s.weighted ? PairWeights{plan.a->weights().data(), plan.b->weights().data()}
                                   : PairWeights{};

  Result r;
  r.output = s.output;
  switch (s.output) {
    case OutputKind::Histogram: {
      auto sinks = traverse<D>(f, A, B, shape, [&] { return HistogramSink(plan.edges, w); });
      for (auto& k : sinks) k.merge_into(r);
      if (r.counts.empty()) r.counts.assign(plan.edges.nbins, 0);
      if (s.weighted && r.weighted.empty()) r.weighted.assign(plan.edges.nbins, 0.0);
      break;
    }
    case OutputKind::Reduction: {
      auto sinks = traverse<D>(f, A, B, shape, [&] { return ReductionSink(plan.edges, w); });
      for (auto& k : sinks) k.merge_into(r);
      break;
    }
    case OutputKind::PairList: {
      auto sinks = traverse<D>(f, A, B, shape,
                               [&] { return PairListSink(plan.edges, plan.max_pairs); });
      std::size_t total = 0;
      for (auto& k : sinks) total += k.size();
      for (auto& k : sinks)
        if (k.overflow() || total > plan.max_pairs)
          throw Error(ErrorKind::Resource,
                      "pair list exceeds the limit of " + std::to_string(plan.max_pairs) +
                          " pairs; narrow the range or raise RunOptions::max_pairs");
      r.pairs.reserve(total);
      for (auto& k : sinks) k.merge_into(r);
      std::sort(r.pairs.begin(), r.pairs.end(), [](const PairRecord& x, const PairRecord& y) {
        return x.i != y.i ? x.i < y.i : x.j < y.j;
      });
      break;
    }
    case OutputKind::Matrix: {
      r.rows = A.n;
      r.cols = B.n;
      r.matrix.assign(r.rows * r.cols, 0.0);
      if (shape.is_auto) {
        for (std::size_t i = 0; i < A.n; ++i) {
          double a[D > 0 ? D : 1];
          for (int d = 0; d < D; ++d) a[d] = A.x[d][i];
          r.matrix[i * r.cols + i] = f.natural_of(f.key(a, a));
        }
      }
      double* m = r.matrix.data();
      traverse<D>(f, A, B, shape, [&] { return MatrixSink(m, r.cols, shape.is_auto); });
      break;
    }
  }
  r.info.threads = shape.threads;
  r.info.pairs_evaluated = pair_total(A.n, B.n, shape.is_auto);
  return r;
}

}  // namespace twobody::cpu
