#pragma once
// --backend hybrid (issue 22; HEGJoin, seed 004 §4.4): the CPU and the GPU on one work queue
// ordered by estimated work, the GPU taking bands from the heavy end, the CPU team from the light
// end, until they meet (hybrid_queue.hpp, hybrid_workers.hpp). The pieces merge exactly
// (merge_piece), so a hybrid run's Result is the CPU's and the GPU's bit for bit.
//   - Vectors (joins: Count, PerPoint, PairList; k-NN: Nearest): the queue's units are bands of
//     the first set's rows (VectorPlan::band, vector_bands.hpp), heaviest first: the self-join's
//     triangle has its longest rows first, a cross join's or k-NN's rows weigh the same.
//   - Points (d <= 8, the point engine, where vector joins of few dimensions run too): the units
//     are the MPI decomposition's slab pairs within the statistic's reach (pair_jobs.hpp), ordered
//     by estimated pairs, each an ordinary run on the worker's backend.
// Statistics it does not split (vector histograms and matrices, point matrices) run whole on the
// `auto` backend, and the plan says so; without a GPU the CPU runs alone, and the plan says why.
#include <string>

#include "twobody/engine.hpp"
#include "twobody/vectors.hpp"

namespace twobody {

Result run_hybrid(const Statistic& stat, const VectorSet& a, const VectorSet* b, const RunOptions& opt);
std::string explain_hybrid(const Statistic& stat, const VectorSet& a, const VectorSet* b, const RunOptions& opt);
Result run_hybrid(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt);
std::string explain_hybrid(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt);

// A statistic the hybrid backend does not split, or a run without a GPU to share it with: run
// whole on `backend`, the note first in its plan.
template <class Set>
Result run_whole(const Statistic& stat, const Set& a, const Set* b, const RunOptions& opt, const char* backend,
                 const std::string& note) {
  RunOptions o = opt;
  o.backend = backend;
  o.on_plan = nullptr;
  if (o.backend == std::string("cpu")) o.devices.clear();  // (the GPUs it was to share with are not there)
  Result r = run(stat, a, b, o);
  r.info.plan = note + "\n" + r.info.plan;
  if (opt.on_plan) opt.on_plan(r.info.plan);
  return r;
}

}  // namespace twobody
