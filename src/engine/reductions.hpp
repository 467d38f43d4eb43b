#pragma once
// The engine's side of each reduction type (twobody/reduction.hpp): what it requires of the
// points, how its result is laid out, and how the results of pieces of one run (chunk pairs of a
// chunked run, pair jobs of an MPI run) add up to the whole run's. One merge serves every caller
// that splits a run, so a new reduction is merged the same way everywhere.
#include <cstddef>
#include <cstdint>
#include <utility>

#include "twobody/points.hpp"
#include "twobody/result.hpp"
#include "twobody/statistic.hpp"

namespace twobody {

// Where point k of a piece's set sits in the whole run's set: offset + k, or offset + order[k]
// when the piece's points were reordered (an MPI slab's sort).
struct PointPlacement {
  std::size_t offset = 0;
  const std::uint64_t* order = nullptr;
  std::size_t at(std::size_t k) const { return offset + (order ? static_cast<std::size_t>(order[k]) : k); }
};

// A piece of a run: its first set placed in the whole run's first set, its second (a cross
// piece) in the whole run's second set, or in the first when the whole run is auto.
struct PiecePlacement {
  PointPlacement a, b;
  bool whole_is_auto = false;  // the whole run's per-point arrays: one set (per_point_a only)
  bool piece_is_auto = false;  // the piece's second set is its first (no per_point_b, no mirror)
};

// A piece's pair in the whole run's indices (auto: i < j kept).
inline PairRecord place_pair(PairRecord p, const PiecePlacement& where) {
  p.i = where.a.at(p.i);
  p.j = where.b.at(p.j);
  if (where.whole_is_auto && p.i > p.j) std::swap(p.i, p.j);
  return p;
}

// The reduction's requirements of the points (labels for jackknife regions, 3-D points for 2-D
// bins, ...): Error(Config) or Error(Input) with the reason.
void validate_reduction(const Statistic& s, const PointSet& a, const PointSet* b);
// Error(Config) for reduce::Sum and PerPointValue, which sum values a built-in metric has not.
void refuse_value_reductions(const Statistic& s);

// A result of the statistic's layout with every counter, sum (float64 and exact) and matrix entry
// zero: what pieces are merged into. `n_a`, `n_b`: the whole run's sets (n_b = 0: auto).
Result empty_result(const Statistic& s, std::size_t n_a, std::size_t n_b);

// Adds a piece's result into the whole run's: counters and sums added bin by bin, per-point
// arrays and pair lists moved to the whole run's indices (auto pairs keep i < j), a matrix block
// placed (and, auto, mirrored below the diagonal), nearest-neighbour lists of the piece's queries
// placed whole (a piece has every partner of its queries: a band). Floating sums are added as exact sums, so
// pieces merged in any order give one result, bit for bit, once the caller has rounded them
// (round_exact_sums, engine/exact_sums.hpp) at the end. Pair lists are appended unsorted: the
// caller sorts once at the end.
void merge_piece(const Statistic& s, Result& whole, const Result& piece, const PiecePlacement& where);

}  // namespace twobody
