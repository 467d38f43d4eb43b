#include "twobody/forces.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "twobody/detail/engine/planner.hpp"
#include "twobody/error.hpp"

namespace twobody {

namespace {

// Pairs closer than C·2^-kCloseOctaves are refused: their forces (beyond ~10^150 for LJ) mean
// coincident or overlapping bodies, as an MD code's "atoms too close".
constexpr int kCloseOctaves = 40;
constexpr int kBinsPerOctave = 4;

Statistic separation_histogram(double cutoff, const std::optional<Box>& box) {
  // [0, C·2^-40), then bins of a quarter octave up to C: the first pair's bin bounds the closest
  // separation from below within a factor 2^(1/4) (the grids lose under 2 bits of 62 to it).
  std::vector<double> edges{0.0};
  for (int k = 0; k <= kCloseOctaves * kBinsPerOctave; ++k)
    edges.push_back(cutoff * std::exp2(static_cast<double>(k) / kBinsPerOctave - kCloseOctaves));
  edges.back() = cutoff;
  Statistic s;
  s.metric = box ? Metric::Periodic : Metric::Euclidean;
  if (box) s.box = *box;
  s.reduction = reduce::Histogram{Binning::from_edges(std::move(edges))};
  return s;
}

struct Separations {
  double closest = 0;  // a lower bound on every pair's separation
  double fine = 0;     // 99% of the pairs are at least this far apart
};

// The closest separation of the pairs within the cutoff (a lower bound on it; the cutoff when
// there is no pair) and the separation of the closest percent of them, or Error(Input) naming the
// closest pair when it is below C·2^-40.
Separations separations(const PointSet& bodies, double cutoff, const std::optional<Box>& box, const RunOptions& run) {
  const Statistic h = separation_histogram(cutoff, box);
  RunOptions first = run;
  if (run.on_plan)
    first.on_plan = [&run](const std::string& plan) {
      run.on_plan("forces, first pass: the closest pair within the cutoff (quarter-octave bins), which fixes the sums' "
                  "grids\n" + plan);
    };
  const Result r = twobody::run(h, bodies, nullptr, first);
  const auto& e = std::get<reduce::Histogram>(h.reduction).bins;
  std::size_t k = 0;
  while (k < r.counts.size() && r.counts[k] == 0) ++k;
  if (k == r.counts.size()) return {cutoff, cutoff};
  if (k > 0) {
    std::uint64_t total = 0, below = 0;
    for (auto c : r.counts) total += c;
    std::size_t f = k;
    while (f + 1 < r.counts.size() && (below + r.counts[f]) * 100 <= total) below += r.counts[f++];
    return {e.lo(k), e.lo(f)};
  }
  // Name the closest pair (the first by index among equals): a pair list of the close ones.
  Statistic close = h;
  close.reduction = reduce::PairList{Binning::from_edges({0.0, e.hi(0)})};
  RunOptions o = run;
  o.on_plan = nullptr;
  o.progress = nullptr;
  PairRecord best{0, 0, std::numeric_limits<double>::infinity()};
  o.pair_sink = [&](std::span<const PairRecord> pairs) {
    for (const PairRecord& p : pairs)
      if (p.value < best.value || (p.value == best.value && (p.i != best.i ? p.i < best.i : p.j < best.j))) best = p;
  };
  twobody::run(close, bodies, nullptr, o);
  const auto i = std::min(best.i, best.j) + 1, j = std::max(best.i, best.j) + 1;
  if (best.value == 0)
    throw_input(fmt::format("bodies {} and {} coincide (distance 0): the force between them is infinite; remove "
                            "duplicates", i, j));
  throw_input(fmt::format("bodies {} and {} are {:.6g} apart, closer than the cutoff times 2^-{} ({:.6g}): overlapping "
                          "bodies, whose forces overflow", i, j, best.value, kCloseOctaves, e.hi(0)));
}

}  // namespace

Statistic forces_statistic(const ForceOptions& o, const std::optional<Box>& box, double closest, bool charged,
                           double fine) {
  Statistic s;
  s.metric = box ? Metric::Periodic : Metric::Euclidean;
  if (box) s.box = *box;
  s.weighted = charged;
  s.reduction = reduce::PointSums{Binning::linear(0.0, o.cutoff, 1), o.force, closest, fine};
  return s;
}

BodyForces short_range_forces(const PointSet& bodies, std::span<const double> charges, const ForceOptions& o,
                              const std::optional<Box>& box, const RunOptions& run) {
  const bool coulomb = o.force.potential == PairPotential::CoulombSwitched;
  if (coulomb != !charges.empty())
    throw_config(coulomb ? "Coulomb forces need a charge for every body" : "Lennard-Jones forces take no charges");
  if (!(o.cutoff > 0) || !std::isfinite(o.cutoff))
    throw_config(fmt::format("the cutoff must be a finite number > 0, not {}", o.cutoff));
  // Validated before the first pass: the statistic with a stand-in closest separation.
  const PointSet* body_set = &bodies;
  PointSet charged;
  if (coulomb) {
    if (charges.size() != bodies.size())
      throw_input(fmt::format("{} charges for {} bodies", charges.size(), bodies.size()));
    charged = bodies;
    charged.set_weights(std::vector<double>(charges.begin(), charges.end()));
    charged.check_finite("the bodies");
    body_set = &charged;
  }
  const Statistic check = forces_statistic(o, box, o.cutoff, coulomb);
  make_plan(check, *body_set, nullptr, run);
  const Separations sep = separations(*body_set, o.cutoff, box, run);
  const Statistic s = forces_statistic(o, box, sep.closest, coulomb, sep.fine);
  const Result r = twobody::run(s, *body_set, nullptr, run);
  BodyForces f;
  const std::size_t n = bodies.size(), cols = r.per_point_a.components, dim = cols - 1;
  f.dim = dim;
  f.force.resize(n * dim);
  f.energy.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t d = 0; d < dim; ++d) f.force[i * dim + d] = r.per_point_a.sums[i * cols + d];
    f.energy[i] = r.per_point_a.sums[i * cols + dim];
  }
  f.partners = r.per_point_a.counts;
  f.total_energy = r.totals.at(0);
  f.virial = r.totals.at(1);
  f.closest = sep.closest;
  f.fine = sep.fine;
  f.info = r.info;
  return f;
}

}  // namespace twobody
