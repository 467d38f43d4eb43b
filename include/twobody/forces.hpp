#pragma once
// Short-range pair forces (seed 002's N-body case, where the input and the output are the same
// irregular set): per body the force and the potential energy of its pairs within a cutoff,
// Lennard-Jones or cutoff Coulomb, open or in an orthorhombic periodic box, with the total energy
// and the virial. A declaration over reduce::PointSums (twobody/reduction.hpp) on the engine's
// cell grid; sums are exact (docs/exactness.md#forces), so Σ F = 0 on the sums' grid and the bits
// do not depend on threads, cells or the order of the bodies. docs/molecular-dynamics.md has the
// recipe.
#include <optional>
#include <span>
#include <vector>

#include "twobody/box.hpp"
#include "twobody/engine.hpp"
#include "twobody/pair_force.hpp"
#include "twobody/points.hpp"
#include "twobody/result.hpp"

namespace twobody {

struct ForceOptions {
  double cutoff = 2.5;  // C: pairs closer than this interact (at most half the box's smallest side)
  PairForce force;      // the potential and its parameters (pair_force.hpp)
};

struct BodyForces {
  std::size_t dim = 3;
  std::vector<double> force;    // n × dim, row-major: the force on each body
  std::vector<double> energy;   // n: each body's half of its pairs' energies
  std::vector<std::uint64_t> partners;  // n: its pairs within the cutoff
  double total_energy = 0;      // Σ over pairs of E (= Σ energy, summed exactly)
  double virial = 0;            // Σ over pairs of d·F = f·r² (W; pressure P = (N k T + W/D) / V)
  double closest = 0;           // the closest separation found (a lower bound within 2^(1/4))
  double fine = 0;              // 99% of the pairs at least this far apart: the grids keep 62 bits of their terms
  RunInfo info;                 // the force run's (backend, threads, time, plan)
};

// The forces on `bodies` (1- to 3-D) from each other: Lennard-Jones (charges empty), or cutoff
// Coulomb with `charges` (one a body). A first run bins the pairs' separations to find the
// closest pair, which fixes the sums' grids; coincident bodies, or bodies closer than C·2⁻⁴⁰, are
// an Error(Input) naming the two. `box`: minimum image in an orthorhombic box (bodies inside
// [0, L); a triclinic cell or C > L/2 are refused).
BodyForces short_range_forces(const PointSet& bodies, std::span<const double> charges, const ForceOptions& o,
                              const std::optional<Box>& box, const RunOptions& run = {});

// The Statistic the force run is (for run(), explain()): `closest` a lower bound on the
// separation of every pair within the cutoff, `fine` (0: closest) that of all but a few
// (reduce::PointSums).
Statistic forces_statistic(const ForceOptions& o, const std::optional<Box>& box, double closest, bool charged,
                           double fine = 0);

}  // namespace twobody
