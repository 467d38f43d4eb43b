// The pair-expression command, custom: a pair function written on the command line
// (twobody/expression.hpp, docs/expressions.md) reduced into a sum, a count, a histogram, the
// pairs, per-point values or the matrix of every pair's value (--emit).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "commands.hpp"
#include "mpi_session.hpp"
#include "twobody/error.hpp"
#include "twobody/expression.hpp"
#include "twobody/matrices.hpp"
#include "twobody/table.hpp"

namespace twobody::cli {

namespace {

struct CustomOptions {
  CommonOptions o;
  std::string pair, where, emit = "histogram", per_point, cpu_codegen = "auto";
  std::vector<std::string> params;
};

// A file's table (--columns by number or by name), or a built-in catalogue's points.
PairTable load_table(const std::string& spec, const std::string& columns) {
  if (spec.rfind("builtin:", 0) == 0) return PairTable::from_points(load_points(spec, columns, 0, ""));
  ReadOptions r;
  if (!columns.empty()) {
    if (std::all_of(columns.begin(), columns.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == ','; }))
      r.columns = parse_column_list(columns);
    else
      for (std::size_t s = 0, e; s <= columns.size(); s = e + 1) {
        e = std::min(columns.find(',', s), columns.size());
        r.column_names.push_back(columns.substr(s, e - s));
      }
  }
  return read_table(spec, r);
}

// --param NAME=VALUE or NAME=@FILE (a vector: a .npy or text file of d values).
ExpressionParams parse_params(const std::vector<std::string>& specs) {
  ExpressionParams p;
  for (const std::string& s : specs) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0) throw_config(fmt::format("--param {}: write NAME=VALUE or NAME=@FILE", s));
    const std::string name = s.substr(0, eq), value = s.substr(eq + 1);
    if (p.scalars.count(name) || p.vectors.count(name)) throw_config(fmt::format("--param {} is given twice", name));
    if (!value.empty() && value[0] == '@') {
      const VectorSet v = read_vectors(value.substr(1));
      std::vector<double> all(v.size() * static_cast<std::size_t>(v.dim()));
      for (std::size_t i = 0; i < v.size(); ++i) v.row_f64(i, all.data() + i * static_cast<std::size_t>(v.dim()));
      p.vectors[name] = std::move(all);
      continue;
    }
    std::size_t used = 0;
    double x = 0;
    try {
      x = std::stod(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != value.size() || value.empty() || !std::isfinite(x))
      throw_config(fmt::format("--param {}: '{}' is not a finite number (or @FILE for a vector)", name, value));
    p.scalars[name] = x;
  }
  return p;
}

// --bins, or --rmin/--rmax [--nbins] [--log]: a value's bins or range; none when neither is given.
std::optional<Binning> value_range(const CommonOptions& o) {
  if (!o.bins_file.empty()) return Binning::from_file(o.bins_file);
  if (!o.rmin && !o.rmax) return std::nullopt;
  if (!o.rmin || !o.rmax) throw_config("a value's range needs both --rmin and --rmax");
  if (o.log_bins) return Binning::logarithmic(*o.rmin, *o.rmax, o.nbins ? o.nbins : 1);
  return Binning::linear_values(*o.rmin, *o.rmax, o.nbins ? o.nbins : 1);
}

// --emit matrix: every pair's value, streamed to .npy or HDF5 a block of rows at a time
// (twobody/matrices.hpp), or text from memory.
void run_expression_matrix(const CustomOptions& s, const Context& c, const PairExpression& f, const PairTable& a,
                           const PairTable* b) {
  const CommonOptions& o = s.o;
  if (!s.per_point.empty()) throw_config("--per-point goes with --emit per-point");
  if (value_range(o)) throw_config("--emit matrix holds every value: it takes no range or bins");
  MatrixOptions m;
  m.codegen = parse_cpu_codegen(s.cpu_codegen);
  if (cli_writes_output() && !is_standard_output(o.output)) m.output = o.output;
  RunOptions run = make_run_options(o, c.bar);
  run.distribution = nullptr;
  const MatrixResult r = expression_matrix(f, a, b, m, run);
  c.bar.finish();
  if (cli_writes_output() && m.output.empty()) write_matrix(o.output, r.rows, r.cols, r.values);
}

