#include "common_options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <fstream>
#include <iostream>
#include <memory>

#include <omp.h>

#include "builtin_catalogs.hpp"
#include "device_visibility.hpp"
#include "process_phases.hpp"
#include "mpi_session.hpp"
#include "twobody/device_memory.hpp"
#include "twobody/error.hpp"

namespace twobody::cli {

namespace {
CLI::Validator number_check(bool zero_allowed) {
  return CLI::Validator(
      [zero_allowed](std::string& text) -> std::string {
        double v = 0;
        std::size_t used = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          return fmt::format("'{}' is not a number", text);
        }
        if (used != text.size()) return fmt::format("'{}' is not a number", text);
        if (!std::isfinite(v) || v < 0 || (v == 0 && !zero_allowed))
          return fmt::format("{} must be {} and finite", text, zero_allowed ? "zero or positive" : "positive");
        return {};
      },
      zero_allowed ? "NONNEGATIVE" : "POSITIVE");
}
}  // namespace

const CLI::Validator positive_number = number_check(false);
const CLI::Validator non_negative_number = number_check(true);

void add_common_options(CLI::App& app, CommonOptions& o, const Features& f) {
  app.add_option("--data", o.data,
                 "catalogue: text (.txt/.csv/.dat), .npy, Corrfunc .ff, HDF5 (FILE.h5[:/DATASET]), FITS "
                 "(FILE.fits[:HDU]), or builtin:NAME")
      ->required();
  app.add_option("--columns", o.columns,
                 fmt::format("coordinate columns, 1-based numbers (1,2,3) or names (x,y,z: a header line, HDF5 fields, FITS "
                             "columns); "
                             "default: the first {} columns but the weight column",
                             *f.columns_default ? "two (RA, Dec)" : "three"));
  if (f.second_set) {
    app.add_option("--data2", o.data2, "second catalogue: cross pairs (i in data, j in data2)");
    app.add_option("--columns2", o.columns2, "coordinate columns of --data2 (default: as --columns)");
  }
  if (f.weights)
    app.add_option("--weights-column", o.weight_column, "1-based column of per-point weights: adds wnpairs = sum of w_i w_j")
        ->check(positive_number);
  app.add_option("--bins", o.bins_file, "bin file: one bin per line, 'lo hi' (Corrfunc's format)");
  app.add_option("--rmin", o.rmin, fmt::format("lowest {} edge", f.variable));
  app.add_option("--rmax", o.rmax, fmt::format("highest {} edge", f.variable));
  app.add_option("--nbins", o.nbins, "number of bins")->check(positive_number);
  app.add_flag("--log", o.log_bins, "logarithmic bins from rmin to rmax");
  if (f.box) {
    auto* b = app.add_option("--box", o.box, "periodic box: one side L (cube) or one length per dimension; for 3-D points also a triclinic cell, 6 values a,b,c,alpha,beta,gamma (degrees, MDAnalysis dimensions) or 9, the cell matrix row by row (rows a, b, c, lower-triangular)")
                  ->expected(1, std::max(kMaxDim, 9))
                  ->delimiter(',');
    if (f.box_required) b->required();
    app.add_flag("--wrap", o.wrap, "wrap points outside the box into it instead of failing");
  }
  app.add_option("--backend", o.backend, "auto | cpu | cuda | hybrid (the CPU and the GPU on one work queue)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda", "hybrid"}));
  app.add_option("--devices", o.devices,
                 "CUDA devices to split the pairs over, a host thread each: all, or indices such as 0,2 (default: "
                 "one device)");
  add_device_memory_option(app, o.device_memory);
  app.add_option("--path", o.path, "traversal: auto (cost model) | brute | grid (cell grid, cutoff statistics)")
      ->check(CLI::IsMember({"auto", "brute", "grid"}));
  app.add_option("--threads", o.threads, "CPU threads (default: all)")->check(non_negative_number);
  app.add_option("-o,--output", o.output, "output file (default: standard output)");
  app.add_option("--format", o.format,
                 "csv | json | table (six significant digits) | hdf5 | npz; default: from -o's extension (.json, "
                 ".txt for a table, .h5, .npz, .csv), csv otherwise")
      ->check(CLI::IsMember({"csv", "json", "table", "hdf5", "npz"}));
  app.add_flag("--explain", o.explain, "print the plan of each run it makes (backend, traversal, tiles) to stderr");
}

