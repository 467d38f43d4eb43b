#pragma once
// How a run is cut into pair jobs for several processes (MPI ranks, src/dist/) or several devices of
// one process (device_distribution.hpp), without MPI: every rank computes the same decomposition
// from the same points, so no plan is ever sent. A set is cut into slabs along one
// axis (equal point counts, spatially coherent); an auto count over A is
//   Σ_p auto(A_p) + Σ_{p<q} cross(A_p, A_q)
// and a cross count over (A, B) is Σ_{p,q} cross(A_p, B_q): each pair of the run in exactly one
// job. Jobs whose slabs lie farther apart than the statistic's reach count nothing and are dropped;
// the rest go to ranks longest-first by estimated pairs (a process's devices instead take them
// longest-first from one queue).
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "twobody/points.hpp"
#include "twobody/statistic.hpp"

namespace twobody::dist {

struct SlabChunks {
  int axis = 0;
  std::vector<std::uint64_t> order;  // sorted position -> index in the caller's set
  std::vector<double> key;           // coordinate `axis` in sorted order
  std::vector<std::size_t> begin;    // chunk c holds sorted positions [begin[c], begin[c+1])
  std::vector<std::vector<double>> lo, hi;  // bounding box of each chunk, [c][d]

  std::size_t chunks() const { return begin.empty() ? 0 : begin.size() - 1; }
  std::size_t size(std::size_t c) const { return begin[c + 1] - begin[c]; }
  // The chunk's points (weights and region labels with them), in sorted order.
  PointSet make(const PointSet& p, std::size_t c) const;
  // Points of chunk c whose `axis` coordinate lies in [lo, hi].
  std::size_t count_within(std::size_t c, double lo, double hi) const;
};

// Sorted along `axis` (ties by index; a parallel sort of (coordinate, index) pairs, since one
// thread's sort of indices by an indirect key is slow at 10^8–10^9 points, not measured here) and
// cut into `chunks` slabs of equal count (at most one per point, at least one).
SlabChunks cut_into_slabs(const PointSet& p, int axis, std::size_t chunks);

// The largest separation of a pair the statistic can count, in the points' coordinates (chord
// length for angles); infinity when any pair may count (a matrix, angles up to 180 degrees).
double statistic_reach(const Statistic& s);

struct PairJob {
  std::size_t a = 0, b = 0;  // chunk of A; chunk of B (cross) or of A (auto, b >= a)
  bool is_auto = false;      // auto(A_a) (then b == a)
  double estimate = 0;       // pairs the job is expected to evaluate
  int rank = 0;
};

struct Decomposition {
  bool cross = false;
  SlabChunks a, b;            // b: cross only
  std::vector<PairJob> jobs;  // in a fixed order: the order partial results are summed in
  std::size_t dropped = 0;    // jobs beyond the reach
  double reach = std::numeric_limits<double>::infinity();
  std::vector<double> load;   // estimated pairs per rank
  // How the sets were cut and which jobs remain, after `prefix` ("devices: "), for the plan.
  std::string describe_cut(const std::string& prefix) const;
  // The jobs in the order a queue hands them out: longest (estimated pairs) first, ties by job.
  std::vector<std::size_t> longest_first() const;
};

// Every rank calls this with the same arguments and gets the same decomposition.
Decomposition decompose(const Statistic& s, const PointSet& a, const PointSet* b, int ranks, int chunks_per_rank);

}  // namespace twobody::dist
