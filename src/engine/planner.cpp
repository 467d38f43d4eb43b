// The planner: validates a statistic against its points, maps the binning to key space and
// writes down what will run and why (the CLI's --explain).
#include <fmt/format.h>
#include <algorithm>
#include <omp.h>

#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/engine/exact_sums.hpp"
#include "twobody/error.hpp"
#include "twobody/detail/engine/metric_dispatch.hpp"
#include "twobody/detail/engine/memory.hpp"
#include "twobody/detail/engine/planner.hpp"
#include "twobody/detail/engine/reductions.hpp"

namespace twobody {

namespace {

// A triclinic cell holds the points whose fractional coordinates (Box::cell_coordinates, the
// rule wrap_into_box follows) lie in [0, 1).
void check_inside_cell(const PointSet& p, const Box& box, const char* which) {
  const double* xs = p.coord(0).data();
  const double* ys = p.coord(1).data();
  const double* zs = p.coord(2).data();
  const auto outside = [&](std::ptrdiff_t i) {
    const auto f = box.cell_coordinates(xs[i], ys[i], zs[i]);
    return !(f[0] >= 0.0 && f[0] < 1.0 && f[1] >= 0.0 && f[1] < 1.0 && f[2] >= 0.0 && f[2] < 1.0);
  };
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(p.size());
  std::ptrdiff_t bad = 0;
#pragma omp parallel for reduction(+ : bad) if (n > 100000)
  for (std::ptrdiff_t i = 0; i < n; ++i) bad += outside(i);
  if (bad == 0) return;
  for (std::ptrdiff_t i = 0; i < n; ++i)
    if (outside(i)) {
      const auto f = box.cell_coordinates(xs[i], ys[i], zs[i]);
      throw_input(fmt::format("{}point {} ({}, {}, {}) lies outside the periodic cell {} (fractional coordinates ({}, "
                              "{}, {}), not all in [0, 1)); pass --wrap to wrap points into the cell",
                              which, i + 1, xs[i], ys[i], zs[i], box.describe(), f[0], f[1], f[2]));
    }
}

void check_inside_box(const PointSet& p, const Box& box, const char* which) {
  if (box.triclinic()) return check_inside_cell(p, box, which);
  for (int d = 0; d < p.dim(); ++d) {
    const auto x = p.coord(d);
    // A threaded count first (most inputs are fine), then the first offender for the message.
    const double L = box.length[d];
    const double* xs = x.data();
    const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(x.size());
    std::ptrdiff_t bad = 0;
#pragma omp parallel for simd reduction(+ : bad) if (n > 100000)
    for (std::ptrdiff_t i = 0; i < n; ++i) bad += !(xs[i] >= 0.0 && xs[i] < L);
    if (bad == 0) continue;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!(x[i] >= 0.0 && x[i] < box.length[d]))
        throw_input(fmt::format("{}point {} lies outside the periodic box [0, {}) in coordinate "
                                "{} (value {}); pass --wrap to wrap points into the box",
                                which, i + 1, box.length[d], d + 1, x[i]));
  }
}

// 2-D bins about the z axis: 3-D Cartesian points, open or periodic, a histogram; the minimum
// image unique along every axis the bins reach. The histogram's edges are the flat bin indices.
Plan make_plan_2d(const Statistic& s, const PointSet& a, const PointSet* b, const RunOptions& opt) {
  const Binning2D& bins = s.binning2d();
  if (s.metric == Metric::Angular)
    throw_config("2-D (r_p, pi) and (s, mu) bins need Cartesian points (open or periodic), not angles");
  if (a.dim() != 3)
    throw_config(fmt::format("2-D (r_p, pi) and (s, mu) bins need 3-D points (x, y, z; the line of sight is z), not {}-D",
                             a.dim()));
  Plan p = make_plan_base(s, a, b, opt, 3);
  if (s.metric == Metric::Periodic) {
    if (s.box.dim != 3) throw_config(fmt::format("the box has {} sides but the points have 3 coordinates", s.box.dim));
    if (s.box.triclinic())
      throw_config("2-D (r_p, pi) and (s, mu) bins take an orthorhombic box (the line of sight is z): not a triclinic cell");
    check_inside_box(a, s.box, b ? "first set: " : "");
    if (b) check_inside_box(*b, s.box, "second set: ");
    const double lx = s.box.length[0], ly = s.box.length[1], lz = s.box.length[2];
    const double across = bins.outer().hi(), along = bins.inner().hi();
    if (bins.kind() == Binning2D::Kind::RpPi) {
      if (across > 0.5 * std::min(lx, ly))
        throw_config(fmt::format("rpmax {} exceeds half the periodic box across the line of sight ({}): the minimum "
                                 "image is only unique up to L/2", across, 0.5 * std::min(lx, ly)));
      if (along > 0.5 * lz)
        throw_config(fmt::format("pimax {} exceeds half the periodic box along the line of sight ({}): the minimum "
                                 "image is only unique up to L/2", along, 0.5 * lz));
    } else if (across > 0.5 * s.box.min_length()) {
      throw_config(fmt::format("smax {} exceeds half the periodic box ({}): the minimum image is only unique up to L/2",
                               across, 0.5 * s.box.min_length()));
    }
  }
  std::vector<double> flat(bins.nbins() + 1);
  for (std::size_t k = 0; k < flat.size(); ++k) flat[k] = static_cast<double>(k);
  p.edges = KeyEdges::from_keys(std::move(flat));
  p.explanation = fmt::format("metric: {} 3-D{}, 2-D bins {}, pairs within {} of each other\n{}",
                              to_string(s.metric), s.metric == Metric::Periodic ? " in box " + s.box.describe() : "",
                              bins.midpoint_los()
                                  ? "about each pair's midpoint line of sight l = (a + b)/2 (squared r_p or s edges; "
                                    "pi^2 = (s.l)^2/|l|^2, mu^2 = (s.l)^2/(|l|^2 |s|^2))"
                                  : "about the z axis (squared r_p or s edges; pi = |dz|, mu = sqrt(dz^2/s^2))",
                              bins.cutoff(), p.explanation);
  return p;
}

// Forces: the potential, the cutoff and the grids the closest separation fixed.
std::string point_sums_text(const Statistic& s, const SumGrids& g) {
  const auto& p = std::get<reduce::PointSums>(s.reduction);
  const PairForce& f = p.force;
  const std::string potential =
      f.potential == PairPotential::LennardJones
          ? fmt::format("Lennard-Jones 4e((s/r)^12 - (s/r)^6), epsilon {}, sigma {}{}", f.epsilon, f.sigma,
                        f.shift ? ", shifted to 0 at the cutoff" : "")
          : std::string("cutoff Coulomb q_i q_j (1 - r^2/C^2)^2 / r (charges: the weights)");
  return fmt::format(": per point, the force and energy of its pairs within [0, {}): {}; each pair once in float64, "
                     "(F, E/2) to one point and (-F, E/2) to the other\n"
                     "sums: exact, 192 bits wide, on grids keeping 62 bits of the terms of the pairs at least {:.6g} apart "
                     "(99% of them; the closest {:.6g}): force step 2^{}, energy step 2^{}, virial step 2^{} (a term "
                     "within step/2 of its float64 value; Sum F = 0 exactly)",
                     p.range.hi(), potential, std::max(p.fine, p.closest), p.closest, g.force.exponent, g.energy.exponent,
                     g.virial.exponent);
}

}  // namespace

