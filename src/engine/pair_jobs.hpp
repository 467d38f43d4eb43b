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
#include <memory>
#include <string>
#include <vector>

#include "twobody/points.hpp"
#include "twobody/result.hpp"
#include "twobody/statistic.hpp"

namespace twobody::dist {

struct SlabChunks {
  int axis = 0;
  // Position -> index in the caller's set. Slab c holds positions [begin[c], begin[c+1]); within a
  // slab, its fine bins in increasing coordinate (bin k: positions [bin_begin[k], bin_begin[k+1]),
  // coordinates in [bin_lo[k], bin_hi[k]]), and within a bin the points in index order.
  // (Its pages are first touched by the cut's threads, 2 MiB at a time: DefaultInitAllocator.)
  std::vector<std::uint64_t, DefaultInitAllocator<std::uint64_t>> order;
  std::vector<std::size_t> begin;
  std::vector<std::size_t> bin_begin, slab_bin;  // slab c = bins [slab_bin[c], slab_bin[c+1])
  std::vector<double> bin_lo, bin_hi;            // an empty bin: lo = +inf, hi = -inf
  std::vector<std::vector<double>> lo, hi;       // bounding box of each slab, [c][d]
  // The points in position order (cut_into_slabs' keep_points), or null: make() then gathers.
  std::shared_ptr<const PointSet> sorted;

  std::size_t chunks() const { return begin.empty() ? 0 : begin.size() - 1; }
  std::size_t size(std::size_t c) const { return begin[c + 1] - begin[c]; }
  // Whether positions [first, last) are all of slab c (a job's whole slab, not a halo).
  bool covers(std::size_t c, std::size_t first, std::size_t last) const {
    return first == begin[c] && last == begin[c + 1];
  }
  // The points at positions [first, last) (weights and region labels with them), in position
  // order: borrowed from `sorted` where it was kept (weights and labels copied), else gathered
  // from `p` through the order on `threads` OpenMP threads (0: the default).
  PointSet make(const PointSet& p, std::size_t first, std::size_t last, int threads = 0) const;
  // The positions of slab c whose `axis` coordinate may lie in one of `intervals` ([lo, hi] each):
  // the smallest run of its bins that holds every such point (empty: first == last).
  std::pair<std::size_t, std::size_t> within(std::size_t c, const std::vector<std::pair<double, double>>& intervals) const;
};

// Cut along `axis` into `chunks` slabs of about equal count (at most one per point, at least one;
// no slab empty): the cuts fall between fine bins whose edges are quantiles of a fixed sample of
// the coordinates, and one parallel counting pass places the points, so the cut costs two passes
// over the set rather than a sort (a sort of 10^8–10^9 keys took longer than the counts it fed).
// The result depends only on the points, not on the number of threads: every rank gets the same.
// keep_points: also the points in position order (SlabChunks::sorted), written in the same pass, so
// that slabs and halos are borrowed rather than gathered (a copy of the set: 8 bytes a coordinate).
SlabChunks cut_into_slabs(const PointSet& p, int axis, std::size_t chunks, bool keep_points = false);

// The largest separation of a pair the statistic can count, in the points' coordinates (chord
// length for angles); infinity when any pair may count (a matrix, angles up to 180 degrees).
double statistic_reach(const Statistic& s);

struct PairJob {
  std::size_t a = 0, b = 0;  // chunk of A; chunk of B (cross) or of A (auto, b >= a)
  bool is_auto = false;      // auto(A_a) (then b == a)
  // The positions the job reads, in D.a and in the second set's slabs (D.b, or D.a for auto): the
  // whole slabs, or for a cutoff statistic's cross job only each slab's points within the reach of
  // the other's along the slab axis (a halo: every pair the job can count has both points there).
  std::size_t a_first = 0, a_last = 0, b_first = 0, b_last = 0;
  double estimate = 0;       // pairs the job is expected to evaluate
  int rank = 0;
};

struct Decomposition {
  bool cross = false;
  SlabChunks a, b;            // b: cross only
  std::vector<PairJob> jobs;  // in a fixed order: the order partial results are summed in
  std::size_t dropped = 0;    // jobs beyond the reach
  double reach = std::numeric_limits<double>::infinity();
  bool halos = false;         // cross jobs read their slabs' halos (PairJob::a_first ...)
  std::vector<double> load;   // estimated pairs per rank
  // How the sets were cut and which jobs remain, after `prefix` ("devices: "), for the plan.
  std::string describe_cut(const std::string& prefix) const;
  // The jobs in the order a queue hands them out: longest (estimated pairs) first, ties by job.
  std::vector<std::size_t> longest_first() const;
  std::string halo_text() const;
};

// Every rank calls this with the same arguments and gets the same decomposition.
// keep_points: as for cut_into_slabs (the devices of one process keep them; MPI ranks, which hold
// the whole sets already, do not).
Decomposition decompose(const Statistic& s, const PointSet& a, const PointSet* b, int ranks, int chunks_per_rank,
                        bool keep_points = false);

}  // namespace twobody::dist
