#pragma once
// Limited-range functions onto a regular lattice (seed 002): every source point adds a term
// f(node − point) to every node of the lattice within a cutoff, and each node's terms are summed.
// Potential maps (cutoff Coulomb), density maps (Blinn blobs) and MRI gridding (Kaiser–Bessel) are
// instances. The lattice is implicit: its nodes are never stored as coordinates, only the output.
// The rule deciding which (source, node) pairs count, the terms and the sums are in
// docs/exactness.md ("Lattices"); the user guide is docs/lattice.md.
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "twobody/engine.hpp"
#include "twobody/points.hpp"

namespace twobody {

// A regular lattice of 2 or 3 axes, x fastest in memory (C order V[z][y][x], NumPy shape
// (nz, ny, nx)). Node i on axis k is at fl64(origin_k + fl64(i · spacing_k)): the rule's node.
struct Lattice {
  int dim = 3;
  std::array<double, 3> origin{};
  std::array<double, 3> spacing{1.0, 1.0, 1.0};
  std::array<std::int64_t, 3> shape{1, 1, 1};  // nodes per axis; an unused third axis has 1
  // A periodic axis wraps with period L_k = fl64(shape_k · spacing_k); the cutoff must be at most
  // L_k / 2 there, so the minimum image is unique.
  std::array<bool, 3> periodic{};

  double node(int k, std::int64_t i) const { return origin[k] + static_cast<double>(i) * spacing[k]; }
  double period(int k) const { return static_cast<double>(shape[k]) * spacing[k]; }
  std::uint64_t nodes() const;
  // Error(Config) for a dimension other than 2 or 3, a spacing not finite and > 0, a shape < 1, an
  // origin not finite, or more than 2^40 nodes.
  void validate() const;

  // The sources' bounding box, less `padding` on every side, as the origin; shape
  // ceil(extent / h) + 1 per axis, so the last node is at or beyond the box's far side.
  static Lattice spanning(const PointSet& points, std::array<double, 3> spacing, double padding);
  // The gridding lattice of n[k] nodes per axis, spacing 1, node i at i − n/2 (k-space in grid
  // units about the centre), periodic on every axis (the NUFFT's wrap).
  static Lattice centred_grid(int dim, std::array<std::int64_t, 3> n);
};

// The sources: points (float64, finite) with the per-point values the function reads. Spans are
// borrowed; they must stay alive and unchanged for the run.
struct LatticeSources {
  const PointSet* points = nullptr;
  std::span<const double> strength;     // q_i, w_i, or Re v_i; empty: 1 for every point
  std::span<const double> strength_im;  // Im v_i (complex maps); empty: real values
  std::span<const double> radius;       // R_i (Blinn blobs); empty otherwise
};

enum class LatticeKernel { CoulombSwitched, BlinnBlob, KaiserBessel };
enum class Support { Ball, Box };  // radial (r < C), or separable (|d_k| < C on every axis)
enum class Precision { Single, Double };

// A lattice function and its parameters (include/twobody/extend/lattice_function.hpp has the
// formulas). Every term is strength × g.
struct LatticeFunction {
  LatticeKernel kind = LatticeKernel::CoulombSwitched;
  double cutoff = 0;                 // C: the ball's radius, or the box's half-width (W/2)
  Support support = Support::Ball;   // Box only for Kaiser–Bessel (the separable kernel)
  double exclusion = 0;              // Coulomb: nodes closer than this to a source are excluded (> 0)
  double blobbiness = 0;             // Blinn's B (≥ 0)
  double beta = 0;                   // Kaiser–Bessel β; 0: Beatty et al.'s from the width and σ
  double oversampling = 2;           // σ, for the default β
  // Kaiser–Bessel's β when beta is 0: π·sqrt(W²/σ²·(σ − 1/2)² − 0.8), W = 2C (Beatty 2005).
  double kaiser_bessel_beta() const;
};

// How the sources are binned for the GPU's gather: compact (seed 002's: every bin as deep as its
// sources, a row of bins read as one range) or regular (the seed's baseline, kept for its Table 5:
// every bin padded to one depth and read bin by bin with its count; a capped depth's overflow is
// summed on the CPU while the GPU gathers, as the seed's). The map is the same bits either way.
enum class LatticeBinning { Compact, Regular };

namespace reduce {
// Sources × lattice nodes within the function's support, each pair's term summed per node, as an
// exact sum (twobody/exact_sums.hpp): the map has the same bits for any thread count, tiling and
// bin size, and will on any backend.
struct OntoLattice {
  Lattice lattice;
  LatticeFunction function;
  Precision precision = Precision::Single;
  LatticeBinning binning = LatticeBinning::Compact;  // Regular: the GPU only (--backend cuda)
  int bin_depth = 0;  // Regular: the padded depth; 0: the deepest bin's (nothing spills)
};
}  // namespace reduce

// What a map's values may differ by from the float64 evaluation of the rule (docs/exactness.md):
// a node with n terms is within n·(term + step/2) of the exact sum of its terms each evaluated
// exactly at the float64 displacement, and then rounded once to the output's precision (half an
// ulp of the value in float32 or float64).
struct LatticeErrorBound {
  double term = 0;  // |computed term − exact term| for any (source, node) pair
  double step = 0;  // the sum grid's step: each term is rounded onto it
  double grid_bound = 0;  // B: the largest |term| the grid was fixed for
};

struct LatticeMap {
  Lattice lattice;
  int components = 1;  // 1 real, 2 complex (Re, Im interleaved, as NumPy's complex)
  Precision precision = Precision::Single;
  // nodes × components, x fastest; in Single each value is a float32, held as a double. Large maps
  // are on transparent huge pages and never zero-filled (MatrixValues): every value is written.
  MatrixValues values;
  // Coulomb: nodes within the exclusion radius of a source (their value 0), 1 a node; empty
  // when the function excludes nothing.
  std::vector<std::uint8_t> excluded;
  std::uint64_t excluded_count = 0;
  LatticeErrorBound bound;
  std::uint64_t terms = 0;  // (source, node) pairs that added a term
  std::uint64_t spilled = 0;  // regular bins of a capped depth: the sources the CPU's overflow took
  std::string plan;         // what --explain prints
  double seconds = 0;
};

// Validates the request against the sources, plans it and runs it (RunOptions: backend "auto",
// "cpu" or "cuda", threads, progress, on_plan). The CPU and the GPU give the same bits; "auto" takes
// the GPU for maps of about 10^8 terms or more when one is present (and the CPU if the map does not
// fit on it), the CPU otherwise; the plan says which and why. Error(Config) for a bad lattice or function, Error(Input) for sources that are
// not finite or whose columns do not match, Error(Backend) for "cuda" without a GPU or "hybrid".
LatticeMap run(const reduce::OntoLattice& stat, const LatticeSources& sources, const RunOptions& opt = {});
std::string explain(const reduce::OntoLattice& stat, const LatticeSources& sources, const RunOptions& opt = {});

}  // namespace twobody
