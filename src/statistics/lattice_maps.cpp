// The named lattice maps: each a reduce::OntoLattice over its sources.
#include "twobody/lattice_maps.hpp"

#include <fmt/format.h>

#include "twobody/error.hpp"

namespace twobody {

namespace {

Lattice place(const PointSet& p, const LatticePlacement& at) {
  if (at.lattice) return *at.lattice;
  if (!std::isfinite(at.spacing) || !(at.spacing > 0)) throw_config(fmt::format("the spacing must be > 0 (got {})", at.spacing));
  return Lattice::spanning(p, {at.spacing, at.spacing, at.spacing}, at.padding);
}

}  // namespace

LatticeMap potential_map(const PointSet& atoms, std::span<const double> charges, const PotentialOptions& o,
                         const RunOptions& run_options) {
  reduce::OntoLattice stat;
  stat.lattice = place(atoms, o.at);
  stat.function.kind = LatticeKernel::CoulombSwitched;
  stat.function.cutoff = o.cutoff;
  stat.function.exclusion = o.exclusion;
  stat.precision = o.precision;
  stat.binning = o.binning;
  stat.bin_depth = o.bin_depth;
  LatticeSources s{&atoms, charges, {}, {}};
  return run(stat, s, run_options);
}

LatticeMap density_map(const PointSet& points, std::span<const double> radii, std::span<const double> weights,
                       const DensityOptions& o, const RunOptions& run_options) {
  reduce::OntoLattice stat;
  stat.lattice = place(points, o.at);
  stat.function.kind = LatticeKernel::BlinnBlob;
  stat.function.cutoff = o.cutoff;
  stat.function.blobbiness = o.blobbiness;
  stat.precision = o.precision;
  stat.binning = o.binning;
  stat.bin_depth = o.bin_depth;
  LatticeSources s{&points, weights, {}, radii};
  return run(stat, s, run_options);
}

LatticeMap grid_samples(const PointSet& k, std::span<const double> re, std::span<const double> im,
                        std::span<const double> sdc, const GriddingOptions& o, const RunOptions& run_options) {
  if (k.dim() != 2 && k.dim() != 3) throw_config(fmt::format("k-space samples are 2-D or 3-D, not {}-D", k.dim()));
  if (re.size() != k.size() || im.size() != k.size())
    throw_input(fmt::format("{} samples but {} real and {} imaginary values", k.size(), re.size(), im.size()));
  reduce::OntoLattice stat;
  stat.lattice = Lattice::centred_grid(k.dim(), o.grid);
  for (bool& p : stat.lattice.periodic) p = p && o.wrap;
  stat.function.kind = LatticeKernel::KaiserBessel;
  stat.function.cutoff = o.width / 2;
  stat.function.beta = o.beta;
  stat.function.oversampling = o.oversampling;
  stat.function.support = o.separable ? Support::Box : Support::Ball;
  stat.precision = o.precision;
  stat.binning = o.binning;
  stat.bin_depth = o.bin_depth;
  // Density compensation multiplied in once, in float64.
  std::vector<double> wre(re.begin(), re.end()), wim(im.begin(), im.end());
  if (!sdc.empty()) {
    if (sdc.size() != k.size()) throw_input(fmt::format("{} samples but {} density compensation weights", k.size(), sdc.size()));
    for (std::size_t i = 0; i < sdc.size(); ++i) {
      wre[i] *= sdc[i];
      wim[i] *= sdc[i];
    }
  }
  LatticeSources s{&k, wre, wim, {}};
  return run(stat, s, run_options);
}

}  // namespace twobody