void run_custom_command(const CustomOptions& s, const Context& c) {
  const CommonOptions& o = s.o;
  const PairTable a = load_table(o.data, o.columns);
  const bool cross = !o.data2.empty();
  PairTable b;
  if (cross) b = load_table(o.data2, o.columns2.empty() ? o.columns : o.columns2);
  const PairExpression f = PairExpression::parse(s.pair, a.schema(), cross ? &b.schema() : nullptr, parse_params(s.params), s.where);
  if (s.emit == "matrix") return run_expression_matrix(s, c, f, a, cross ? &b : nullptr);
  ExpressionOutput out;
  out.emit = parse_expression_emit(s.emit);
  out.per_point = s.per_point;
  out.range = value_range(o);
  const Statistic st = expression_statistic(f, cross, out);
  RunOptions run = make_run_options(o, c.bar);
  run.distribution = nullptr;  // (pair expressions run in one process)
  const Result r = run_expression(f, st, a, cross ? &b : nullptr, run, parse_cpu_codegen(s.cpu_codegen));
  c.bar.finish();
  if (!cli_writes_output()) return;
  const Table t = expression_table(f, st, r, out);
  emit(t, o);
}

const Command<CustomOptions> custom_command{
    .name = "custom",
    .help = "a pair function written as an expression (--pair), reduced to a sum, count, histogram, pairs, per-point values "
            "or a matrix",
    .features = {.second_set = true, .weights = false, .box = false, .variable = "value"},
    .add_options =
        [](CLI::App& cmd, CustomOptions& s) {
          for (const char* name : {"--ravg", "--devices"})
            if (CLI::Option* opt = cmd.get_option_no_throw(name)) cmd.remove_option(opt);
          cmd.get_option("--columns")->description("the coordinates a[0], a[1], ...: column numbers or names (default: every column); every named column is a.NAME too");
          cmd.add_option("--pair", s.pair, "the pair function: an expression over a, b, a.NAME, a[k], d and --param names (docs/expressions.md)")
              ->required();
          cmd.add_option("--param", s.params, "NAME=VALUE, or NAME=@FILE for a vector of d values (.npy or text); repeatable");
          cmd.add_option("--where", s.where, "a predicate: pairs where it is false produce nothing");
          cmd.add_option("--emit", s.emit, "sum | count | histogram | pairs | per-point | matrix (a value's count, pairs and "
                                           "per-point counts take --rmin/--rmax; matrix: every pair's value, -o .npy or "
                                           ".h5 streamed)")
              ->check(CLI::IsMember({"sum", "count", "histogram", "pairs", "per-point", "matrix"}));
          cmd.add_option("--per-point", s.per_point, "with --emit per-point: count | sum | min | max of the partners' values "
                                                     "(default: sum for a value, count for a predicate)")
              ->check(CLI::IsMember({"count", "sum", "min", "max"}));
          cmd.add_option("--cpu-codegen", s.cpu_codegen, "auto | on | off: the CPU evaluates the pair function compiled by the "
                                                         "system compiler (a cached shared object; $TWOBODY_CXX) or interpreted; "
                                                         "same values either way, --explain says which")
              ->check(CLI::IsMember({"auto", "on", "off"}));
        },
    .run = run_custom_command,
    .examples =
        "  twobody custom --data builtin:uniform-box:500 --pair 'exp(-dot(a-b, a-b)/(2*h^2))' --param h=50 --emit sum\n"
        "  twobody custom --data builtin:uniform-box:500 --pair 'sum(abs(a-b)^p)^(1/p)' --param p=3 --emit histogram "
        "--rmin 0 --rmax 1 --nbins 10\n"
        "  twobody custom --data builtin:uniform-box:300 --pair 'max(abs(a-b)) < 100' --emit per-point\n"
        "  twobody custom --data builtin:uniform-box:300 --pair 'a[0] - b[0]' --where 'a[1] < b[1]' --emit per-point "
        "--per-point max\n"
        "  twobody custom --data builtin:uniform-box:300 --pair 'sum(abs(a-b)^p)^(1/p)' --param p=3 --emit matrix -o m.npy\n",
};

}  // namespace

std::vector<Subcommand> custom_commands() { return {custom_command}; }

}  // namespace twobody::cli
