#pragma once
// The options every statistic shares, and how they become engine inputs.
#include <CLI/CLI.hpp>

#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <string>
#include <vector>

#include "progress_bar.hpp"
#include "twobody/box.hpp"
#include "twobody/engine.hpp"
#include "twobody/io.hpp"
#include "twobody/statistics.hpp"
#include "twobody/table.hpp"

namespace twobody::cli {

struct CommonOptions {
  std::string data, data2;
  std::string columns, columns2;
  int weight_column = 0;
  std::string bins_file;
  std::optional<double> rmin, rmax;
  std::size_t nbins = 0;
  bool log_bins = false;
  std::vector<double> box;
  bool wrap = false;
  std::string backend = "auto";
  std::string devices;  // --devices: "all" or a list "0,2"; empty: one device
  std::string device_memory;  // --device-memory: a budget of each GPU's memory ("2G"); empty: its free memory
  std::string path = "auto";
  int threads = 0;
  std::string output;
  std::string format;  // empty: from the output's extension (.json, .txt: table), else csv
  bool explain = false;
  bool ravg = false;  // --ravg: the mean separation per bin (RunOptions::mean_separation)
  std::size_t max_pairs = std::size_t(1) << 31;
};

struct Features {
  bool second_set = true;
  bool weights = true;
  bool box = true;
  bool box_required = false;
  const char* columns_default = "";  // e.g. "1,2" for RA, Dec
  const char* variable = "r";        // the binned variable's name in help texts
};

// Option checks whose messages stay short (CLI11's PositiveNumber names the range up to the largest
// double in 310 digits).
extern const CLI::Validator positive_number;      // > 0 (and finite)
extern const CLI::Validator non_negative_number;  // >= 0 (and finite)

void add_common_options(CLI::App& app, CommonOptions& o, const Features& f);
// --ravg of the 1-D histograms and correlation functions: the mean separation per bin.
void add_ravg_option(CLI::App& cmd, CommonOptions& o);

// --device-memory SIZE on `cmd` into `text` (checked as parse_memory_size reads it), and its value
// set for the process (set_device_memory_limit; an empty text leaves the device's free memory).
void add_device_memory_option(CLI::App& cmd, std::string& text);
void apply_device_memory(const std::string& text);

// --devices as RunOptions::devices: "all" is every visible device; an empty text, none (one device).
std::vector<int> parse_devices(const std::string& text);

// Warms the backend up (twobody::warm_up) on a thread, on each device of --devices, while the
// command reads its files. With --backend cuda the run waits for it before it starts
// (before_run, which make_run_options calls): a run beside the driver's start-up is slowed by it
// (bench/RESULTS.md, 2026-11-29, H200: the plan of Blinn's 5·10^5 sources 62 ms beside it, 0.5 ms
// after it; MRI's engine 0.185 -> 0.055 s; a 10^6-point paircount's ~110 ms of context creation
// inside its run), the wait is a process phase of its own under --explain ("waiting for the
// device's start-up"), and the engine's seconds are the run's own; the process's time stays about
// the same. "auto" does not wait: it may take the CPU, whose run would then wait for a device it
// does not use.
class BackendWarmUp {
 public:
  // With "auto" on one device, none when the inputs (--data, --data2 and `more_inputs`: files, as
  // given) are small: the engine may then give its runs to the CPU (engine/auto_choice.hpp), and a
  // warm-up would make the process wait for a device it does not use. A run that takes the GPU
  // all the same starts it itself, having lost only the overlap with reading the small files.
  explicit BackendWarmUp(const CommonOptions& o, const std::vector<std::string>& more_inputs = {});
  // Before the thread starts CUDA, a run on the default device shows the driver that device alone
  // (device_visibility.hpp: the driver's start-up grows with the devices it sees).
  BackendWarmUp(const std::string& backend, const std::string& devices);
  // The same with a warm-up of the command's own (the lattice maps: a tiny map of the run's
  // function, whose kernels the grid's warm-up does not load) run on the thread instead.
  BackendWarmUp(const std::string& backend, const std::string& devices, std::function<void()> body, bool start = true);
  // Waits for the warm-up to end when the run will take the GPU (--backend cuda).
  void before_run() const;
  // The command's warm-up, if one is under way (one at a time: commands make one each).
  static const BackendWarmUp* current();
  BackendWarmUp(const BackendWarmUp&) = delete;
  BackendWarmUp& operator=(const BackendWarmUp&) = delete;
  ~BackendWarmUp();

 private:
  bool waits_ = false;
  mutable std::mutex m_;
  mutable std::thread thread_;
};

// Points from a file or a built-in catalogue ("builtin:clustered-sky", see builtin_catalogs.hpp).
PointSet load_points(const std::string& spec, const std::string& columns, int weight_column,
                     const char* columns_default, int region_column = 0);
// A file's vectors as stored (every column, or --columns; .npy, .fvecs/.bvecs, HDF5, text), or a
// built-in catalogue's points as vectors: what join, knn and matrix --kernel read.
VectorSet load_vectors(const std::string& spec, const std::string& columns);
// --data and, when given, --data2 (their columns: Features::columns_default unless given).
struct PointSets {
  PointSet a, b;
  bool cross = false;
};
PointSets load_sets(const CommonOptions& o, const Features& f);
// A catalogue with a value per point (kk's kappa, kde's regression values) in column
// `value_column`: its coordinates are `columns`, or (without them) every column but the weight and
// value columns (RA, Dec = 1,2 on the sky).
struct FieldCatalogue {
  PointSet points;
  std::vector<double> values;
};
FieldCatalogue load_field(const std::string& path, const std::string& columns, int weight_column, int value_column,
                          bool sky, const char* value_name = "kappa");
Binning make_binning(const CommonOptions& o, const char* variable);
std::optional<Box> make_box(const CommonOptions& o, int dim);
RunOptions make_run_options(const CommonOptions& o, ProgressBar& bar);
// -o's format: --format, else the output's extension (.json, .txt: table, .h5, .npz), else csv.
TableFormat output_format(const CommonOptions& o);
void emit(const Table& t, const CommonOptions& o);

}  // namespace twobody::cli
