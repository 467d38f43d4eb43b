// Lattice maps: the lattice's own rules, the validation of a request, its plan (the sum grid from
// the terms' bound over the whole input, the bin size) and the dispatch to a backend.
#include "twobody/lattice.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <numbers>
#include <utility>

#include <fmt/format.h>

#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/engine/devices.hpp"
#include "twobody/detail/engine/first_where.hpp"
#include "twobody/detail/engine/lattice_plan.hpp"
#include "twobody/detail/engine/phase_clock.hpp"
#include "twobody/detail/exact/lattice_bounds.hpp"
#include "twobody/error.hpp"

namespace twobody {

std::uint64_t Lattice::nodes() const {
  return static_cast<std::uint64_t>(shape[0]) * static_cast<std::uint64_t>(shape[1]) *
         static_cast<std::uint64_t>(shape[2]);
}

void Lattice::validate() const {
  if (dim != 2 && dim != 3) throw_config(fmt::format("a lattice has 2 or 3 axes, not {}", dim));
  for (int k = 0; k < 3; ++k) {
    const bool used = k < dim;
    if (used && (!std::isfinite(spacing[k]) || !(spacing[k] > 0)))
      throw_config(fmt::format("the lattice spacing along axis {} must be finite and > 0 (got {})", k, spacing[k]));
    if (used && !std::isfinite(origin[k])) throw_config(fmt::format("the lattice origin along axis {} is not finite", k));
    if (shape[k] < 1) throw_config(fmt::format("the lattice needs at least one node along axis {} (got {})", k, shape[k]));
    if (!used && shape[k] != 1) throw_config("a 2-D lattice has one node along its third axis");
    if (shape[k] > (std::int64_t(1) << 24))
      throw_config(fmt::format("{} nodes along axis {} is more than a lattice may have (2^24)", shape[k], k));
  }
  if (nodes() > (std::uint64_t(1) << 40)) throw_config(fmt::format("a lattice of {} nodes is too large", nodes()));
}

Lattice Lattice::spanning(const PointSet& points, std::array<double, 3> h, double padding) {
  if (points.empty()) throw_input("a lattice spanning the sources needs at least one source");
  if (!std::isfinite(padding) || padding < 0) throw_config("the padding must be finite and >= 0");
  Lattice L;
  L.dim = points.dim();
  if (L.dim != 2 && L.dim != 3) throw_config(fmt::format("lattice maps take 2-D or 3-D points, not {}-D", L.dim));
  L.spacing = h;
  for (int k = 0; k < L.dim; ++k) {
    if (!std::isfinite(h[k]) || !(h[k] > 0)) throw_config("the lattice spacing must be finite and > 0");
    const auto [lo, hi] = joint_range(points, points, k);
    L.origin[k] = lo - padding;
    const double extent = (hi + padding) - L.origin[k];
    const double cells = std::ceil(extent / h[k]);
    if (!(cells < double(std::int64_t(1) << 24)))
      throw_config(fmt::format("the sources span {:.6g} along axis {}: more than 2^24 spacings of {:.6g}", extent, k, h[k]));
    L.shape[k] = static_cast<std::int64_t>(cells) + 1;
  }
  if (L.dim == 2) L.spacing[2] = 1;
  L.validate();
  return L;
}

Lattice Lattice::centred_grid(int dim, std::array<std::int64_t, 3> n) {
  Lattice L;
  L.dim = dim;
  L.shape = n;
  if (dim == 2) L.shape[2] = 1;
  for (int k = 0; k < dim; ++k) {
    L.origin[k] = -static_cast<double>(n[k] / 2);
    L.periodic[k] = true;
  }
  L.validate();
  return L;
}

double LatticeFunction::kaiser_bessel_beta() const {
  const double W = 2 * cutoff, s = oversampling;
  const double arg = W * W / (s * s) * (s - 0.5) * (s - 0.5) - 0.8;
  if (!(s > 0.5) || !(arg > 0))
    throw_config(fmt::format("no default Kaiser–Bessel beta for width {} and oversampling {}: give --beta", W, s));
  return std::numbers::pi * std::sqrt(arg);
}

namespace {

const char* kind_name(LatticeKernel k) {
  switch (k) {
    case LatticeKernel::CoulombSwitched: return "switched Coulomb q·(1 − r²/C²)²/r";
    case LatticeKernel::BlinnBlob: return "Blinn blob w·exp(B·(1 − r²/R²))";
    case LatticeKernel::KaiserBessel: return "Kaiser–Bessel I0(β·sqrt(1 − r²/a²))/I0(β)";
  }
  return "?";
}

// A column's first bad value reported (one parallel pass: 3·10^7 sources are 0.24 GB a column).
void check_column(std::span<const double> v, std::size_t n, const char* what, bool positive) {
  if (v.empty()) return;
  if (v.size() != n) throw_input(fmt::format("{} {} values for {} sources", v.size(), what, n));
  const std::size_t first =
      first_where(v.data(), n, [positive](double x) { return !std::isfinite(x) || (positive && !(x > 0)); });
  if (first < n)
    throw_input(fmt::format("source {}: {} {} is not {}", first + 1, what, v[first], positive ? "finite and > 0" : "finite"));
}

// A column's range and largest magnitude, and whether every value is finite, in one parallel
// pass (x − x is 0 exactly when x is finite, NaN otherwise, and a NaN stays in the sum): the plan
// reads 2.66·10^6 MRI samples' five columns once, not in ten passes (check, range, magnitude).
struct ColumnScan {
  double lo = HUGE_VAL, hi = -HUGE_VAL, most = 0;
  bool finite = true;
};
ColumnScan scan_column(std::span<const double> v) {
  double lo = HUGE_VAL, hi = -HUGE_VAL, most = 0, nan_if_bad = 0;
  const std::ptrdiff_t m = static_cast<std::ptrdiff_t>(v.size());
  const double* x = v.data();
#pragma omp parallel for simd reduction(min : lo) reduction(max : hi, most) reduction(+ : nan_if_bad) if (m > 100000)
  for (std::ptrdiff_t i = 0; i < m; ++i) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
    const double a = std::fabs(x[i]);
    most = a > most ? a : most;
    nan_if_bad += x[i] - x[i];
  }
  return {lo, hi, most, nan_if_bad == 0};
}

// What the plan reads of the sources: each coordinate's scan, and the values' largest magnitude.
struct SourceScan {
  std::array<ColumnScan, 3> coord;
  double max_strength = 0;
};

double smallest(std::span<const double> v) {
  double least = INFINITY;
  const std::ptrdiff_t m = static_cast<std::ptrdiff_t>(v.size());
#pragma omp parallel for reduction(min : least) if (m > 100000)
  for (std::ptrdiff_t i = 0; i < m; ++i) least = std::min(least, v[i]);
  return least;
}

SourceScan validate(const reduce::OntoLattice& stat, const LatticeSources& src) {
  const Lattice& L = stat.lattice;
  const LatticeFunction& fn = stat.function;
  L.validate();
  if (!src.points) throw_input("a lattice map needs its sources");
  const PointSet& p = *src.points;
  if (p.dim() != L.dim) throw_config(fmt::format("{}-D sources onto a {}-D lattice", p.dim(), L.dim));
  SourceScan scan;
  bool finite = true;
  for (int k = 0; k < p.dim(); ++k) {
    scan.coord[static_cast<std::size_t>(k)] = scan_column(p.coord(k));
    finite = finite && scan.coord[static_cast<std::size_t>(k)].finite;
  }
  if (!finite || p.has_weights()) p.check_finite("the sources");  // (names the first bad coordinate)
  scan.max_strength = src.strength.empty() ? 1.0 : 0.0;
  for (const auto& [column, what] : {std::pair{src.strength, "strength"}, std::pair{src.strength_im, "imaginary part"}}) {
    if (column.empty()) continue;
    if (column.size() != p.size()) check_column(column, p.size(), what, false);  // (throws: the sizes)
    const ColumnScan c = scan_column(column);
    if (!c.finite) check_column(column, p.size(), what, false);  // (throws: names the first)
    scan.max_strength = std::max(scan.max_strength, c.most);
  }
  if (!std::isfinite(fn.cutoff) || !(fn.cutoff > 0)) throw_config(fmt::format("the cutoff must be finite and > 0 (got {})", fn.cutoff));
  switch (fn.kind) {
    case LatticeKernel::CoulombSwitched:
      if (fn.support != Support::Ball) throw_config("the Coulomb potential is radial");
      if (!std::isfinite(fn.exclusion) || !(fn.exclusion > 0) || fn.exclusion > fn.cutoff)
        throw_config(fmt::format("the exclusion radius must be > 0 and at most the cutoff (got {}): 1/r is unbounded at a source",
                                 fn.exclusion));
      break;
    case LatticeKernel::BlinnBlob:
      if (fn.support != Support::Ball) throw_config("Blinn blobs are radial");
      if (!std::isfinite(fn.blobbiness) || fn.blobbiness < 0 || fn.blobbiness > 700)
        throw_config(fmt::format("the blobbiness must be in [0, 700] (got {})", fn.blobbiness));
      if (src.radius.empty()) throw_input("Blinn blobs need a radius per source");
      check_column(src.radius, p.size(), "radius", true);
      break;
    case LatticeKernel::KaiserBessel: {
      const double beta = fn.beta > 0 ? fn.beta : fn.kaiser_bessel_beta();
      if (!std::isfinite(beta) || beta < 0 || beta > 700) throw_config(fmt::format("beta must be in [0, 700] (got {})", beta));
      break;
    }
  }
  if (fn.kind != LatticeKernel::BlinnBlob && !src.radius.empty()) throw_input("only Blinn blobs take radii");
  for (int k = 0; k < L.dim; ++k) {
    if (fn.cutoff / L.spacing[k] > double(1 << 20))
      throw_config(fmt::format("the cutoff {} spans more than 2^20 spacings along axis {}", fn.cutoff, k));
    if (L.periodic[k] && fn.cutoff > 0.5 * L.period(k))
      throw_config(fmt::format("the cutoff {} exceeds half the period {} of axis {}: the nearest image would not be unique",
                               fn.cutoff, L.period(k), k));
  }
  if (p.size() >= (std::size_t(1) << 32) && stat.precision == Precision::Single)
    throw_config("more than 2^32 sources need --precision double (64-bit sums hold 2^32 terms)");
  return scan;
}

int bin_nodes_for(const reduce::OntoLattice& stat) {
  if (const char* e = std::getenv("TWOBODY_LATTICE_BIN")) {
    const int k = std::atoi(e);
    if (k < 1 || k > 64) throw_config(fmt::format("TWOBODY_LATTICE_BIN={} is not in [1, 64]", e));
    return k;
  }
  // Bins of about a quarter of the cutoff (seed 002: cutcp's 2 Å bins for a 12 Å cutoff at
  // h = 0.5 Å give 4 nodes), at most a tile's 8 nodes.
  double h = stat.lattice.spacing[0];
  for (int k = 1; k < stat.lattice.dim; ++k) h = std::min(h, stat.lattice.spacing[k]);
  int k = 1;
  while (k < 8 && 2.0 * k <= stat.function.cutoff / (4 * h)) k *= 2;
  return k;
}

}  // namespace

