// run_expression and explain_expression (twobody/expression.hpp): what a statistic over a pair
// expression requires, its plan, and what runs it: the built-in point paths for the distance
// itself (expression_points_route.hpp), else the generated function on the CPU or the GPU.
#include <fmt/format.h>

#include <chrono>

#include "twobody/detail/cpu/compiled_rows.hpp"
#include "twobody/detail/cpu/run_expression.hpp"
#include "twobody/detail/engine/auto_choice.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/engine/expression_points_route.hpp"
#include "twobody/detail/engine/key_edge_run.hpp"
#include "twobody/detail/engine/overloaded.hpp"
#include "twobody/detail/engine/planner.hpp"
#include "twobody/detail/expr/compiled.hpp"
#include "twobody/detail/expr/cutoff.hpp"
#include "twobody/error.hpp"

namespace twobody {

namespace {

// The key of a value is the value: bins and ranges are in the expression's own units.
struct ValueKey {
  double key_of(double v) const { return v; }
};

struct Prepared {
  cpu::ExpressionPlan plan;
  std::string traversal;  // the traversal's and the output's lines
  std::size_t pairs = 0;
  std::string text;  // the plan up to the kernel's line (the CPU's: its traversal is the run's), then
  std::string tail;  // what follows it
  bool gpu = false;  // --backend cuda: the generated kernels
};

// The run validated (tables, backend, output, range) and its plan's edges and cutoff; the
// evaluator is chosen after, by choose_evaluator, unless the points' route takes the run.
Prepared validate(const PairExpression& f, const Statistic& s, const PairTable& a, const PairTable* b, const RunOptions& opt) {
  const expr::Compiled& c = f.compiled();
  if ((s.traversal == Traversal::Cross) != (b != nullptr))
    throw_config(b ? "two tables need a cross traversal" : "a cross traversal needs a second table");
  if (s.weighted) throw_config("a pair expression takes no weights: write them into it (a.w * b.w) and sum the values");
  if (opt.backend == "hybrid")
    throw Error(ErrorKind::Backend, "pair expressions run on the CPU or on one GPU: use --backend cpu, auto or cuda");
  if (opt.backend != "auto" && opt.backend != "cpu" && opt.backend != "cuda")
    throw_config(fmt::format("unknown backend '{}' (auto, cpu, cuda)", opt.backend));
  const auto check_schema = [&](const PairTable& t, const std::vector<std::string>& names, const char* which) {
    if (t.dim() != c.g.dim || t.schema().names != names)
      throw_config(fmt::format("{} is not the table the expression was parsed for (its dimension or columns differ)", which));
  };
  check_schema(a, c.g.columns_a, "the first table");
  check_schema(b ? *b : a, c.g.columns_b, b ? "the second table" : "the table");
  if (a.size() == 0 || (b && b->size() == 0)) throw_input("a pair expression needs points in every table");
  const bool predicate = c.result == ValueType::Bool;
  const auto range_of = [&](const Binning& range, const char* what) {
    if (predicate) {
      if (range.nbins() != 0)
        throw_config(fmt::format("{} of a predicate takes no range: the pairs are those where it is true", what));
      return KeyEdges::from_keys({1.0, 2.0});  // true is 1, false NaN
    }
    if (range.nbins() == 0)
      throw_config(fmt::format("{} of a value needs a range [lo, hi) (--rmin/--rmax), or a Bool pair function", what));
    return KeyEdges::make(range, ValueKey{}, s.includes_hi());
  };
  Prepared p;
  p.plan.f = &c;
  p.plan.stat = &s;
  p.plan.a = &a;
  p.plan.b = b ? b : &a;
  p.plan.is_auto = b == nullptr;
  p.plan.threads = run_threads(opt);
  p.plan.max_pairs = opt.max_pairs;
  if (opt.path != "auto" && opt.path != "brute" && opt.path != "grid")
    throw_config(fmt::format("unknown path '{}' (auto, brute or grid)", opt.path));
  p.plan.path = opt.path;
  p.plan.symmetric = b == nullptr && expr::is_symmetric(c);
  p.plan.progress = &opt.progress;
  std::string what;
  bool ranged = false;  // the output takes values in [lo, hi): a value's distance form bounds its pairs
  std::visit(Overloaded{[&](const reduce::Count& r) {
                          ranged = true;
                          p.plan.edges = range_of(r.range, "a count");
                          what = "the count of pairs";
                        },
                        [&](const reduce::PairList& r) {
                          ranged = true;
                          p.plan.edges = range_of(r.range, "a pair list");
                          what = "the list of pairs";
                        },
                        [&](const reduce::PerPoint& r) {
                          ranged = true;
                          p.plan.edges = range_of(r.range, "a per-point count");
                          what = "per point, the count of its partners";
                        },
                        [&](const reduce::Histogram& h) {
                          ranged = true;
                          if (predicate) throw_config("a histogram bins a value: the pair function is a predicate (count it)");
                          if (h.regions > 0 || h.mean_separation)
                            throw_config("jackknife regions and mean separations take the built-in statistics");
                          if (h.bins.nbins() == 0) throw_config("a histogram needs bins");
                          p.plan.edges = KeyEdges::make(h.bins, ValueKey{}, false);
                          what = "a histogram of the value";
                        },
                        [&](const reduce::Sum&) {
                          if (predicate) throw_config("a sum adds values: the pair function is a predicate (count it)");
                          what = "the sum of the values (exact; a first pass finds the largest |value| for its grid)";
                        },
                        [&](const reduce::PerPointValue& v) {
                          if (predicate) throw_config("per-point values reduce values: the pair function is a predicate (count it)");
                          what = v.of == reduce::PerPointValue::Of::Sum ? "per point, the sum of its partners' values (exact)"
                                 : v.of == reduce::PerPointValue::Of::Min ? "per point, the least of its partners' values"
                                                                          : "per point, the largest of its partners' values";
                        },
                        [](const reduce::Matrix&) {
                          throw_config("a matrix of a pair expression is expression_matrix's (twobody/matrices.hpp; "
                                       "twobody custom --emit matrix), not run_expression's");
                        },
                        [](const auto&) { throw_config("a pair expression reduces into counts, bins, pair lists, sums or per-point values"); }},
             s.reduction);
  // A cutoff on the points' distance that the expression implies (expr/cutoff.hpp): the CPU's
  // traversal may take a cell grid for it.
  if (const auto cut = expr::predicate_cutoff(c)) {
    p.plan.cutoff = *cut;
    p.plan.cutoff_source = "a predicate's term on the distance";
  } else if (ranged && !predicate) {
    if (const auto v = expr::value_cutoff(c, p.plan.edges.hi())) {
      p.plan.cutoff = *v;
      p.plan.cutoff_source = "the value is the distance, or its square, below the range's upper edge";
    }
  }
  p.pairs = pair_total(a.size(), b ? b->size() : a.size(), b == nullptr);
  p.traversal =
      fmt::format("traversal {}: {}, {} pairs\noutput: {}\n", b ? "cross (every pair of the two sets)" : "auto (each unordered pair once)",
                  b ? fmt::format("{} x {} points", a.size(), b->size()) : fmt::format("{} points", a.size()), p.pairs, what);
  return p;
}

// auto's backend for a generated function (`gpu`), and the plan's note on it
// (weigh_generated_gpu). The CPU's estimate counts the pairs its traversal evaluates: the cell
// grid's, when the cutoff gives one that pays (built only when the brute estimate is past the
// threshold).
std::string choose_for_auto(const Prepared& p, const expr::Compiled& c, CpuCodegen codegen, bool& gpu) {
  double evaluated = static_cast<double>(p.pairs);
  double seconds = cpu::cpu_expression_seconds(c, evaluated, p.plan.threads, codegen);
  if (seconds > kGeneratedGpuWorthSeconds && p.plan.cutoff > 0) {
    if (const auto grid = cpu::choose_expression_grid(p.plan, false, kCpuTraversalCost); grid && grid->chosen) {
      evaluated = static_cast<double>(grid->plan.evaluations);
      seconds = cpu::cpu_expression_seconds(c, evaluated, p.plan.threads, codegen);
    }
  }
  return weigh_generated_gpu(seconds, evaluated, "evaluations", gpu);
}

// The evaluator (the generated GPU kernels, or the CPU's interpreter or compiled object) and the
// plan's text. `dry` (explain): the evaluator is named, not compiled.
void choose_evaluator(Prepared& p, const PairExpression& f, const RunOptions& opt, CpuCodegen codegen, bool dry) {
  const expr::Compiled& c = f.compiled();
  const std::string& traversal = p.traversal;
  const std::size_t pairs = p.pairs;
  // The plan in the engine's layout (backend, traversal, output, kernel), the expression's first.
  bool gpu = opt.backend == "cuda";
  const std::string auto_note = opt.backend == "auto" ? choose_for_auto(p, c, codegen, gpu) : std::string();
  if (gpu) {
    if (const std::string why = expression_gpu_unavailable(); !why.empty())
      throw Error(ErrorKind::Backend, "the cuda backend was requested for a pair expression, but " + why);
    p.gpu = true;
    p.text = fmt::format("backend: cuda, {}{}\n", expression_gpu_kernel(c), auto_note);
    p.text += f.explain();
    p.text += traversal;
    p.text += "cuda kernel: the expression's function generated as CUDA, compiled by NVRTC and linked into the "
              "reduction's kernel by nvJitLink; 128 anchors a block (a thread each), against 512 partners (tiles) or a "
              "grid block's partner cells; traversal: ";
    if (dry) p.text += cpu::describe_expression_traversal(p.plan, kCudaExpressionTraversalCost);
    p.tail = "\nevaluator: float64 for every pair, the CPU's operations in its order with no FMA (no float32 bound is derived "
             "for expressions), so the results are the CPU's bits";
    return;
  }
  const cpu::RowsChoice rows = cpu::choose_rows(c, codegen, static_cast<double>(pairs), p.plan.threads, dry);
  p.plan.compiled = rows.fn;
  p.text = fmt::format("backend: cpu (host, {} threads){}\n", p.plan.threads, auto_note);
  p.text += f.explain();
  p.text += traversal;
  p.text += "cpu kernel: ";
  if (dry) p.text += cpu::describe_expression_traversal(p.plan, kCpuTraversalCost);
  p.tail = fmt::format("\nevaluator: {}", rows.how);
}

// The value edges of a plan (its padded key edges without the padding; none for a sum or
// per-point values).
std::vector<double> value_edges(const KeyEdges& e) {
  if (e.padded.size() < static_cast<std::size_t>(e.nbins) + 1 || e.nbins == 0) return {};
  return std::vector<double>(e.padded.begin(), e.padded.begin() + e.nbins + 1);
}

// The options of a routed run: its plan, told to the caller, starts with the expression's; its
// pairs stay in Result::pairs, as the generated function's do (no pair sink).
RunOptions routed_options(const RunOptions& opt, const std::string& head) {
  RunOptions o = opt;
  if (opt.on_plan) o.on_plan = [head, tell = opt.on_plan](const std::string& plan) { tell(head + plan); };
  o.pair_sink = nullptr;
  return o;
}

}  // namespace

Result run_expression(const PairExpression& f, const Statistic& stat, const PairTable& a, const PairTable* b,
                      const RunOptions& opt, CpuCodegen codegen) {
  Prepared p = validate(f, stat, a, b, opt);
  if (const auto route = points_route(f, stat, value_edges(p.plan.edges), a, b, opt)) {
    const std::string head = f.explain() + p.traversal;
    Result r = run_on_key_edges(route->stat, route->a, b ? &route->b : nullptr, routed_options(opt, head), route->keys,
                                route->why);
    r.info.plan = head + r.info.plan;
    return r;
  }
  choose_evaluator(p, f, opt, codegen, false);
  const auto t0 = std::chrono::steady_clock::now();
  Result r;
  if (p.gpu && opt.backend == "auto") {
    // auto's GPU failing where the CPU would not (the kernel's generation or link): the CPU
    // runs, and the plan says why.
    try {
      r = run_expression_gpu(p.plan);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Backend) throw;
      RunOptions cpu = opt;
      cpu.backend = "cpu";
      p.gpu = false;
      choose_evaluator(p, f, cpu, codegen, false);
      p.text.insert(p.text.find('\n'), fmt::format("; auto took the GPU, which failed ({}): the cpu ran", e.what()));
      r = cpu::run_expression_cpu(p.plan);
    }
  } else {
    r = p.gpu ? run_expression_gpu(p.plan) : cpu::run_expression_cpu(p.plan);
  }
  r.info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.info.backend = p.gpu ? "cuda" : "cpu";
  if (!p.gpu) r.info.device = "host";
  r.info.n_a = a.size();
  r.info.n_b = b ? b->size() : 0;
  r.info.plan = p.text + r.info.plan + p.tail;
  if (opt.on_plan) opt.on_plan(r.info.plan);
  return r;
}

std::string explain_expression(const PairExpression& f, const Statistic& stat, const PairTable& a, const PairTable* b,
                               const RunOptions& opt, CpuCodegen codegen) {
  Prepared p = validate(f, stat, a, b, opt);
  if (const auto route = points_route(f, stat, value_edges(p.plan.edges), a, b, opt))
    return f.explain() + p.traversal +
           explain_on_key_edges(route->stat, route->a, b ? &route->b : nullptr, opt, route->keys, route->why);
  choose_evaluator(p, f, opt, codegen, true);
  return p.text + p.tail;
}

}  // namespace twobody
