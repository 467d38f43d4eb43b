#pragma once
// Bands of a vector run (VectorPlan::band): rows [r0, r1) of the first set as the anchors of a
// piece of the run. The hybrid backend (hybrid_run.cpp) cuts a run into bands and hands them to
// its workers; a backend runs a band and gives its piece numbered as band_placement says, so that
// merge_piece (reductions.hpp) adds the pieces into the whole run's result.
#include <cstdint>

#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/engine/reductions.hpp"

namespace twobody {

// Where a band's piece sits in the whole run. The piece's first set is the band, row q being row
// r0 + q; its second set is
//   - auto Count, PerPoint, PairList: rows [r0, n) of the set (the band's partners j > i lie
//     there, and both ends of a pair count in one per-point array of n - r0 entries);
//   - cross, and Nearest: the whole partner set (b, or for an auto k-NN a itself), unshifted.
inline PiecePlacement band_placement(const VectorPlan& p) {
  const bool nearest = p.stat->output() == OutputKind::Nearest;
  PiecePlacement where;
  where.a.offset = p.band.begin;
  where.b.offset = p.is_auto() && !nearest ? p.band.begin : 0;
  where.whole_is_auto = p.is_auto();
  where.piece_is_auto = p.is_auto() && !nearest;
  return where;
}

// The pairs a band evaluates: cross, |band| x nb; auto, sum over its rows i of the n - 1 - i
// partners after it (the triangle's rows get lighter down the set); an auto k-NN, |band| x (n - 1).
inline double band_pairs(const VectorPlan& p, RowBand band) {
  const double m = static_cast<double>(band.size());
  if (!p.is_auto()) return m * static_cast<double>(p.b->size());
  const double n = static_cast<double>(p.a->size());
  if (p.stat->output() == OutputKind::Nearest) return m * (n - 1);
  // sum_{i=r0}^{r1-1} (n - 1 - i) = m (n - 1) - (r0 + r1 - 1) m / 2
  return m * (n - 1) - 0.5 * m * (static_cast<double>(band.begin) + static_cast<double>(band.end) - 1);
}

}  // namespace twobody