LatticePlan make_lattice_plan(const reduce::OntoLattice& stat, const LatticeSources& src, const RunOptions& opt) {
  const SourceScan scan = validate(stat, src);
  const Lattice& L = stat.lattice;
  const PointSet& p = *src.points;
  LatticePlan plan;
  plan.stat = &stat;
  plan.sources = &src;
  plan.components = src.strength_im.empty() ? 1 : 2;
  plan.threads = opt.threads > 0 ? std::min(opt.threads, omp_get_num_procs()) : omp_get_max_threads();
  plan.progress = opt.progress;
  plan.bin_nodes = bin_nodes_for(stat);

  lattice::BoundInputs in;
  in.dim = L.dim;
  in.precision = stat.precision;
  in.cutoff = stat.function.cutoff;
  in.exclusion = stat.function.exclusion;
  double far = 0;
  for (int k = 0; k < L.dim; ++k) {
    in.max_spacing = std::max(in.max_spacing, L.spacing[k]);
    far = std::max(far, std::fabs(L.origin[k]) + L.period(k));
    if (p.empty()) continue;
    const double lo = scan.coord[static_cast<std::size_t>(k)].lo, hi = scan.coord[static_cast<std::size_t>(k)].hi;
    const double off = std::max(std::fabs(lo - L.origin[k]), std::fabs(hi - L.origin[k]));
    if (!(off / L.spacing[k] < 0x1p50))
      throw_input(fmt::format("a source lies {:.6g} from the lattice's origin along axis {}: more than 2^50 spacings", off, k));
    far += off;
  }
  in.coordinate_scale = far;
  plan.coordinate_scale = far;
  in.max_strength = scan.max_strength;
  in.min_radius = smallest(src.radius);
  const lattice::TermBound tb = lattice::term_bound(stat.function, in);
  const bool single = stat.precision == Precision::Single;
  plan.grid = lattice::sum_grid(tb.grid_bound, single ? 31 : 62);
  plan.bound.term = tb.term;
  plan.bound.step = std::ldexp(1.0, plan.grid.exponent);
  plan.bound.grid_bound = tb.grid_bound;

  std::string fn_text = kind_name(stat.function.kind);
  if (stat.function.kind == LatticeKernel::KaiserBessel)
    fn_text += fmt::format(", β = {:.6g}, {}", stat.function.beta > 0 ? stat.function.beta : stat.function.kaiser_bessel_beta(),
                           stat.function.support == Support::Box ? "separable (|d_k| < a on every axis)" : "radial");
  if (stat.function.kind == LatticeKernel::BlinnBlob) fn_text += fmt::format(", B = {:.6g}", stat.function.blobbiness);
  if (stat.function.kind == LatticeKernel::CoulombSwitched)
    fn_text += fmt::format(", nodes within {:.6g} of a source excluded", stat.function.exclusion);
  std::string shape = fmt::format("{} x {}", L.shape[0], L.shape[1]);
  if (L.dim == 3) shape += fmt::format(" x {}", L.shape[2]);
  plan.explanation = fmt::format(
      "lattice map: {} sources onto {} nodes ({}), origin ({:.9g}, {:.9g}, {:.9g}), spacing ({:.9g}, {:.9g}, {:.9g}){}\n"
      "function: {}, cutoff {:.9g}; {} values\n"
      "precision: {} (displacements and r² in {}, terms in float64), each term onto a sum grid of step 2^{} "
      "(terms ≤ {:.6g}) added as {}-bit integers: the same bits for any threads, tiles and bins\n"
      "error bound: a node of n terms within n·({:.3g} + {:.3g}) of its exact sum, then one rounding to {}\n"
      "bins: {} bins of {} nodes per axis (a counting sort, x fastest){}\n",
      p.size(), L.nodes(), shape, L.origin[0], L.origin[1], L.origin[2], L.spacing[0], L.spacing[1], L.spacing[2],
      (L.periodic[0] || L.periodic[1] || L.periodic[2]) ? ", periodic" : "", fn_text, stat.function.cutoff,
      plan.components == 2 ? "complex" : "real", single ? "single" : "double", single ? "float32" : "float64",
      plan.grid.exponent, tb.grid_bound, single ? 64 : 128, plan.bound.term, plan.bound.step / 2,
      single ? "float32" : "float64", stat.binning == LatticeBinning::Regular ? "regular" : "compact", plan.bin_nodes,
      stat.binning == LatticeBinning::Compact ? std::string()
      : stat.bin_depth > 0 ? fmt::format(", padded to a depth of {}, the excess summed on the CPU while the GPU gathers (seed 002's overflow)", stat.bin_depth)
                           : std::string(", padded to the deepest bin's depth"));
  return plan;
}

