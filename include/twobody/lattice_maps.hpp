#pragma once
// The lattice maps users ask for by name (seed 002's applications): the electrostatic potential of
// charges (cutoff Coulomb, as VMD's and Parboil's cutcp), Blinn's blob density, and the gridding of
// non-Cartesian k-space samples onto a Cartesian grid with the Kaiser–Bessel window (MRI). Each is
// a declaration over reduce::OntoLattice (twobody/lattice.hpp); docs/lattice.md has the recipes.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "twobody/lattice.hpp"

namespace twobody {

// Where the map lies: `lattice` when set (origin, spacing, shape, periodic axes), otherwise the
// sources' bounding box less `padding` on every side at `spacing`.
struct LatticePlacement {
  double spacing = 0.5;
  double padding = 0;
  std::optional<Lattice> lattice;
};

struct PotentialOptions {
  LatticePlacement at;
  double cutoff = 12;      // C (cutcp: 12 Å)
  double exclusion = 1.0;  // nodes within this of an atom are excluded (value 0, in the mask)
  Precision precision = Precision::Single;
  LatticeBinning binning = LatticeBinning::Compact;  // regular: seed 002's baseline (the GPU only)
  int bin_depth = 0;                                 // regular: the padded depth (0: the deepest bin's)
};
// V(p) = Σ_i q_i/r · (1 − r²/C²)² over the atoms within C of node p (no Coulomb constant: units of
// charge per length).
LatticeMap potential_map(const PointSet& atoms, std::span<const double> charges, const PotentialOptions& o,
                         const RunOptions& run = {});

struct DensityOptions {
  LatticePlacement at;
  double cutoff = 0;      // C: the blobs are truncated here
  double blobbiness = 1;  // B
  Precision precision = Precision::Single;
  LatticeBinning binning = LatticeBinning::Compact;  // regular: seed 002's baseline (the GPU only)
  int bin_depth = 0;                                 // regular: the padded depth (0: the deepest bin's)
};
// D(p) = Σ_i w_i·exp(B·(1 − r²/R_i²)) over the points within C of p (w empty: 1).
LatticeMap density_map(const PointSet& points, std::span<const double> radii, std::span<const double> weights,
                       const DensityOptions& o, const RunOptions& run = {});

struct GriddingOptions {
  std::array<std::int64_t, 3> grid{64, 64, 64};  // nodes per axis (k in grid units about the centre)
  double width = 4;        // W: the window covers |d| < W/2
  double beta = 0;         // 0: Beatty's from the width and the oversampling
  double oversampling = 2;
  bool separable = true;   // the product of 1-D windows (NUFFT); false: radial (Parboil's)
  bool wrap = true;        // periodic grid (the FFT's); false: samples near the edges are clipped
  Precision precision = Precision::Single;
  LatticeBinning binning = LatticeBinning::Compact;  // regular: seed 002's baseline (the GPU only)
  int bin_depth = 0;                                 // regular: the padded depth (0: the deepest bin's)
};
// G(p) = Σ_i sdc_i·v_i·KB(p − k_i): complex samples v = re + i·im at k-space positions k (grid
// units, the grid's centre node at 0) gridded with the Kaiser–Bessel window; sdc empty: 1.
LatticeMap grid_samples(const PointSet& k, std::span<const double> re, std::span<const double> im,
                        std::span<const double> sdc, const GriddingOptions& o, const RunOptions& run = {});

// Atoms with charges and radii from a PQR file (APBS's, and Parboil cutcp's input): ATOM and
// HETATM records, whose last five fields are x, y, z, charge and radius. Error(Input) naming the
// line for a malformed record, or a file without atoms.
struct Atoms {
  PointSet positions;
  std::vector<double> charges, radii;
};
Atoms read_pqr(const std::string& path);

// The map as a file, by the path's extension: .npy (float32, float64, complex64 or complex128 of
// shape (nz, ny, nx), and beside it PATH.json with the lattice and the run); .h5 (dataset /map of
// that shape, chunked by z-slabs, the lattice and the JSON as attributes, /excluded); .dx (OpenDX,
// as APBS and VMD read, real 3-D maps only); .png (the middle z-slice, 8-bit RGB). `meta` is added
// to the JSON.
void write_lattice_map(const std::string& path, const LatticeMap& map, const std::string& meta_json = "{}");

}  // namespace twobody
