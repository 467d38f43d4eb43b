#pragma once
// The hybrid backend's knobs (--backend hybrid: CPU and GPU on one work queue, hybrid_run.hpp),
// read from the environment in this one place and printed by the plan when overridden.
#include <cstddef>
#include <string>

namespace twobody {

struct HybridPolicy {
  // TWOBODY_HYBRID_FAKE_GPU=1: the "GPU" worker is the CPU backend on one thread, so that the
  // whole machinery (queue, bands, merge, report) runs and is tested without a GPU.
  bool fake_gpu = false;
  // TWOBODY_HYBRID_BAND_ROWS: rows of a vector run's queue unit (0: n / 4096, at least 16). Bands
  // are whole units.
  std::size_t band_rows = 0;
  // TWOBODY_HYBRID_SLABS: slabs a point run's sets are cut into (0: 8 per CPU thread, 16 to 256);
  // its queue units are the slab pairs within the statistic's reach (engine/pair_jobs.hpp).
  std::size_t slabs = 0;
  // TWOBODY_HYBRID_GPU_SECONDS, TWOBODY_HYBRID_CPU_SECONDS: the work a band should hold, at the
  // rate the worker has shown so far. A GPU band holds at least ~100 ms, so that its launches,
  // uploads and drains are a small part of it; the CPU team's are short, so that the two sides
  // finish close together.
  double gpu_band_seconds = 0.1;
  double cpu_band_seconds = 0.02;
  // A heavy-end worker's first band, before its rate is known: this fraction of the whole run
  // (HEGJoin §4.4.3 keeps the GPU's first batches to a sixth or less, so the CPU is not starved).
  double gpu_first_share = 0.125;

  static HybridPolicy current();
  // The overrides in force ("" when none), for the plan.
  std::string overrides() const;
};

}  // namespace twobody