namespace {

// About how many terms a map adds: each source's support, in nodes (a ball of radius C, or the box
// of half-width C), times the sources. Only the choice of "auto" reads it.
double expected_terms(const reduce::OntoLattice& stat, const LatticeSources& sources) {
  const Lattice& L = stat.lattice;
  const double C = stat.function.cutoff, n = sources.points ? static_cast<double>(sources.points->size()) : 0.0;
  double per = 1;
  for (int k = 0; k < L.dim; ++k) per *= 2 * C / L.spacing[k];
  if (stat.function.support == Support::Ball) per *= L.dim == 3 ? std::numbers::pi / 6 : std::numbers::pi / 4;
  return n * per;
}

// Auto takes the GPU for maps of at least this many terms, when a device is present: below
// it the device's start-up, the upload and the map's way back cost more than the CPU's traversal
// (bench/RESULTS.md, 2026-11-28, 32 host threads against one H200: Blinn's 3.3·10^7 terms 0.74 s on
// the CPU and 0.97 s on the GPU; MRI's 1.7·10^8 2.8 s and 1.5 s; CutCP's 3·10^10 25 s and 1.4 s).
constexpr double kGpuTerms = 1e8;

// "cpu", "cuda" (the GPU, the CPU's bits), or "auto": the GPU for large maps, which the
// plan says.
std::unique_ptr<Backend> lattice_backend(const reduce::OntoLattice& stat, const LatticeSources& sources,
                                         const RunOptions& opt, std::string& why) {
  if (stat.bin_depth < 0) throw_config(fmt::format("a bin depth is a number of sources, not {}", stat.bin_depth));
  if (stat.binning == LatticeBinning::Compact && stat.bin_depth > 0)
    throw_config("a bin depth caps regular bins (--binning regular): compact bins are as deep as their sources");
  if (stat.binning == LatticeBinning::Regular && opt.backend != "cuda")
    throw_config("regular bins are seed 002's GPU baseline, for comparing with compact bins: --backend cuda");
  if (opt.backend == "hybrid")
    throw Error(ErrorKind::Backend, "lattice maps run on one backend: --backend cpu, cuda or auto");
  if (opt.backend == "auto") {
    const double terms = expected_terms(stat, sources);
    if (terms >= kGpuTerms) {
      if (auto gpu = make_cuda_backend()) {
        why = fmt::format(" (auto: about {:.2g} terms, at least {:.0e}: the GPU, the CPU's bits)", terms, kGpuTerms);
        return gpu;
      }
      why = fmt::format(" (auto: about {:.2g} terms, but no GPU: {})", terms, cuda_unavailable_reason());
      return make_cpu_backend();
    }
    why = fmt::format(" (auto: about {:.2g} terms, below {:.0e}: the CPU; --backend cuda runs the GPU, the same bits)",
                      terms, kGpuTerms);
    return make_cpu_backend();
  }
  return select_backend(opt.backend);
}

std::string backend_line(const Backend& b, const LatticePlan& plan, const std::string& why) {
  return fmt::format("backend: {} on {}{}\ntraversal: {}\n", b.name(), b.device(), why, b.describe_lattice(plan));
}

}  // namespace

