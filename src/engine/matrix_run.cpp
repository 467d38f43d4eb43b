// vector_matrix and expression_matrix (twobody/matrices.hpp): the kernel resolved to its
// expression, the checks, the output's sink, the plan's text, and the CPU agent's run.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>

#include "twobody/detail/cpu/compiled_rows.hpp"
#include "twobody/detail/cpu/matrix_tiles.hpp"
#include "twobody/detail/cpu/ranked_rows.hpp"
#include "twobody/detail/engine/auto_choice.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/engine/gemm_matrix_run.hpp"
#include "twobody/detail/engine/gemm_rows.hpp"
#include "twobody/detail/exact/gemm_bounds.hpp"
#include "twobody/detail/engine/planner.hpp"
#include "twobody/detail/expr/compiled.hpp"
#include "twobody/detail/expr/cutoff.hpp"
#include "twobody/detail/expr/emit_pair_cuda.hpp"
#include "twobody/detail/expr/named_kernels.hpp"
#include "twobody/detail/io/array_output.hpp"
#include "twobody/detail/io/matrix_writer.hpp"
#include "twobody/detail/statistics/mutual_information_into.hpp"
#include "twobody/error.hpp"
#include "twobody/io.hpp"
#include "twobody/matrices.hpp"
#include "twobody/mutual_information.hpp"

