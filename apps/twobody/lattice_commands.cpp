// The lattice map commands (seed 002's applications): potential, density, gridding. Each reads its
// sources with their value columns, declares the map (twobody/lattice_maps.hpp) and writes it.
#include <algorithm>
#include <cmath>
#include <functional>
#include <span>
#include <string>
#include <vector>
#include <iostream>

#include <fmt/format.h>

#include "commands.hpp"
#include "common_options.hpp"
#include "mpi_session.hpp"
#include "process_phases.hpp"
#include "twobody/error.hpp"
#include "twobody/generate.hpp"
#include "twobody/io.hpp"
#include "twobody/lattice_maps.hpp"

namespace twobody::cli {

namespace {

// What every lattice command takes: sources, placement, precision, run and output.
struct LatticeCliOptions {
  std::string data, columns, output, png;
  double spacing = 0.5, padding = 0, cutoff = 0;
  std::vector<double> origin;
  std::vector<std::int64_t> shape;
  bool periodic = false;
  std::string precision = "single";
  std::string binning = "compact";
  int bin_depth = 0;
  std::string backend = "auto";
  std::string device_memory;  // --device-memory (apply_device_memory)
  int threads = 0;
  bool explain = false;
};

// `data`: the sources' option's names ("--data,--samples" for gridding's k-space samples).
void add_lattice_options(CLI::App& cmd, LatticeCliOptions& o, bool placement, const std::string& data = "--data") {
  cmd.add_option(data, o.data, "the sources: text, .npy, HDF5 or FITS (see twobody --help)")->required();
  cmd.add_option("--columns", o.columns, "1-based coordinate columns, e.g. 1,2,3 (default: the first 3 unused)");
  if (placement) {
    cmd.add_option("--spacing", o.spacing, "lattice spacing h (default 0.5)")->check(positive_number);
    cmd.add_option("--padding", o.padding, "margin around the sources' bounding box, on every side")
        ->check(non_negative_number);
    cmd.add_option("--origin", o.origin, "node (0,0,0)'s position X,Y,Z (with --shape)")->delimiter(',');
    cmd.add_option("--shape", o.shape, "nodes per axis NX,NY,NZ (with --origin)")->delimiter(',');
    cmd.add_flag("--periodic", o.periodic, "periodic lattice: period shape·spacing on every axis (cutoff ≤ half of it)");
  }
  cmd.add_option("--precision", o.precision, "single (float32 geometry, 64-bit exact sums, float32 map) or double")
      ->check(CLI::IsMember({"single", "double"}));
  cmd.add_option("-o,--output", o.output,
                 "the map: .npy (+ .npy.json with the lattice and the bound), .h5 (attributes), .dx (OpenDX)");
  cmd.add_option("--png", o.png, "also the middle z-slice as a PNG (signed maps blue–white–red, complex by magnitude)");
  cmd.add_option("--binning", o.binning, "compact (seed 002's) or regular (its baseline, padded bins read one by one: "
                                         "--backend cuda, for comparison); the same map")
      ->check(CLI::IsMember({"compact", "regular"}));
  cmd.add_option("--bin-depth", o.bin_depth, "regular bins: pad every bin to this depth, the excess summed on the "
                                             "CPU while the GPU gathers (default: the deepest bin's)")
      ->check(non_negative_number);
  cmd.add_option("--backend", o.backend, "auto | cpu | cuda (the GPU's gather: the CPU's bits; auto: the GPU for maps of ~10^8 terms or more)");
  add_device_memory_option(cmd, o.device_memory);
  cmd.add_option("--threads", o.threads, "CPU threads (default: all)")->check(non_negative_number);
  cmd.add_flag("--explain", o.explain, "print the plan (lattice, function, precision and its bound, bins) to stderr");
}

Catalogue read_sources(const LatticeCliOptions& o, std::vector<int> value_columns, int weight_column = 0) {
  if (o.data.rfind("builtin:", 0) == 0) throw_config(fmt::format("{} has no value columns for a lattice map", o.data));
  ReadOptions r;
  r.value_columns = std::move(value_columns);
  r.weight_column = weight_column;
  if (!o.columns.empty()) r.columns = parse_column_list(o.columns);
  else r.default_columns = 3;
  Catalogue cat = read_catalogue(o.data, r);
  ProcessPhases::get().lap("read " + o.data);  // (not a catalogue of the memory ratio: the map outweighs it)
  return cat;
}

// The lattice of --origin and --shape, else the sources' bounding box less --padding; --periodic
// on every axis.
LatticePlacement placement_of(const LatticeCliOptions& o, const PointSet& points) {
  const int dim = points.dim();
  if (o.origin.empty() != o.shape.empty()) throw_config("--origin and --shape go together");
  Lattice L;
  if (!o.origin.empty()) {
    if (static_cast<int>(o.origin.size()) != dim || static_cast<int>(o.shape.size()) != dim)
      throw_config(fmt::format("--origin and --shape need {} values for {}-D sources", dim, dim));
    L.dim = dim;
    for (int k = 0; k < dim; ++k) {
      L.origin[k] = o.origin[static_cast<std::size_t>(k)];
      L.spacing[k] = o.spacing;
      L.shape[k] = o.shape[static_cast<std::size_t>(k)];
    }
  } else {
    L = Lattice::spanning(points, {o.spacing, o.spacing, o.spacing}, o.padding);
  }
  for (int k = 0; k < dim; ++k) L.periodic[k] = o.periodic;
  LatticePlacement at;
  at.lattice = L;
  return at;
}

RunOptions run_options_of(const LatticeCliOptions& o) {
  RunOptions r;
  r.backend = o.backend;
  r.threads = o.threads;
  apply_device_memory(o.device_memory);
  if (o.explain) r.on_plan = [](const std::string& plan) { std::cerr << "twobody: plan of run 1:\n" << plan; };
  return r;
}

// The lattice commands' warm-up (BackendWarmUp's body): a tiny map on the device, of the run's
// function, precision and bins and of its cutoff in spacings, so that the traversal it takes is the
// run's. A kernel loads at its first launch (milliseconds each in a fresh process), and a map
// launches a dozen (the binning's, CUB's sort, the traversal, the values): they load here, beside
// the reading, instead of inside the run, as do the pinned buffers of the upload
// (start_up_device). Sources uniform in a cube of tiny_side spacings on a lattice at the origin,
// `spacing` apart; `map` runs one on them.
// The tiny map's cube: nodes (or grid cells) an axis, for a cutoff of this many spacings: its
// supports fit inside, within 24..96.
double tiny_side(double cutoff_in_spacings) { return std::clamp(std::ceil(2.5 * cutoff_in_spacings), 24.0, 96.0); }

using TinyMap = std::function<void(const PointSet& sources, std::span<const double> values, const RunOptions&)>;

std::function<void()> tiny_map_warm_up(double spacing, double cutoff_in_spacings, TinyMap map) {
  return [spacing, cutoff_in_spacings, map = std::move(map)] {
    const PointSet points = generate_uniform_box(400, 3, tiny_side(cutoff_in_spacings) * spacing, 7);
    std::vector<double> values(points.size());
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = i % 2 ? 0.75 : -0.5;
    start_up_device("cuda");  // the context, the pool and the pinned buffers of the sources' upload
    RunOptions r;
    r.backend = "cuda";
    r.threads = 1;  // (the reading has the cores)
    map(points, values, r);
  };
}

// The tiny map's lattice: the origin, the run's spacing, tiny_side nodes an axis.
LatticePlacement tiny_placement(double spacing, double cutoff_in_spacings) {
  Lattice L;
  L.dim = 3;
  const auto n = static_cast<std::int64_t>(tiny_side(cutoff_in_spacings));
  for (int k = 0; k < 3; ++k) {
    L.spacing[k] = spacing;
    L.shape[k] = n;
  }
  LatticePlacement at;
  at.lattice = L;
  return at;
}

Precision precision_of(const LatticeCliOptions& o) { return o.precision == "double" ? Precision::Double : Precision::Single; }
LatticeBinning binning_of(const LatticeCliOptions& o) {
  return o.binning == "regular" ? LatticeBinning::Regular : LatticeBinning::Compact;
}

// What every map's options take from the command line alike: precision, bins and their depth.
template <class MapOptions>
void set_precision_and_bins(MapOptions& m, const LatticeCliOptions& o) {
  m.precision = precision_of(o);
  m.binning = binning_of(o);
  m.bin_depth = o.bin_depth;
}

void finish(const LatticeCliOptions& o, const LatticeMap& m, const Context& c, const std::string& meta) {
  c.bar.finish();
  ProcessPhases::get().lap("map");
  if (!cli_writes_output()) return;
  if (!o.png.empty()) write_lattice_map(o.png, m);
  if (!o.output.empty()) {
    write_lattice_map(o.output, m, meta);
    ProcessPhases::get().lap("write output");
    return;
  }
  double lo = INFINITY, hi = -INFINITY;
  for (double v : m.values) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  std::cout << fmt::format("{} nodes ({} x {} x {}), {} terms, values in [{:.9g}, {:.9g}], {} excluded; -o map.npy writes it\n",
                           m.lattice.nodes(), m.lattice.shape[0], m.lattice.shape[1], m.lattice.shape[2], m.terms, lo, hi,
                           m.excluded_count);
}

struct PotentialCli {
  LatticeCliOptions o;
  int charge_column = 0;
  double exclusion = 1.0;
};

const Command<PotentialCli> potential_command{
    .name = "potential",
    .help = "electrostatic potential on a lattice: V = Σ q/r·(1 − r²/C²)² over the atoms within the cutoff (cutcp)",
    .features = {},
    .add_options =
        [](CLI::App& cmd, PotentialCli& s) {
          add_lattice_options(cmd, s.o, true);
          cmd.add_option("--charge-column", s.charge_column, "1-based column of the charges q (not for .pqr files, which hold them)")
              ->check(CLI::PositiveNumber);
          cmd.add_option("--cutoff", s.o.cutoff, "cutoff C of the switched Coulomb potential")->required()->check(positive_number);
          cmd.add_option("--exclusion", s.exclusion, "nodes closer than this to an atom are excluded: value 0 (default 1)")
              ->check(positive_number);
        },
    .run =
        [](const PotentialCli& s, const Context& c) {
          // A .pqr holds its charges (and radii); other files name the charge column.
          const bool pqr = s.o.data.size() > 4 && s.o.data.substr(s.o.data.size() - 4) == ".pqr";
          if (pqr && s.charge_column > 0) throw_config("a .pqr file holds its charges: no --charge-column");
          if (!pqr && s.charge_column == 0) throw_config("--charge-column is needed (except for .pqr files)");
          PotentialOptions p;
          p.cutoff = s.o.cutoff;
          p.exclusion = s.exclusion;
          set_precision_and_bins(p, s.o);
          PotentialOptions tiny = p;
          tiny.at = tiny_placement(s.o.spacing, s.o.cutoff / s.o.spacing);
          // The device's start-up and the map's kernels while the file is read.
          BackendWarmUp warm(s.o.backend, "", tiny_map_warm_up(s.o.spacing, s.o.cutoff / s.o.spacing,
                                                                   [tiny](const PointSet& a, std::span<const double> v,
                                                                          const RunOptions& r) {
            (void)potential_map(a, v, tiny, r);
          }));
          Catalogue cat;
          if (pqr) {
            Atoms atoms = read_pqr(s.o.data);
            cat.points = std::move(atoms.positions);
            cat.values = {std::move(atoms.charges)};
            ProcessPhases::get().lap("read " + s.o.data);
          } else {
            cat = read_sources(s.o, {s.charge_column});
          }
          p.at = placement_of(s.o, cat.points);
          warm.before_run();  // (as make_run_options does: these commands make their own)
          const RunOptions r = run_options_of(s.o);
          const LatticeMap m = potential_map(cat.points, cat.values[0], p, r);
          finish(s.o, m, c, fmt::format(R"({{"map": "potential", "cutoff": {}, "exclusion": {}}})", p.cutoff, p.exclusion));
        },
    .examples =
        "  twobody generate uniform -n 2000 --dim 4 --box 20 --seed 1 -o atoms.txt\n"
        "  twobody potential --data atoms.txt --charge-column 4 --spacing 0.5 --cutoff 4 --padding 0.5 -o v.npy --png v.png\n"
        "  twobody potential --data atoms.txt --charge-column 4 --spacing 1 --cutoff 4 --precision double -o v.dx\n",
};

struct DensityCli {
  LatticeCliOptions o;
  int radius_column = 0, weight_column = 0;
  double blobbiness = 1;
};

const Command<DensityCli> density_command{
    .name = "density",
    .help = "Blinn blob density on a lattice: D = Σ w·exp(B·(1 − r²/R²)) over the points within the cutoff",
    .features = {},
    .add_options =
        [](CLI::App& cmd, DensityCli& s) {
          add_lattice_options(cmd, s.o, true);
          cmd.add_option("--radius-column", s.radius_column, "1-based column of the blob radii R")->required()->check(CLI::PositiveNumber);
          cmd.add_option("--weights-column", s.weight_column, "1-based column of the weights w (default: 1)");
          cmd.add_option("--blobbiness", s.blobbiness, "Blinn's B (default 1)")->check(non_negative_number);
          cmd.add_option("--cutoff", s.o.cutoff, "the blobs are truncated at this distance")->required()->check(positive_number);
        },
    .run =
        [](const DensityCli& s, const Context& c) {
          DensityOptions d;
          d.cutoff = s.o.cutoff;
          d.blobbiness = s.blobbiness;
          set_precision_and_bins(d, s.o);
          DensityOptions tiny = d;
          tiny.at = tiny_placement(s.o.spacing, s.o.cutoff / s.o.spacing);
          BackendWarmUp warm(s.o.backend, "", tiny_map_warm_up(s.o.spacing, s.o.cutoff / s.o.spacing,
                                                                   [tiny](const PointSet& p, std::span<const double> v,
                                                                          const RunOptions& r) {
            std::vector<double> radii(v.size(), tiny.cutoff / 2);
            (void)density_map(p, radii, {}, tiny, r);
          }));
          Catalogue cat = read_sources(s.o, {s.radius_column}, s.weight_column);
          d.at = placement_of(s.o, cat.points);
          warm.before_run();
          const LatticeMap m = density_map(cat.points, cat.values[0], cat.points.weights(), d, run_options_of(s.o));
          finish(s.o, m, c, fmt::format(R"({{"map": "density", "cutoff": {}, "blobbiness": {}}})", d.cutoff, d.blobbiness));
        },
    .examples =
        "  twobody generate uniform -n 500 --dim 4 --box 4 --seed 2 -o blobs.txt\n"
        "  twobody density --data blobs.txt --radius-column 4 --blobbiness 2 --spacing 0.25 --cutoff 1.5 -o d.npy\n",
};

struct GriddingCli {
  LatticeCliOptions o;
  int re_column = 0, im_column = 0, sdc_column = 0;
  std::string kernel = "kaiser-bessel", kernel_shape = "separable", grid;
  double width = 4, beta = 0, oversampling = 2;
  bool no_wrap = false;
};

std::array<std::int64_t, 3> parse_grid(const std::string& text, int dim) {
  std::array<std::int64_t, 3> n{1, 1, 1};
  std::vector<std::int64_t> parts;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t x = text.find('x', at);
    const std::string part = text.substr(at, x == std::string::npos ? std::string::npos : x - at);
    try {
      std::size_t used = 0;
      const long long v = std::stoll(part, &used);
      if (used != part.size() || v < 1) throw std::invalid_argument(part);
      parts.push_back(v);
    } catch (const std::exception&) {
      throw_config(fmt::format("--grid '{}': give N or NxNxN with N ≥ 1", text));
    }
    if (x == std::string::npos) break;
    at = x + 1;
  }
  if (parts.size() == 1) parts.assign(static_cast<std::size_t>(dim), parts[0]);
  if (static_cast<int>(parts.size()) != dim) throw_config(fmt::format("--grid '{}' for {}-D samples", text, dim));
  for (int k = 0; k < dim; ++k) n[static_cast<std::size_t>(k)] = parts[static_cast<std::size_t>(k)];
  return n;
}

const Command<GriddingCli> gridding_command{
    .name = "gridding",
    .help = "grid complex k-space samples onto a Cartesian grid with the Kaiser–Bessel window (MRI gridding)",
    .features = {},
    .add_options =
        [](CLI::App& cmd, GriddingCli& s) {
          add_lattice_options(cmd, s.o, false, "--data,--samples");
          cmd.get_option("--data")->description("the samples: k in grid units about the grid's centre, and their values");
          cmd.add_option("--re-column", s.re_column, "1-based column of the samples' real parts")->required()->check(CLI::PositiveNumber);
          cmd.add_option("--im-column", s.im_column, "1-based column of the imaginary parts")->required()->check(CLI::PositiveNumber);
          cmd.add_option("--weights-column", s.sdc_column, "1-based column of density compensation weights (default: 1)");
          cmd.add_option("--kernel", s.kernel, "kaiser-bessel")->check(CLI::IsMember({"kaiser-bessel"}));
          cmd.add_option("--kernel-shape", s.kernel_shape, "separable (product over axes, default) or radial")
              ->check(CLI::IsMember({"separable", "radial"}));
          cmd.add_option("--width", s.width, "window width W in grid cells (default 4)")->check(positive_number);
          cmd.add_option("--beta", s.beta, "Kaiser–Bessel β (default: Beatty's from the width and oversampling)")
              ->check(non_negative_number);
          cmd.add_option("--oversampling", s.oversampling, "σ for the default β (default 2)")->check(positive_number);
          cmd.add_option("--grid", s.grid, "grid nodes N or NxNxN")->required();
          cmd.add_flag("--no-wrap", s.no_wrap, "clip at the grid's edges instead of wrapping (Parboil's mri-gridding)");
        },
    .run =
        [](const GriddingCli& s, const Context& c) {
          std::vector<int> cols{s.re_column, s.im_column};
          if (s.sdc_column > 0) cols.push_back(s.sdc_column);
          GriddingOptions g;
          g.width = s.width;
          g.beta = s.beta;
          g.oversampling = s.oversampling;
          g.separable = s.kernel_shape == "separable";
          g.wrap = !s.no_wrap;
          set_precision_and_bins(g, s.o);
          GriddingOptions tiny = g;
          const double side = tiny_side(s.width / 2);
          tiny.grid = {static_cast<std::int64_t>(side), static_cast<std::int64_t>(side), static_cast<std::int64_t>(side)};
          BackendWarmUp warm(s.o.backend, "", tiny_map_warm_up(1.0, s.width / 2,
                                                                   [tiny, side](const PointSet& p, std::span<const double> v,
                                                                                const RunOptions& r) {
            // (k in grid units about the centre: the cube moved onto the grid)
            PointSet k(3, p.size());
            for (int a = 0; a < 3; ++a)
              for (std::size_t i = 0; i < p.size(); ++i) k.coord(a)[i] = p.coord(a)[i] - side / 2;
            (void)grid_samples(k, v, v, {}, tiny, r);
          }));
          Catalogue cat = read_sources(s.o, cols);
          g.grid = parse_grid(s.grid, cat.points.dim());
          warm.before_run();
          const std::span<const double> sdc = s.sdc_column > 0 ? std::span<const double>(cat.values[2]) : std::span<const double>();
          const LatticeMap m = grid_samples(cat.points, cat.values[0], cat.values[1], sdc, g, run_options_of(s.o));
          finish(s.o, m, c,
                 fmt::format(R"({{"map": "gridding", "kernel": "kaiser-bessel", "width": {}, "kernel_shape": "{}", "wrap": {}}})",
                             g.width, s.kernel_shape, g.wrap));
        },
    .examples =
        "  twobody generate uniform -n 2000 --dim 5 --box 16 --seed 3 -o kspace.txt\n"
        "  twobody gridding --data kspace.txt --re-column 4 --im-column 5 --grid 32 --width 4 -o g.npy\n",
};

}  // namespace

std::vector<Subcommand> lattice_commands() { return {potential_command, density_command, gridding_command}; }

}  // namespace twobody::cli
