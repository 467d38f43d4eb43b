#include "common_options.hpp"

#include <fmt/format.h>

#include <atomic>
#include <fstream>
#include <iostream>
#include <memory>

#include "builtin_catalogs.hpp"
#include "mpi_session.hpp"
#include "twobody/error.hpp"

namespace twobody::cli {

void add_common_options(CLI::App& app, CommonOptions& o, const Features& f) {
  app.add_option("--data", o.data, "catalogue: text (.txt/.csv/.dat), .npy, Corrfunc .ff, or builtin:NAME")
      ->required();
  app.add_option("--columns", o.columns,
                 fmt::format("1-based coordinate columns, e.g. 1,2,3 (default: {})",
                             *f.columns_default ? f.columns_default : "all but the weight column"));
  if (f.second_set) {
    app.add_option("--data2", o.data2, "second catalogue: cross pairs (i in data, j in data2)");
    app.add_option("--columns2", o.columns2, "coordinate columns of --data2 (default: as --columns)");
  }
  if (f.weights)
    app.add_option("--weights-column", o.weight_column, "1-based column of per-point weights: adds wnpairs = sum of w_i w_j")
        ->check(CLI::PositiveNumber);
  app.add_option("--bins", o.bins_file, "bin file: one bin per line, 'lo hi' (Corrfunc's format)");
  app.add_option("--rmin", o.rmin, fmt::format("lowest {} edge", f.variable));
  app.add_option("--rmax", o.rmax, fmt::format("highest {} edge", f.variable));
  app.add_option("--nbins", o.nbins, "number of bins")->check(CLI::PositiveNumber);
  app.add_flag("--log", o.log_bins, "logarithmic bins from rmin to rmax");
  if (f.box) {
    auto* b = app.add_option("--box", o.box, "periodic box: one side L (cube) or one length per dimension")
                  ->expected(1, kMaxDim);
    if (f.box_required) b->required();
    app.add_flag("--wrap", o.wrap, "wrap points outside the box into it instead of failing");
  }
  app.add_option("--backend", o.backend, "auto | cpu | cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  app.add_option("--path", o.path, "traversal: auto (cost model) | brute | grid (cell grid, cutoff statistics)")
      ->check(CLI::IsMember({"auto", "brute", "grid"}));
  app.add_option("--threads", o.threads, "CPU threads (default: all)")->check(CLI::NonNegativeNumber);
  app.add_option("-o,--output", o.output, "output file (default: standard output)");
  app.add_option("--format", o.format, "csv | json | table")->check(CLI::IsMember({"csv", "json", "table"}));
  app.add_flag("--explain", o.explain, "print the plan of each run it makes (backend, traversal, tiles) to stderr");
}

void add_ravg_option(CLI::App& cmd, CommonOptions& o) {
  cmd.add_flag("--ravg", o.ravg,
               "add the columns ravg (mean separation of each bin's pairs, weighted by w_i w_j when weighted) "
               "and meanlogr (mean of its log)");
}

PointSet load_points(const std::string& spec, const std::string& columns, int weight_column,
                     const char* columns_default, int region_column) {
  if (spec.rfind("builtin:", 0) == 0) {
    if (region_column > 0)
      throw_config(fmt::format("{} has no region column; use --jackknife N to assign regions", spec));
    return builtin_catalog(spec.substr(8));
  }
  ReadOptions r;
  const std::string cols = columns.empty() ? columns_default : columns;
  if (!cols.empty()) r.columns = parse_column_list(cols);
  r.weight_column = weight_column;
  r.region_column = region_column;
  return read_points(spec, r);
}

PointSets load_sets(const CommonOptions& o, const Features& f) {
  PointSets l;
  l.a = load_points(o.data, o.columns, o.weight_column, f.columns_default);
  if (!o.data2.empty()) {
    l.b = load_points(o.data2, o.columns2.empty() ? o.columns : o.columns2, o.weight_column, f.columns_default);
    l.cross = true;
  }
  return l;
}

Binning make_binning(const CommonOptions& o, const char* variable) {
  if (!o.bins_file.empty()) {
    if (o.rmin || o.rmax || o.nbins)
      throw_config("give either --bins FILE or --rmin/--rmax/--nbins, not both");
    return Binning::from_file(o.bins_file);
  }
  if (!o.rmax || !o.nbins)
    throw_config(fmt::format("bins are needed: --bins FILE, or --rmax and --nbins (with --rmin, --log) in {}", variable));
  const double lo = o.rmin.value_or(0.0);
  return o.log_bins ? Binning::logarithmic(lo, *o.rmax, o.nbins) : Binning::linear(lo, *o.rmax, o.nbins);
}

std::optional<Box> make_box(const CommonOptions& o, int dim) {
  if (o.box.empty()) {
    if (o.wrap) throw_config("--wrap needs --box");
    return std::nullopt;
  }
  if (o.box.size() == 1) return Box::cube(dim, o.box[0]);
  if (static_cast<int>(o.box.size()) != dim)
    throw_config(fmt::format("--box has {} lengths but the points have {} coordinates", o.box.size(), dim));
  return Box::from_lengths(o.box);
}

RunOptions make_run_options(const CommonOptions& o, ProgressBar& bar) {
  RunOptions r;
  r.backend = o.backend;
  r.mean_separation = o.ravg;
  r.path = o.path;
  r.threads = o.threads;
  r.max_pairs = o.max_pairs;
  r.distribution = cli_distribution();
  if (bar.enabled()) r.progress = [&bar](double f) { bar.update(f); };
  // A statistic may make several runs (a correlation function's DD, DR, RR, ...), each with its plan.
  if (o.explain)
    r.on_plan = [&bar, runs = std::make_shared<std::atomic<int>>(0)](const std::string& plan) {
      bar.print(fmt::format("twobody: plan of run {}:\n{}\n", ++*runs, plan));
    };
  return r;
}

void emit(const Table& t, const CommonOptions& o) {
  if (!cli_writes_output()) return;
  const TableFormat f = parse_table_format(o.format);
  if (o.output.empty()) {
    write_table(std::cout, t, f);
    return;
  }
  std::ofstream out(o.output);
  if (!out) throw_input(fmt::format("{}: cannot open for writing", o.output));
  write_table(out, t, f);
  if (!out) throw_input(fmt::format("{}: write failed", o.output));
}

}  // namespace twobody::cli