namespace twobody {

namespace {

enum class SinkKind { Host, Npy, Hdf5, Text };

bool ends_with(const std::string& s, const char* tail) {
  const std::string t = tail;
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

SinkKind sink_kind(const std::string& path) {
  if (path.empty()) return SinkKind::Host;
  if (ends_with(path, ".npy")) return SinkKind::Npy;
  if (ends_with(path, ".h5") || ends_with(path, ".hdf5")) return SinkKind::Hdf5;
  return SinkKind::Text;
}

// A positive whole number from the environment, or 0 when unset.
std::size_t env_size(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return 0;
  char* end = nullptr;
  const unsigned long long x = std::strtoull(v, &end, 10);
  if (*end != '\0' || x == 0) throw_config(fmt::format("{}={}: a positive whole number", name, v));
  return static_cast<std::size_t>(x);
}

// What a matrix may take of host memory: TWOBODY_MATRIX_HOST_BYTES, else half the physical memory.
std::size_t host_budget() {
  if (const std::size_t b = env_size("TWOBODY_MATRIX_HOST_BYTES")) return b;
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) / 2 * static_cast<std::size_t>(page)
                               : std::size_t{4} << 30;
}

std::string bytes_text(double b) {
  const char* units[] = {"bytes", "KB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (b >= 1000 && u < 5) b /= 1000, ++u;
  return u == 0 ? fmt::format("{:.0f} bytes", b) : fmt::format("{:.3g} {}", b, units[u]);
}

// The GEMM route of a dot-like kernel (engine/gemm_rows.hpp), when the run takes it.
struct GemmChoice {
  GemmForm form = GemmForm::Dot;
  const VectorSet* a = nullptr;  // the rows (Spearman: their ranks)
  const VectorSet* b = nullptr;  // null: A x A
  std::string why;               // auto's reason, for the plan
};

// The route of a run: the GEMM's, or the tiles' with auto's reason for them (for the plan; empty
// where the question does not arise).
struct GemmDecision {
  std::optional<GemmChoice> route;
  std::string tiles_because;
};

// The rows of a block the caller fixed: TWOBODY_MATRIX_BLOCK_ROWS, else MatrixOptions::block_rows
// (0: none, the run chooses).
std::size_t fixed_block_rows(const MatrixOptions& opt) {
  const std::size_t forced = env_size("TWOBODY_MATRIX_BLOCK_ROWS");
  return forced ? forced : opt.block_rows;
}

[[noreturn]] void refuse_gemm_for_kernel() {
  throw_config("--summation gemm takes the dot-like kernels: dot, cosine, pearson, spearman, l2, sqeuclidean");
}

// A matrix held in memory (no file, or a text file formed first) within the host budget.
void check_host_budget(std::size_t rows, std::size_t cols) {
  const std::size_t budget = host_budget();
  const double held = static_cast<double>(rows) * static_cast<double>(cols) * 8;
  if (held > static_cast<double>(budget))
    throw Error(ErrorKind::Resource,
                fmt::format("a {} x {} float64 matrix is {}, more than the {} a matrix may hold in memory "
                            "(TWOBODY_MATRIX_HOST_BYTES, default half the physical memory): give -o FILE.npy "
                            "(or .h5) to stream it to disk a block of rows at a time",
                            rows, cols, bytes_text(held), bytes_text(static_cast<double>(budget))));
}

struct Prepared {
  cpu::MatrixJob job;
  cpu::TileForm form;
  std::optional<GemmChoice> gemm;
  bool gpu = false;  // --backend cuda: the generated kernel (or the GEMM route)
  SinkKind sink = SinkKind::Host;
  std::size_t rows = 0, cols = 0;
  std::string text;
};

// The plan's lines of the GEMM route: the kernel and what its entries promise.
std::string gemm_text(const GemmChoice& g, int d, const std::string& block) {
  const char* value = "";
  switch (g.form) {
    case GemmForm::Dot: value = "the dot products themselves"; break;
    case GemmForm::Cosine: value = "1 - g / (norm(a) * norm(b)), the norms the rule's bits (host)"; break;
    case GemmForm::Correlation:
      value = "g / (norm(a - mean(a)) * norm(b - mean(b))), the rows less their means and the norms the rule's bits (host)";
      break;
    case GemmForm::Distance:
    case GemmForm::SquaredDistance:
      value = "q_a + q_b - 2g of the rows shifted to their common mean (q: the shifted rows' squared norms, host)";
      break;
  }
  std::string t = fmt::format(
      "cuda kernel: GEMM route ({}{}): the rows uploaded once; {}, each one cuBLAS DGEMM (float64, the FP64 tensor "
      "cores) of the block's rows against the columns, then one pass forming {}; two blocks in flight (the device "
      "computes one while the host writes the other)\n",
      g.why, g.why.empty() ? "--summation gemm" : "", block, value);
  switch (g.form) {
    case GemmForm::Dot:
      t += fmt::format("evaluator: float64 products, summed in cuBLAS's order (not the rule's k = 0 ... d-1): each entry "
                       "within {:.3g} x sum|a_k b_k| of the exact dot product, as the rule's own value is, so within "
                       "twice that of the rule's (gamma_d; --summation ordered gives its bits)\n",
                       exact::gemm_dot_bound(d));
      break;
    case GemmForm::Cosine:
    case GemmForm::Correlation:
      t += fmt::format("evaluator: float64 products, summed in cuBLAS's order (not the rule's k = 0 ... d-1): each entry "
                       "within {:.3g} (absolute) of the rule's formula with the exact dot product, as the rule's own "
                       "value is, so within twice that of the rule's (gamma_d; --summation ordered gives its bits)\n",
                       exact::gemm_unit_bound(d));
      break;
    case GemmForm::Distance:
    case GemmForm::SquaredDistance:
      t += fmt::format("evaluator: float64, summed in cuBLAS's order: each entry within relative {:.3g} of the true "
                       "value ({} x the rule's own worst case); an entry whose bound (the cancellation of near rows) "
                       "is wider is settled: recomputed by the rule on the device, its bits (counted: settled)\n",
                       g.form == GemmForm::Distance ? exact::gemm_distance_tolerance(d) : exact::gemm_squared_tolerance(d),
                       exact::kSettleFactor);
      break;
  }
  return t;
}

// `run`'s backend is cpu or cuda (auto resolved by backend_for_auto, whose note is `auto_note`).
Prepared prepare(const PairExpression& f, const PairTable& a, const PairTable* b, bool symmetric,
                 const MatrixOptions& opt, const RunOptions& run, const std::string& kernel_line, bool dry,
                 GemmDecision gemm = {}, const std::string& auto_note = {}) {
  const expr::Compiled& c = f.compiled();
  if (run.backend != "auto" && run.backend != "cpu" && run.backend != "cuda") {
    if (run.backend == "hybrid")
      throw Error(ErrorKind::Backend, "matrices run on the CPU or on one GPU: use --backend cpu, auto or cuda");
    throw_config(fmt::format("unknown backend '{}' (auto, cpu, cuda)", run.backend));
  }
  if (opt.dtype == Element::F16) throw_config("--dtype: float64 or float32");
  if (c.result == ValueType::Bool)
    throw_config("a matrix holds values: the pair function is a predicate (write if(PRED, 1, 0) for ones and zeros)");
  const auto check_schema = [&](const PairTable& t, const std::vector<std::string>& names, const char* which) {
    if (t.dim() != c.g.dim || t.schema().names != names)
      throw_config(fmt::format("{} is not the table the expression was parsed for (its dimension or columns differ)", which));
  };
  check_schema(a, c.g.columns_a, "the first table");
  check_schema(b ? *b : a, c.g.columns_b, b ? "the second table" : "the table");
  if (a.size() == 0 || (b && b->size() == 0)) throw_input("a matrix needs at least one row in every set");
  Prepared p;
  p.rows = a.size();
  p.cols = b ? b->size() : a.size();
  p.sink = sink_kind(opt.output);
  // (float32 is an element type of .npy and HDF5 files; text and .npz get the rounded values.)
  const bool f32 = opt.dtype == Element::F32;
  const std::size_t elem = f32 && (p.sink == SinkKind::Npy || p.sink == SinkKind::Hdf5) ? 4 : 8;
  const double bytes = static_cast<double>(p.rows) * static_cast<double>(p.cols) * static_cast<double>(elem);
  if (bytes > static_cast<double>(std::numeric_limits<std::size_t>::max() / 2))
    throw Error(ErrorKind::Resource, fmt::format("a {} x {} matrix is more than this machine can address", p.rows, p.cols));
  if (p.sink == SinkKind::Host || p.sink == SinkKind::Text) check_host_budget(p.rows, p.cols);
  p.form = cpu::tile_form(c);
  cpu::MatrixJob& j = p.job;
  j.f = &c;
  j.a = &a;
  j.b = b ? b : &a;
  // A × A computes the half and mirrors it for the named kernels (all symmetric) and for an
  // expression that gives f(a, b) and f(b, a) the same bits, as its text proves (expr::is_symmetric).
  j.symmetric = (symmetric || expr::is_symmetric(c)) && !b;
  j.threads = run_threads(run);
  const bool forced = env_size("TWOBODY_MATRIX_BLOCK_ROWS") != 0;
  j.block_rows = fixed_block_rows(opt);
  p.gpu = run.backend == "cuda";
  if (p.gpu) {
    if (const std::string why = expression_gpu_unavailable(); !why.empty())
      throw Error(ErrorKind::Backend, "the cuda backend was requested for a matrix, but " + why);
    if (!j.block_rows) j.block_rows = dry ? 0 : matrix_gpu_block_rows(p.rows, p.cols);
  } else {
    cpu::matrix_shape(j, p.rows, p.cols, static_cast<std::size_t>(c.g.dim));
  }
  j.progress = &run.progress;
  const double pairs = j.symmetric ? 0.5 * static_cast<double>(p.rows) * static_cast<double>(p.rows + 1)
                                   : static_cast<double>(p.rows) * static_cast<double>(p.cols);
  std::string evaluator;
  if (!p.gpu && p.form.element == cpu::TileElement::None) {
    const cpu::RowsChoice rows = cpu::choose_rows(c, opt.codegen, pairs, j.threads, dry);
    j.compiled = rows.fn;
    evaluator = rows.how;
  }
  // The plan, in the engine's layout: backend, kernel, the expression, traversal, kernel, output.
  std::string& t = p.text;
  t = p.gpu ? fmt::format("backend: cuda, {}{}\n", expression_gpu_kernel(c), auto_note)
            : fmt::format("backend: cpu (host, {} threads){}\n", j.threads, auto_note);
  t += kernel_line;
  t += f.explain();
  t += fmt::format("traversal {}\n", b ? fmt::format("cross: {} x {}, every entry", p.rows, p.cols)
                                     : j.symmetric ? fmt::format("auto: {} x {}, the half on and above the diagonal "
                                                                 "computed ({}), the other mirrored by the writer",
                                                                 p.rows, p.rows, p.gpu ? "each block's columns from its first row" : "tiles J >= I")
                                                   : fmt::format("auto: {} x {}, every entry (the expression is not "
                                                                 "symmetric bit for bit by its text)",
                                                                 p.rows, p.rows));
  const std::string block = j.block_rows ? fmt::format("blocks of {} rows{}", j.block_rows, forced ? " (TWOBODY_MATRIX_BLOCK_ROWS)" : "")
                                         : std::string("blocks of rows of at most 256 MiB");
  p.gemm = std::move(gemm.route);
  if (p.gemm)
    t += gemm_text(*p.gemm, c.g.dim, block);
  else if (p.gpu && !gemm.tiles_because.empty())
    t += fmt::format("summation: ordered, the generated tiles ({}; --summation gemm forces the GEMM route)\n",
                     gemm.tiles_because);
  else if (p.gpu)
    t += fmt::format("cuda kernel: {}, 32 rows x 128 columns a block of 128 threads, a thread 8 rows x 4 columns {}; "
                     "the expression's functions generated as CUDA, compiled by NVRTC and linked into the matrix kernel "
                     "by nvJitLink; two blocks in flight (the device computes one while the host writes the other)\n"
                     "evaluator: float64 for every entry, the CPU's operations in its order with no FMA, so the entries "
                     "are the CPU's bits\n",
                     block,
                     expr::pair_tile_shares_the_loop(c)
                         ? "in registers, one loop over d for its 32 entries (each row's element read once for its "
                           "columns, each column's once for its rows)"
                         : "evaluated one entry after another (the expression's accumulators would not fit in registers, "
                           "or it has no loop over d)");
  else if (p.form.element != cpu::TileElement::None)
    t += fmt::format("cpu kernel: tiles of {} over {}: {} x {}-column tiles to {} OpenMP threads (dynamic); d = {} in "
                     "slices of {} through an 8 x 16 register tile of {} ({} over k), each entry's accumulator carried "
                     "k = 0 ... d-1 in stored order from +0, then the expression's scalar operations: the rule's bits "
                     "at any tile size and thread count\n",
                     cpu::to_string(p.form.element), block, j.block_rows, j.tile_cols, j.threads, c.g.dim,
                     cpu::kSliceK, cpu::to_string(p.form.element), p.form.reduce == expr::Op::Sum ? "sum" : "max");
  else
    t += fmt::format("cpu kernel: {}, each row's partners 256 at a time by the evaluator, rows to {} OpenMP threads "
                     "(dynamic)\nevaluator: {}\n",
                     block, j.threads, evaluator);
  const char* type = elem == 4 ? "float32" : "float64";
  const std::string size = fmt::format("{} x {} {} = {}", p.rows, p.cols, type, bytes_text(bytes));
  switch (p.sink) {
    case SinkKind::Host: t += fmt::format("output: {} in host memory", size); break;
    case SinkKind::Text:
      t += fmt::format("output: {} formed in host memory, then written to {}{}", size, opt.output,
                       f32 ? " (each value rounded to float32)" : "");
      break;
    case SinkKind::Npy:
      t += fmt::format("output: {} to {} (.npy), each block copied into the file mapped MAP_SHARED (sized with "
                       "ftruncate), its pages released once written; a temporary renamed on success",
                       size, opt.output);
      break;
    case SinkKind::Hdf5:
      t += fmt::format("output: {} to {} (HDF5 dataset /matrix, chunks of 64 x 1024), one hyperslab a tile; a "
                       "temporary renamed on success",
                       size, opt.output);
      break;
  }
  return p;
}

// The sinks' copies and transpositions are bound by memory, not arithmetic: past 32 threads they
// slowed down (10^4 x 10^4 Pearson on the GPU, 64-thread host: 0.119 s at 32 threads, 0.281 s at 64).
int copy_threads(int threads) { return std::min(threads, 32); }

MatrixResult execute(const Prepared& p, const MatrixOptions& opt, const RunOptions& run) {
  MatrixResult r;
  r.rows = p.rows;
  r.cols = p.cols;
  const auto t0 = std::chrono::steady_clock::now();
  std::string device = p.gpu ? "" : "host";
  std::uint64_t settled = 0;
  std::string phases;
  const auto run_tiles = [&](MatrixSink& sink) {
    if (p.gemm) {
      const GemmChoice& g = *p.gemm;
      const auto t_rows = std::chrono::steady_clock::now();
      const std::vector<double> centre = is_distance(g.form) ? gemm_centre(*g.a, g.b, p.job.threads) : std::vector<double>();
      const GemmRows ra = make_gemm_rows(*g.a, g.form, centre, p.job.threads);
      std::optional<GemmRows> rb;
      if (g.b) rb = make_gemm_rows(*g.b, g.form, centre, p.job.threads);
      GemmMatrixJob job;
      job.form = g.form;
      job.a = &ra;
      job.b = rb ? &*rb : nullptr;
      job.symmetric = p.job.symmetric;
      job.block_rows = p.job.block_rows;
      job.progress = p.job.progress;
      const double rows_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_rows).count();
      const GemmMatrixRun out = run_matrix_gemm(job, sink);
      device = out.device;
      settled = out.settled;
      phases = fmt::format("\nphases: rows prepared {:.3f} s, uploaded {:.3f} s, block buffers {:.3f} s, waits for the "
                           "device {:.3f} s, output {:.3f} s",
                           rows_s, out.upload, out.setup, out.device_wait, out.sink);
    } else if (p.gpu) {
      device = run_matrix_gpu(p.job, sink);
    } else {
      cpu::run_matrix_tiles(p.job, p.form, sink);
    }
  };
  const auto to_file = [&](auto open) {
    write_output_file(opt.output, [&](const std::string& file) {
      std::unique_ptr<MatrixSink> sink = open(file, opt.output, p.rows, p.cols, opt.dtype);
      sink->set_threads(copy_threads(p.job.threads));
      run_tiles(*sink);
      sink->finish();
    });
  };
  switch (p.sink) {
    case SinkKind::Npy: to_file(open_npy_matrix); break;
    case SinkKind::Hdf5: to_file(open_hdf5_matrix); break;
    case SinkKind::Host:
    case SinkKind::Text: {
      HostMatrixSink sink(p.rows, p.cols);
      sink.set_threads(copy_threads(p.job.threads));
      run_tiles(sink);
      r.values = sink.take();
      break;
    }
  }
  if (p.sink == SinkKind::Text) {
    // (.npz and text: written from memory by the writer of every matrix; float32 rounded once first.)
    if (opt.dtype == Element::F32)
      for (double& v : r.values) v = static_cast<double>(static_cast<float>(v));
    write_matrix(opt.output, p.rows, p.cols, r.values);
    r.values = MatrixValues();
  }
  r.info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.info.backend = p.gpu ? "cuda" : "cpu";
  r.info.device = device;
  r.info.threads = p.job.threads;
  r.info.n_a = p.rows;
  r.info.n_b = p.job.b == p.job.a ? 0 : p.cols;
  r.info.pairs_evaluated = p.job.symmetric ? static_cast<std::uint64_t>(p.rows) * (p.rows + 1) / 2
                                           : static_cast<std::uint64_t>(p.rows) * p.cols;
  r.info.pairs_settled_fp64 = settled;
  r.info.plan = p.text;
  if (p.gemm && is_distance(p.gemm->form)) r.info.plan += fmt::format("\nsettled: {} entries by the rule", settled);
  r.info.plan += phases;
  if (run.on_plan) run.on_plan(r.info.plan);
  return r;
}

// The CPU's tiles of a named kernel, seconds an element (an entry's one coordinate) a thread:
// 2000 x 5419 l2 on 2 threads took 2.09 s for its 1.08e10 elements (bench/RESULTS.md).
constexpr double kCpuTileElementSeconds = 0.4e-9;

// `run` with auto resolved to cpu or cuda for the matrix of `f` over `a` x `b` (the half of A x A)
// by weigh_generated_gpu, and the plan's note on why (empty for an explicit backend).
RunOptions backend_for_auto(const PairExpression& f, const PairTable& a, const PairTable* b, CpuCodegen codegen,
                            const RunOptions& run, std::string& note) {
  note.clear();
  if (run.backend != "auto") return run;
  const expr::Compiled& c = f.compiled();
  const double rows = static_cast<double>(a.size());
  const double entries = b ? rows * static_cast<double>(b->size()) : 0.5 * rows * (rows + 1);
  const int threads = run_threads(run);
  const double seconds = cpu::tile_form(c).element != cpu::TileElement::None
                             ? entries * std::max(1, c.g.dim) * kCpuTileElementSeconds / threads
                             : cpu::cpu_expression_seconds(c, entries, threads, codegen);
  bool gpu = false;
  note = weigh_generated_gpu(seconds, entries, "entries", gpu);
  RunOptions r = run;
  r.backend = gpu ? "cuda" : "cpu";
  return r;
}

// A vector matrix's kernel, tables and expression, kept together for its run.
struct VectorKernel {
  expr::KernelChoice choice;
  PairTable a, b;
  bool cross = false;
  std::optional<PairExpression> f;
  std::string line;
};

VectorKernel vector_kernel(const VectorSet& a, const VectorSet* b, const MatrixOptions& opt, const RunOptions& run) {
  VectorKernel k;
  k.choice = expr::resolve_kernel(opt.kernel);
  if (b && b->dim() != a.dim())
    throw_input(fmt::format("the two sets have {} and {} dimensions: a matrix pairs rows of equal length", a.dim(), b->dim()));
  a.check_finite("the first set");
  if (b) b->check_finite("the second set");
  if (k.choice.named && std::string(k.choice.named->name) == "lp" && !(std::isfinite(opt.p) && opt.p >= 1))
    throw_config(fmt::format("--p {}: lp needs a finite p >= 1 (chebyshev is p = inf)", opt.p));
  const bool ranks = k.choice.named && k.choice.named->ranks;
  const int threads = run_threads(run);
  k.a = PairTable(ranks ? cpu::ranked_rows(a, threads) : a, {}, {});
  k.cross = b != nullptr;
  if (b) k.b = PairTable(ranks ? cpu::ranked_rows(*b, threads) : *b, {}, {});
  ExpressionParams params;  // (a parameter the expression does not name is not taken)
  params.scalars["p"] = opt.p;
  k.f = PairExpression::parse(k.choice.text, k.a.schema(), b ? &k.b.schema() : nullptr, params);
  k.line = k.choice.named ? fmt::format("kernel: {} = {}{}\n", k.choice.named->name, k.choice.named->expression,
                                        ranks ? " over each row's ranks (ties averaged, as scipy.stats.rankdata)" : "")
                          : "kernel: an expression\n";
  return k;
}

// Below this dimension auto keeps the ordered tiles: the output's bandwidth, not the arithmetic,
// bounds both routes there, and the tiles keep the rule's bits.
constexpr int kGemmMinDim = 64;

// The GEMM route for this run (MatrixSummation), or none; --summation gemm where it cannot run is an error.
GemmDecision choose_gemm(const VectorKernel& k, const MatrixOptions& opt, const RunOptions& run) {
  if (opt.summation == MatrixSummation::Ordered) return {};
  const bool forced = opt.summation == MatrixSummation::Gemm;
  const std::optional<GemmForm> form = k.choice.named ? gemm_form(k.choice.named->name) : std::nullopt;
  if (!form) {
    if (forced) refuse_gemm_for_kernel();
    return {};
  }
  if (run.backend != "cuda") {
    if (forced) throw Error(ErrorKind::Backend, "--summation gemm runs on the GPU: give --backend cuda");
    return {};
  }
  GemmChoice g;
  g.form = *form;
  g.a = &k.a.coordinates();
  g.b = k.cross ? &k.b.coordinates() : nullptr;
  const int d = g.a->dim();
  if (!forced) {
    if (d < kGemmMinDim)
      return {std::nullopt, fmt::format("auto: d = {} < {}, where the output's bandwidth bounds both routes", d, kGemmMinDim)};
    if (!expression_gpu_unavailable().empty()) return {};  // (prepare says why)
    if (const std::string why = gemm_route_unavailable(); !why.empty()) return {std::nullopt, "auto: " + why};
    // The prepared rows (twice for distances) and two blocks of rows must fit the device.
    const double per_row = static_cast<double>(d) * 8 * (is_distance(*form) ? 2 : 1);
    const double rows = static_cast<double>(g.a->size() + (g.b ? g.b->size() : 0));
    const double cols = static_cast<double>(g.b ? g.b->size() : g.a->size());
    const std::size_t forced_rows = fixed_block_rows(opt);
    const double block = forced_rows ? static_cast<double>(forced_rows) * cols * 8 : 256.0 * (1 << 20);
    const double need = per_row * rows + 2 * block + cols * 16;
    const double free = static_cast<double>(cuda_free_device_bytes());
    if (need > 0.9 * free)
      return {std::nullopt, fmt::format("auto: the GEMM route's rows and blocks ({}) would not fit the device's free {}",
                                        bytes_text(need), bytes_text(free))};
    g.why = fmt::format("auto: a dot-like kernel, d = {} >= {}", d, kGemmMinDim);
  }
  return {std::move(g), ""};
}

// Mutual information is no pair expression (each entry reads both rows' spline weights, joint
// table and entropies): statistics/mutual_information.cpp computes it, streamed to a file's sink
// a block of rows at a time, or whole in memory.
bool is_mutual_information(const std::string& kernel) { return kernel == "mi" || kernel == "mutual-information"; }

MutualInformationOptions mi_options(const MatrixOptions& opt) {
  MutualInformationOptions o;
  o.bins = opt.mi_bins;
  o.order = opt.mi_order;
  return o;
}

MatrixResult mi_matrix(const VectorSet& a, const VectorSet* b, const MatrixOptions& opt, const RunOptions& run) {
  if (run.backend == "cuda" || run.backend == "hybrid")
    throw Error(ErrorKind::Backend, "mutual information runs on the CPU for now: use --backend cpu or auto");
  if (opt.summation == MatrixSummation::Gemm) refuse_gemm_for_kernel();
  MatrixResult r;
  r.rows = a.size();
  r.cols = b ? b->size() : a.size();
  r.kernel = "mi";
  const SinkKind kind = sink_kind(opt.output);
  if (kind == SinkKind::Npy || kind == SinkKind::Hdf5) {
    // Streamed a block of rows at a time (memory: one block), as the other kernels' files.
    const std::size_t fixed = fixed_block_rows(opt);
    const std::size_t block =
        fixed ? fixed : std::max<std::size_t>(1, (std::size_t{256} << 20) / (8 * std::max<std::size_t>(r.cols, 1)));
    write_output_file(opt.output, [&](const std::string& file) {
      std::unique_ptr<MatrixSink> sink = kind == SinkKind::Npy ? open_npy_matrix(file, opt.output, r.rows, r.cols, opt.dtype)
                                                               : open_hdf5_matrix(file, opt.output, r.rows, r.cols, opt.dtype);
      sink->set_threads(copy_threads(run_threads(run)));
      r.info = mutual_information_into(a, b, mi_options(opt), block, *sink, run);
      sink->finish();
    });
    r.info.plan += fmt::format("\noutput: {} x {} {} to {}, a block of rows at a time", r.rows, r.cols,
                               opt.dtype == Element::F32 ? "float32" : "float64", opt.output);
    if (run.on_plan) run.on_plan(r.info.plan);
    return r;
  }
  check_host_budget(r.rows, r.cols);
  MutualInformationMatrix m = mutual_information(a, b, mi_options(opt), run);
  r.info = std::move(m.info);
  r.info.plan += fmt::format("\noutput: {} x {} float64{}", r.rows, r.cols, opt.output.empty() ? " in host memory" : ", then written to " + opt.output);
  if (kind == SinkKind::Host) {
    r.values = std::move(m.values);
  } else {
    if (opt.dtype == Element::F32)
      for (double& v : m.values) v = static_cast<double>(static_cast<float>(v));
    write_matrix(opt.output, r.rows, r.cols, m.values);
  }
  if (run.on_plan) run.on_plan(r.info.plan);
  return r;
}

}  // namespace

MatrixSummation parse_matrix_summation(const std::string& s) {
  if (s == "auto") return MatrixSummation::Auto;
  if (s == "ordered") return MatrixSummation::Ordered;
  if (s == "gemm") return MatrixSummation::Gemm;
  throw_config(fmt::format("--summation {}: auto, ordered or gemm", s));
}

Element parse_matrix_dtype(const std::string& s) {
  if (s == "float64") return Element::F64;
  if (s == "float32") return Element::F32;
  throw_config(fmt::format("--dtype {}: float64 or float32", s));
}

MatrixResult vector_matrix(const VectorSet& a, const VectorSet* b, const MatrixOptions& opt, const RunOptions& run) {
  if (is_mutual_information(opt.kernel)) return mi_matrix(a, b, opt, run);
  const VectorKernel k = vector_kernel(a, b, opt, run);
  std::string note;
  const RunOptions on = backend_for_auto(*k.f, k.a, k.cross ? &k.b : nullptr, opt.codegen, run, note);
  const Prepared p = prepare(*k.f, k.a, k.cross ? &k.b : nullptr, k.choice.named != nullptr, opt, on, k.line, false,
                             choose_gemm(k, opt, on), note);
  MatrixResult r = execute(p, opt, on);
  r.kernel = k.choice.named ? k.choice.named->name : "expression";
  return r;
}

std::string explain_vector_matrix(const VectorSet& a, const VectorSet* b, const MatrixOptions& opt, const RunOptions& run) {
  if (is_mutual_information(opt.kernel))
    return fmt::format("backend: cpu\nkernel: mi, mutual information by Daub et al.'s B-splines of order {} on {} bins "
                       "(twobody::mutual_information, docs/exactness.md#mutual-information), in bits\n",
                       opt.mi_order, opt.mi_bins);
  const VectorKernel k = vector_kernel(a, b, opt, run);
  std::string note;
  const RunOptions on = backend_for_auto(*k.f, k.a, k.cross ? &k.b : nullptr, opt.codegen, run, note);
  return prepare(*k.f, k.a, k.cross ? &k.b : nullptr, k.choice.named != nullptr, opt, on, k.line, true,
                 choose_gemm(k, opt, on), note)
      .text;
}

MatrixResult expression_matrix(const PairExpression& f, const PairTable& a, const PairTable* b, const MatrixOptions& opt,
                               const RunOptions& run) {
  std::string note;
  const RunOptions on = backend_for_auto(f, a, b, opt.codegen, run, note);
  MatrixResult r = execute(prepare(f, a, b, false, opt, on, "kernel: the pair expression\n", false, {}, note), opt, on);
  r.kernel = "expression";
  return r;
}

std::string explain_expression_matrix(const PairExpression& f, const PairTable& a, const PairTable* b,
                                      const MatrixOptions& opt, const RunOptions& run) {
  std::string note;
  const RunOptions on = backend_for_auto(f, a, b, opt.codegen, run, note);
  return prepare(f, a, b, false, opt, on, "kernel: the pair expression\n", true, {}, note).text;
}

}  // namespace twobody