int run_threads(const RunOptions& opt) {
  if (opt.threads < 0) throw_config(fmt::format("threads must be 0 (all) or positive, not {}", opt.threads));
  // More threads than processors only share them, and each holds its own partial results: capped.
  return opt.threads > 0 ? std::min(opt.threads, omp_get_num_procs()) : omp_get_max_threads();
}

Plan make_plan_base(const Statistic& s, const PointSet& a, const PointSet* b, const RunOptions& opt,
                    int dim) {
  const bool is_auto = s.traversal == Traversal::Auto;
  if (is_auto && b) throw_config("auto traversal takes one point set; use cross for two");
  if (!is_auto && !b) throw_config("cross traversal needs a second point set");
  if (a.empty()) throw_input("the point set is empty");
  if (b && b->empty()) throw_input("the second point set is empty");
  if (b && b->dim() != a.dim())
    throw_config(fmt::format("the two point sets have {} and {} coordinates", a.dim(), b->dim()));
  if (a.dim() != dim)
    throw_config(fmt::format("the pair function takes {}-D points, the data are {}-D", dim, a.dim()));
  if (s.weighted && (!a.has_weights() || (b && !b->has_weights())))
    throw_config("weighted counts need a weight for every point of both sets");
  const bool two_d = s.binning2d().active();
  if (s.output() != OutputKind::Matrix && !two_d && s.binning().nbins() == 0)
    throw_config("the statistic has no bins");
  validate_reduction(s, a, b);

  const PointSet& bb = b ? *b : a;
  if (s.output() == OutputKind::Matrix) {
    require_memory(8.0 * static_cast<double>(a.size()) * static_cast<double>(bb.size()),
                   fmt::format("a {} x {} matrix", a.size(), bb.size()));
  }

  Plan p;
  p.stat = &s;
  p.a = &a;
  p.b = &bb;
  p.threads = run_threads(opt);
  p.max_pairs = opt.max_pairs;
  p.pair_sink = opt.pair_sink;
  if (opt.resident && &opt.resident->points() == &a) p.resident = opt.resident;
  if (opt.path != "auto" && opt.path != "brute" && opt.path != "grid")
    throw_config(fmt::format("unknown traversal path '{}' (auto, brute or grid)", opt.path));
  p.path = opt.path;
  p.progress = opt.progress;
  p.grids = opt.sum_grids ? *opt.sum_grids : sum_grids_for(s, a, b);
  const std::size_t nbins = two_d ? s.binning2d().nbins() : s.binning().nbins();
  p.explanation = fmt::format(
      "traversal {}: {} x {} points, {} distinct pairs\n"
      "output: {}{}{}",
      is_auto ? "auto (each unordered pair once)" : "cross (every (i, j))", a.size(), bb.size(),
      pair_total(a.size(), bb.size(), is_auto), to_string(s.output()),
      s.output() == OutputKind::Matrix ? std::string()
      : std::holds_alternative<reduce::PointSums>(s.reduction) ? point_sums_text(s, p.grids)
      : s.output() == OutputKind::PerPoint
          ? fmt::format(": for every point {}, its partners in [{}, {}){}", is_auto ? "(each pair adds to both of its points)" : "of both sets (in the other set)",
                        s.binning().lo(), s.binning().hi(), s.weighted ? " and the sum of their weights" : "")
      : two_d ? fmt::format(" over {} 2-D bins {}", nbins, s.binning2d().describe())
              : fmt::format(" over {} bin(s) [{}, {})", nbins, s.binning().lo(), s.binning().hi()),
      s.regions() > 0 ? fmt::format(", and per jackknife region ({} regions x {} bins)", s.regions(), nbins)
                    : std::string());
  return p;
}

