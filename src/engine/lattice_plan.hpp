#pragma once
// A lattice map's run as the planner fixed it (src/engine/lattice.cpp): what a backend's lattice
// traversal takes. Everything that decides bits is here and fixed before the run (the sum grid
// from a bound over the whole input); the rest (bin size, threads) is speed only.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "twobody/detail/engine/phase_clock.hpp"
#include "twobody/exact_sums.hpp"
#include "twobody/lattice.hpp"

namespace twobody {

struct LatticePlan {
  const reduce::OntoLattice* stat = nullptr;
  const LatticeSources* sources = nullptr;
  int components = 1;         // 2 when the sources carry imaginary parts
  SumGrid grid;               // 31-bit terms (Single, int64 sums) or 62-bit (Double, int128)
  LatticeErrorBound bound;
  int bin_nodes = 4;          // bins are boxes of bin_nodes³ lattice cells, aligned to the nodes
  int threads = 1;
  // A bound on every coordinate's magnitude the rule meets (sources, origin, nodes, images): the
  // float64 rounding of a displacement is a few units of its last place (lattice_screen.hpp).
  double coordinate_scale = 0;
  std::function<void(double)> progress;
  std::string explanation;
  // The run's phases (--explain's "phases" line): a backend laps its own into it. Null: nobody asked.
  PhaseClock* clock = nullptr;
  void lap(std::string_view phase) const {
    if (clock) clock->lap(phase);
  }
};

// Validates a request and plans it (src/engine/lattice.cpp): what run() does before a backend
// takes it; tests read the plan's screen and bins through it.
LatticePlan make_lattice_plan(const reduce::OntoLattice& stat, const LatticeSources& sources, const RunOptions& opt);

namespace lattice {
struct Binned;
}  // namespace lattice

namespace cpu {
// The CPU backend's lattice traversal (src/cpu/lattice_traversal.cpp): values, mask and term count.
void run_lattice(const LatticePlan& plan, LatticeMap& out);

// The same traversal's integer sums, before any value is made of them, over the sources of `bins`
// (lattice::Binned, on the plan's axes): seed 002's overflow of a capped depth, summed on the CPU
// while the GPU gathers the regular bins, the two added as integers on the plan's grid, which gives
// the bits of one traversal over every source. nodes × components, x fastest.
struct LatticeSums {
  std::vector<std::int64_t> narrow;    // Single: 64-bit sums
  std::vector<FixedSum> wide;          // Double: 128-bit sums
  std::vector<std::uint8_t> excluded;  // Coulomb: 1 where a source excludes the node
  std::uint64_t terms = 0;
};
LatticeSums lattice_sums(const LatticePlan& plan, const lattice::Binned& bins);
}  // namespace cpu

namespace cuda {
// The CUDA backend's (src/cuda/lattice_gather.cu): the same values, mask and count, bit for bit.
void run_lattice_on_device(const LatticePlan& plan, LatticeMap& out);
}  // namespace cuda

}  // namespace twobody