void add_device_memory_option(CLI::App& cmd, std::string& text) {
  cmd.add_option("--device-memory", text,
                 "GPU memory a run may plan for on each device, e.g. 2G or 512M (default: what the device has free); "
                 "larger catalogues stream through it in chunks, with the same results")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            try {
              parse_memory_size(v, "");  // (CLI11 names the option)
              return {};
            } catch (const Error& e) {
              return e.what();
            }
          },
          "SIZE"));
}

void apply_device_memory(const std::string& text) {
  if (!text.empty()) set_device_memory_limit(parse_memory_size(text, "--device-memory"));
}

void refuse_outputs_over_inputs(const CLI::App& cmd) {
  static const std::set<std::string> outputs{"output", "save-counts", "covariance"};
  static const std::set<std::string> inputs{"data", "data2", "randoms", "randoms2", "rr", "bins", "like"};
  std::vector<std::pair<std::string, std::string>> in, out;  // (option, path)
  for (const CLI::Option* opt : cmd.get_options()) {
    for (const std::string& name : opt->get_lnames()) {
      auto* list = outputs.count(name) ? &out : inputs.count(name) ? &in : nullptr;
      if (list)
        for (const std::string& path : opt->results()) list->emplace_back(name, path);
    }
  }
  for (const auto& [oname, opath] : out) {
    if (is_standard_output(opath)) continue;
    for (const auto& [iname, ipath] : in) {
      std::error_code ec;
      if (std::filesystem::equivalent(opath, file_of(ipath), ec) && !ec)
        throw_config(fmt::format("--{} {} is the input of --{}: writing it would destroy it", oname, opath, iname));
    }
  }
}

void add_ravg_option(CLI::App& cmd, CommonOptions& o) {
  cmd.add_flag("--ravg", o.ravg,
               "add the columns ravg (mean separation of each bin's pairs, weighted by w_i w_j when weighted) "
               "and meanlogr (mean of its log)");
}

namespace {

// --columns: 1-based numbers ("1,2,3") or a header's names ("x,y,z").
void set_columns(ReadOptions& r, const std::string& spec) {
  if (spec.empty()) return;
  if (spec.find_first_not_of("0123456789, ") == std::string::npos) {
    r.columns = parse_column_list(spec);
    return;
  }
  std::stringstream ss(spec);
  for (std::string name; std::getline(ss, name, ',');) {
    if (name.empty()) throw_config(fmt::format("bad column list '{}': an empty name", spec));
    r.column_names.push_back(name);
  }
}

// Reads a catalogue; without --columns the coordinates are the first `default_dim` columns not
// otherwise used, and a note names the columns left out.
Catalogue read_cli_catalogue(const std::string& path, ReadOptions r, const std::string& columns, int default_dim) {
  set_columns(r, columns);
  r.default_columns = default_dim;
  Catalogue c = read_catalogue(path, r);
  if (!c.unused_columns.empty())
    std::cerr << fmt::format("twobody: note: {}: coordinates from the first {} columns; column{} {} not used "
                             "(choose with --columns, --weights-column)\n",
                             path, c.points.dim(), c.unused_columns.size() > 1 ? "s" : "",
                             fmt::join(c.unused_columns, ","));
  return c;
}

// The default number of coordinates: 3 in space, or as many as a command's default list names
// ("1,2" on the sky: RA, Dec).
int default_dim(const char* columns_default) {
  if (!*columns_default) return 3;
  return static_cast<int>(parse_column_list(columns_default).size());
}

}  // namespace

