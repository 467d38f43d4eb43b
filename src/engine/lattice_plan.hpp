#pragma once
// A lattice map's run as the planner fixed it (src/engine/lattice.cpp): what a backend's lattice
// traversal takes. Everything that decides bits is here and fixed before the run (the sum grid
// from a bound over the whole input); the rest (bin size, threads) is speed only.
#include <functional>
#include <string>

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
  std::function<void(double)> progress;
  std::string explanation;
};

namespace cpu {
// The CPU backend's lattice traversal (src/cpu/lattice_traversal.cpp): values, mask and term count.
void run_lattice(const LatticePlan& plan, LatticeMap& out);
}  // namespace cpu

namespace cuda {
// The CUDA backend's (src/cuda/lattice_gather.cu): the same values, mask and count, bit for bit.
void run_lattice_on_device(const LatticePlan& plan, LatticeMap& out);
}  // namespace cuda

}  // namespace twobody
