#pragma once
// The CPU backend with an estimate of how long it would run a plan, for "auto"'s choice before
// a GPU is started (auto_choice.hpp). Small sets only: their cell index, built to count the pairs
// the traversal will evaluate, is milliseconds, and serves the plan's run on the returned backend.
#include <memory>

#include "twobody/detail/engine/backend.hpp"

namespace twobody {

struct EstimatedCpuRun {
  std::unique_ptr<Backend> backend;  // the CPU's
  double seconds = -1;               // -1: not estimated (too many points, or an output it does not model)
};

// The backend keeps the cell index for a run of this very plan object (its address and sets): a
// different plan, or this one after it changed, is indexed again.
EstimatedCpuRun estimate_cpu_run(const Plan& plan);

}  // namespace twobody