LatticeMap run(const reduce::OntoLattice& stat, const LatticeSources& sources, const RunOptions& opt) {
  std::string why;
  const std::unique_ptr<Backend> backend = lattice_backend(stat, sources, opt, why);
  const auto t0 = std::chrono::steady_clock::now();
  PhaseClock clock;
  LatticePlan plan = make_lattice_plan(stat, sources, opt);
  plan.explanation = backend_line(*backend, plan, why) + plan.explanation;
  plan.clock = &clock;
  plan.lap("plan");
  LatticeMap map;
  map.lattice = stat.lattice;
  map.components = plan.components;
  map.precision = stat.precision;
  map.bound = plan.bound;
  try {
    backend->run_lattice(plan, map);
  } catch (const Error& e) {
    // Auto's GPU could not hold the map: the CPU's traversal, the same bits.
    if (opt.backend != "auto" || e.kind() != ErrorKind::Resource || backend->name() == "cpu") throw;
    plan.explanation += fmt::format("fallback: {}; the CPU's traversal instead\n", e.what());
    plan.lap("device refusal");
    map.spilled = 0;
    make_cpu_backend()->run_lattice(plan, map);
  }
  map.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The plan with where the time went, as the pair runs give it (after the run).
  map.plan = plan.explanation + "phases (wall time, the process's peak resident memory after each): " + clock.text() + "\n";
  if (opt.on_plan) opt.on_plan(map.plan);
  return map;
}

std::string explain(const reduce::OntoLattice& stat, const LatticeSources& sources, const RunOptions& opt) {
  std::string why;
  const std::unique_ptr<Backend> backend = lattice_backend(stat, sources, opt, why);
  const LatticePlan plan = make_lattice_plan(stat, sources, opt);
  return backend_line(*backend, plan, why) + plan.explanation;
}

}  // namespace twobody