Plan make_plan(const Statistic& s, const PointSet& a, const PointSet* b, const RunOptions& opt) {
  int dim = a.dim();
  if (s.metric == Metric::Cosine)
    throw_config("the cosine distance is a metric of vectors (twobody/vectors.hpp: joins and k-NN), not of points");
  if (s.output() == OutputKind::Nearest)
    throw_config("k nearest neighbours run on vectors (twobody/vectors.hpp: nearest_neighbours, twobody knn)");
  if (s.metric == Metric::Angular && a.dim() != 3)
    throw_config(fmt::format("angular separations need unit vectors (3 coordinates), not {}-D "
                             "points; RA/Dec are converted by the angular statistic", a.dim()));
  if (dim < 1 || dim > kMaxDim)
    throw_config(fmt::format("{}-D points are not supported (1 to {})", dim, kMaxDim));
  if (s.binning2d().active()) return make_plan_2d(s, a, b, opt);
  Plan p = make_plan_base(s, a, b, opt, dim);
  if (s.metric == Metric::Periodic) {
    if (s.box.dim != dim)
      throw_config(fmt::format("the box has {} sides but the points have {} coordinates", s.box.dim, dim));
    check_inside_box(a, s.box, b ? "first set: " : "");
    if (b) check_inside_box(*b, s.box, "second set: ");
    if (s.box.triclinic()) {
      // Beyond the inscribed-sphere radius the minimum image is neither unique nor among the
      // eight images PeriodicTriclinic compares; a matrix holds every separation, so it has none.
      if (s.output() == OutputKind::Matrix)
        throw_config(fmt::format("a distance matrix holds every separation, but in a triclinic cell the minimum image is "
                                 "exact only up to the inscribed-sphere radius {}: bin the pairs instead (rmax up to {})",
                                 s.box.max_cutoff(), s.box.max_cutoff()));
      if (s.binning().hi() > s.box.max_cutoff())
        throw_config(fmt::format("rmax {} exceeds the triclinic cell's inscribed-sphere radius {} (half the smallest "
                                 "distance between opposite faces, {}): the minimum image is only unique up to it",
                                 s.binning().hi(), s.box.max_cutoff(), 2 * s.box.max_cutoff()));
    } else if (s.output() != OutputKind::Matrix && s.binning().hi() > 0.5 * s.box.min_length()) {
      throw_config(fmt::format("rmax {} exceeds half the periodic box ({}): the minimum image is "
                               "only unique up to L/2", s.binning().hi(), 0.5 * s.box.min_length()));
    }
  }
  if (s.metric == Metric::Angular && s.output() != OutputKind::Matrix && s.binning().hi() > 180.0)
    throw_config(fmt::format("angular bins end at {} degrees, beyond 180", s.binning().hi()));
  if (s.output() != OutputKind::Matrix)
    p.edges = visit_pair_function(s, dim, [&](const auto& f) { return KeyEdges::make(s.binning(), f, s.includes_hi()); });
  p.explanation = fmt::format("metric: {} {}-D{}, binned on {}\n{}", to_string(s.metric), dim,
                              s.metric == Metric::Periodic ? " in box " + s.box.describe() : "",
                              s.metric == Metric::Angular ? "-cos(theta) edges" : "squared edges",
                              p.explanation);
  return p;
}

}  // namespace twobody
