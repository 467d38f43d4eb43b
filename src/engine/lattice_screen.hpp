#pragma once
// A float32 screen of (source, node) pairs for the GPU's lattice gather. The rule that decides a
// pair (docs/exactness.md, "Lattices") works in float64 on the node's coordinates, with a wrap
// division on periodic axes; most pairs of a gather are far from its boundary (cutcp keeps one in
// five, MRI gridding one in forty), so they are decided here from the float32 displacement that a
// single-precision term is computed from anyway, D_k = f_k − (j_k − rel_k) in spacings, with
// margins that bound its distance from the rule's float64 displacement (make_pair_screen, in
// lattice_bins.cpp, and the test LatticeScreen.* which checks each decision against the rule).
// What the screen cannot decide goes to the rule itself, so the map keeps its bits.
#include <cmath>
#include <cstdint>

#include "twobody/config.hpp"

namespace twobody {
struct LatticePlan;
}

namespace twobody::lattice {

struct Source;

// Thresholds on float32 squares (fl32(spacing·D)² summed in the term's order), each rounded
// toward its safe side. `on` false: every pair goes to the rule (a periodic axis too short for one
// image per tile, or coordinates so large that the margins would swallow the cutoff).
struct PairScreen {
  bool on = false;
  bool ball = true;      // radial support (r² < C²); false: |d_k| < C on every axis
  bool coulomb = false;  // nodes within the exclusion radius of a source are excluded
  int dim = 3;
  float h[3] = {1, 1, 1};  // fl32(spacing), as the term's
  float out_sq = 0;  // beyond: the rule rejects the pair (ball: r²; box: any axis's square)
  float in_sq = 0;   // below: the rule keeps it (ball: r²; box: every axis's square)
  float ex_in = 0;   // coulomb, r² below: the rule excludes the node
  float ex_out = 0;  // coulomb, r² beyond: the rule does not
};

// A source as one tile of nodes sees it: its float32 offset from its floor node (Source::f) and
// that node relative to the tile's first, as an image near the tile on periodic axes (the one the
// rule takes for any node of the tile within the cutoff, make_pair_screen's condition): small
// integers, exact in float32.
struct TileSource {
  float f[3];
  float rel[3];
};

// `b`, the source's floor node; `tile0`, the tile's first node; `tile` its nodes per axis.
TWOBODY_HD TileSource tile_source(const float (&f)[3], const std::int64_t (&b)[3], const std::int64_t (&tile0)[3],
                                  const std::int64_t (&shape)[3], const bool (&periodic)[3], int dim, int tile) {
  TileSource t;
  for (int k = 0; k < 3; ++k) {
    t.f[k] = f[k];
    std::int64_t w = 0;
    if (k < dim && periodic[k]) {
      const double from_centre = static_cast<double>(b[k] - tile0[k]) - 0.5 * static_cast<double>(tile - 1);
      w = static_cast<std::int64_t>(nearbyint(from_centre / static_cast<double>(shape[k])));
    }
    t.rel[k] = static_cast<float>(b[k] - w * shape[k] - tile0[k]);
  }
  return t;
}

enum class Screened { Out, In, Excluded, Rule };

// The pair of `t` and the tile's node `j` (its index in the tile, per axis). `sq` and `r2` are the
// term's own float32 squares and r² (the single-precision term reads them when the pair is In).
TWOBODY_HD Screened screen_pair(const PairScreen& s, const TileSource& t, const float (&j)[3], float (&sq)[3], float& r2) {
  for (int k = 0; k < 3; ++k) {
    sq[k] = 0;
    if (k >= s.dim) continue;
    const float m = j[k] - t.rel[k];  // exact: the node's index minus the source's floor node
    const float D = t.f[k] - m;
    const float dk = D * s.h[k];
    sq[k] = dk * dk;
  }
  r2 = sq[0] + sq[1];
  if (s.dim == 3) r2 = r2 + sq[2];
  if (!s.on) return Screened::Rule;
  if (s.ball) {
    if (r2 > s.out_sq) return Screened::Out;
    if (!(r2 < s.in_sq)) return Screened::Rule;
    if (s.coulomb) {
      if (r2 < s.ex_in) return Screened::Excluded;
      if (!(r2 > s.ex_out)) return Screened::Rule;
    }
    return Screened::In;
  }
  bool inside = true;
  for (int k = 0; k < s.dim; ++k) {
    if (sq[k] > s.out_sq) return Screened::Out;
    inside = inside && sq[k] < s.in_sq;
  }
  return inside ? Screened::In : Screened::Rule;
}

// The screen of a plan for tiles of `tile` nodes per axis (lattice_bins.cpp).
PairScreen make_pair_screen(const LatticePlan& plan, int tile);

}  // namespace twobody::lattice
