#pragma once
// A run split over several devices of one process (RunOptions::devices). Where the device's
// backend runs the plan whole in one item space (the CUDA backend's point statistics but pair
// lists, in one piece), every device runs the whole plan on its own copy of the sets and the
// kernels' work items are shared (work_share.hpp). Otherwise (pair lists, simulated devices, MPI
// ranks' jobs), the pair jobs of
// pair_jobs.hpp, one host thread a device, each taking the longest job left from one queue, so a
// faster device takes more (the load follows the measured speed, not a model of it). Each job is
// an ordinary engine run on that device's backend, on the whole run's sum grids; the results are
// merged in the jobs' order (merge_piece), so the Result is the same bits as one device's and as
// the CPU's. MPI ranks run their own jobs through the same queue (src/dist/).
#include <string>
#include <vector>

#include "twobody/detail/engine/pair_jobs.hpp"
#include "twobody/engine.hpp"

namespace twobody {

// What each device did in run_jobs, for the plan.
struct DeviceShare {
  int device = -1;    // -1: the calling thread's device, as without RunOptions::devices
  std::string name;   // its backend's device
  std::size_t jobs = 0;
  double busy = 0;    // seconds spent on its jobs (slabs made, runs, merges)
};

struct JobsReport {
  std::vector<DeviceShare> devices;
  std::string first_plan, backend, device;  // the first job's (in job order)
  int threads = 0;
  // A line per device (its jobs, or what `unit` names, and busy seconds) and the imbalance
  // |max - min| / max of the busy seconds, each line starting "{prefix}: ".
  std::string describe(const std::string& prefix, const std::string& unit = "jobs") const;
};

// Runs the jobs `mine` of `D` (indices into D.jobs) for the run (stat, a, b) on local.devices (none:
// on the calling thread, as local.backend picks), longest first, and merges them into `out` (an
// empty_result of the whole run) in the order of `mine`. Pair lists: into out.pairs unsorted, or,
// with local.pair_sink, each job's pairs in the caller's indices, sorted, to the sink (one call at
// a time), max_pairs counted over all jobs. local.sum_grids must be the whole run's. The first
// error of any job stops the queue and is thrown once every device has finished its job.
JobsReport run_jobs(const Statistic& stat, const PointSet& a, const PointSet* b, const dist::Decomposition& D,
                    const std::vector<std::size_t>& mine, const RunOptions& local, Result& out);

// Why a run with several devices is not split ("" when it is): a matrix, a statistic the device's
// backend refuses (it runs whole, on the CPU).
std::string why_not_split(const Statistic& stat, const RunOptions& opt);

// run() and explain() of a run split over RunOptions::devices (two or more, why_not_split empty).
Result run_on_devices(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt);
std::string explain_on_devices(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt);

// Slabs per device: more let a faster device take more of the work and even out the last jobs,
// fewer make larger jobs (each one a run: its upload, its cell index, its launches).
constexpr int kSlabsPerDevice = 4;

// Ranges of work items per device when the devices share one run's items (work_share.hpp): a
// launch each, so a faster device takes more and the last ranges are short (the items come
// heaviest first), at a launch's cost (microseconds) each.
constexpr int kRangesPerDevice = 8;

}  // namespace twobody