PointSet load_points(const std::string& spec, const std::string& columns, int weight_column,
                     const char* columns_default, int region_column) {
  const auto read = [&] {
    if (spec.rfind("builtin:", 0) == 0) {
      if (region_column > 0)
        throw_config(fmt::format("{} has no region column; use --jackknife N to assign regions", spec));
      return builtin_catalog(spec.substr(8));
    }
    ReadOptions r;
    r.weight_column = weight_column;
    r.region_column = region_column;
    return read_cli_catalogue(spec, r, columns, default_dim(columns_default)).points;
  };
  PointSet p = read();
  ProcessPhases::get().lap((spec.rfind("builtin:", 0) == 0 ? "generate " : "read ") + spec);
  ProcessPhases::get().catalogue(p);
  return p;
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

FieldCatalogue load_field(const std::string& path, const std::string& columns, int weight_column, int value_column,
                          bool sky, const char* value_name) {
  if (path.rfind("builtin:", 0) == 0) throw_config(fmt::format("{} has no {} column", path, value_name));
  if (value_column == weight_column)
    throw_config(fmt::format("the {} column and the weight column must differ", value_name));
  ReadOptions r;
  r.weight_column = weight_column;
  r.value_columns = {value_column};
  Catalogue c = read_cli_catalogue(path, r, columns, sky ? 2 : 3);
  return {std::move(c.points), std::move(c.values.front())};
}

Binning make_binning(const CommonOptions& o, const char* variable) {
  if (!o.bins_file.empty()) {
    if (o.rmin || o.rmax || o.nbins || o.log_bins)
      throw_config("give either --bins FILE or --rmin/--rmax/--nbins/--log, not both");
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
  if (o.box.size() == 1 || static_cast<int>(o.box.size()) == dim) return Box::from_values(o.box, dim);
  if (dim == 3 && (o.box.size() == 6 || o.box.size() == 9)) return Box::from_values(o.box, dim);
  throw_config(fmt::format("--box has {} lengths but the points have {} coordinates{}", o.box.size(), dim,
                           dim == 3 ? " (a triclinic cell takes 6 values a,b,c,alpha,beta,gamma or 9, the cell matrix)" : ""));
}

// --backend hybrid on a machine without a GPU runs on the CPU alone (the plan says why): said once
// on stderr, since a user asked for two devices. (TWOBODY_HYBRID_FAKE_GPU=1 stands in for one.)
namespace {
void note_hybrid_without_gpu() {
  const char* fake = std::getenv("TWOBODY_HYBRID_FAKE_GPU");
  if (fake && std::string(fake) == "1") return;
  const std::vector<std::string> b = available_backends();
  if (std::find(b.begin(), b.end(), "cuda") == b.end())
    std::cerr << "twobody: note: --backend hybrid found no GPU (none visible, or a build without CUDA): the CPU runs "
                 "alone\n";
}
}  // namespace

std::vector<int> parse_devices(const std::string& text) {
  if (text.empty()) return {};
  if (text == "all") return visible_devices();
  std::vector<int> devices;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    std::size_t used = 0;
    int d = -1;
    try {
      d = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || d < 0)
      throw_config(fmt::format("--devices {}: expected all or device indices such as 0,2", text));
    devices.push_back(d);
  }
  return devices;
}

namespace {
// Applies default_device_visibility when the command runs on the default device on a backend that
// may use CUDA and no MPI split picks the device by rank. Called before anything touches CUDA;
// TWOBODY_ALL_DEVICES_VISIBLE=1 leaves the visibility alone.
void show_only_the_default_device(const std::string& backend, const std::string& devices) {
  if (backend == "cpu" || !devices.empty() || cli_distribution()) return;
  if (const char* keep = std::getenv("TWOBODY_ALL_DEVICES_VISIBLE"); keep && std::string(keep) == "1") return;
  if (const auto narrowed = default_device_visibility(std::getenv("CUDA_VISIBLE_DEVICES"))) {
    setenv("CUDA_VISIBLE_DEVICES", narrowed->c_str(), 1);
    ProcessPhases::get().device_shown(*narrowed);
  }
}

std::atomic<const BackendWarmUp*> the_warm_up{nullptr};

// Files of at most this many bytes in all are small inputs: 6 MiB is 2^18 points of three float64
// coordinates in .npy (the most the engine's CPU estimate takes), about 10^5 as text.
constexpr std::uintmax_t kSmallInputBytes = std::uintmax_t(6) << 20;

// Whether every input is a file and their sizes add up to a small input (a built-in catalogue,
// a missing file or a size that cannot be read: not known to be small).
bool small_inputs(const std::vector<std::string>& specs) {
  std::uintmax_t bytes = 0;
  for (const std::string& spec : specs) {
    if (spec.empty()) continue;
    if (spec.rfind("builtin:", 0) == 0) return false;
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(spec, ec);
    if (ec) return false;
    bytes += size;
  }
  return bytes <= kSmallInputBytes;
}

// Whether a command's warm-up starts: not for "auto" on small inputs.
bool warms_up(const CommonOptions& o, std::vector<std::string> inputs) {
  if (o.backend != "auto" || !o.devices.empty()) return true;
  inputs.push_back(o.data);
  inputs.push_back(o.data2);
  return !small_inputs(inputs);
}

}  // namespace

BackendWarmUp::BackendWarmUp(const CommonOptions& o, const std::vector<std::string>& more_inputs)
    : BackendWarmUp(o.backend, o.devices, {}, warms_up(o, more_inputs)) {}

BackendWarmUp::BackendWarmUp(const std::string& backend, const std::string& devices) : BackendWarmUp(backend, devices, {}) {}

BackendWarmUp::BackendWarmUp(const std::string& backend, const std::string& devices, std::function<void()> body, bool start)
    : waits_(backend == "cuda") {
  // Registered last, once nothing in here can throw (a throwing constructor runs no destructor).
  if (backend != "cpu") show_only_the_default_device(backend, devices);
  if (backend != "cpu" && start) thread_ = std::thread([backend, devices, body = std::move(body)] {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      if (body) body();
      else warm_up(backend, parse_devices(devices));
    } catch (...) {
      // (a bad --devices is reported by the run)
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (seconds >= 1e-3) ProcessPhases::get().device_start_up(seconds);  // (none without a device)
  });
  the_warm_up = this;
}

BackendWarmUp::~BackendWarmUp() {
  const BackendWarmUp* self = this;
  the_warm_up.compare_exchange_strong(self, nullptr);
  const std::lock_guard lock(m_);
  if (thread_.joinable()) thread_.join();
}

const BackendWarmUp* BackendWarmUp::current() { return the_warm_up.load(); }

void BackendWarmUp::before_run() const {
  if (!waits_) return;
  const std::lock_guard lock(m_);
  if (!thread_.joinable()) return;
  thread_.join();
  ProcessPhases::get().lap("waiting for the device's start-up");
}

RunOptions make_run_options(const CommonOptions& o, ProgressBar& bar) {
  // Every command makes its run options as its run starts: the wait for the device is here once.
  if (const BackendWarmUp* warm = BackendWarmUp::current()) warm->before_run();
  RunOptions r;
  r.backend = o.backend;
  r.devices = parse_devices(o.devices);
  apply_device_memory(o.device_memory);
  r.mean_separation = o.ravg;
  r.path = o.path;
  r.threads = o.threads;  // (the engine caps it at the processors; the note says so)
  if (const int procs = omp_get_num_procs(); o.threads > procs)
    std::cerr << fmt::format("twobody: note: --threads {} capped at the {} processors of this machine\n", o.threads, procs);
  r.max_pairs = o.max_pairs;
  if (o.backend == "hybrid") note_hybrid_without_gpu();
  r.distribution = cli_distribution();
  if (bar.enabled()) r.progress = [&bar](double f) { bar.update(f); };
  // A statistic may make several runs (a correlation function's DD, DR, RR, ...), each with its plan.
  if (o.explain)
    r.on_plan = [&bar, runs = std::make_shared<std::atomic<int>>(0)](const std::string& plan) {
      const int run = ++*runs;
      ProcessPhases::get().lap(fmt::format("run {}", run));
      bar.print(fmt::format("twobody: plan of run {}:\n{}\n", run, plan));
    };
  return r;
}

namespace {
// A NaN in a result is said on stderr, once, with its usual reason: a ratio over an empty bin.
void note_nan_columns(const Table& t) {
  std::vector<std::string> where;
  for (const TableColumn& c : t.columns) {
    const auto* v = std::get_if<std::vector<double>>(&c.values);
    if (!v) continue;
    std::vector<std::size_t> rows;
    for (std::size_t r = 0; r < v->size(); ++r)
      if (std::isnan((*v)[r])) rows.push_back(r + 1);
    if (rows.empty()) continue;
    const bool more = rows.size() > 6;
    if (more) rows.resize(6);
    where.push_back(fmt::format("{} (row{} {}{})", c.name, rows.size() > 1 ? "s" : "", fmt::join(rows, ", "),
                                more ? ", ..." : ""));
  }
  if (!where.empty())
    std::cerr << fmt::format("twobody: note: NaN in {}: a ratio whose denominator is zero there (no pairs in the bin, "
                             "no random pairs, no partner, or weights summing to zero)\n",
                             fmt::join(where, ", "));
}
}  // namespace

TableFormat output_format(const CommonOptions& o) {
  std::string format = o.format;
  if (format.empty()) {
    std::string ext = std::filesystem::path(o.output).extension().string();
    for (char& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    format = ext == ".json" ? "json" : ext == ".txt" ? "table" : "csv";
    const FileFormat by_name = format_of(o.output);
    if (by_name == FileFormat::Hdf5) format = "hdf5";
    if (by_name == FileFormat::Npz) format = "npz";
    if (by_name == FileFormat::Fits)
      throw_config(fmt::format("{}: FITS output is not written: use .csv, .json, .txt, .h5 or .npz", o.output));
  }
  return parse_table_format(format);
}

void emit(const Table& t, const CommonOptions& o) {
  if (!cli_writes_output()) return;
  note_nan_columns(t);
  write_table_file(o.output, t, output_format(o));
  ProcessPhases::get().lap("write output");
}

}  // namespace twobody::cli
