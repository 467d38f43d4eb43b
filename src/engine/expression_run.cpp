// run_expression and explain_expression (twobody/expression.hpp): what a statistic over a pair
// expression requires, its plan, and the backend that runs it (the CPU today).
#include <fmt/format.h>

#include <chrono>

#include "twobody/detail/cpu/compiled_rows.hpp"
#include "twobody/detail/cpu/run_expression.hpp"
#include "twobody/detail/engine/overloaded.hpp"
#include "twobody/detail/engine/planner.hpp"
#include "twobody/detail/expr/compiled.hpp"
#include "twobody/error.hpp"

namespace twobody {

namespace {

// The key of a value is the value: bins and ranges are in the expression's own units.
struct ValueKey {
  double key_of(double v) const { return v; }
};

struct Prepared {
  cpu::ExpressionPlan plan;
  std::string text;
};

// `dry` (explain): the evaluator is named, not compiled.
Prepared prepare(const PairExpression& f, const Statistic& s, const PairTable& a, const PairTable* b, const RunOptions& opt,
                 CpuCodegen codegen, bool dry) {
  const expr::Compiled& c = f.compiled();
  if ((s.traversal == Traversal::Cross) != (b != nullptr))
    throw_config(b ? "two tables need a cross traversal" : "a cross traversal needs a second table");
  if (s.weighted) throw_config("a pair expression takes no weights: write them into it (a.w * b.w) and sum the values");
  if (opt.backend != "auto" && opt.backend != "cpu") {
    if (opt.backend == "cuda")
      throw Error(ErrorKind::Backend, "pair expressions run on the CPU for now (their CUDA kernels are to come): use "
                                      "--backend cpu or auto");
    throw_config(fmt::format("unknown backend '{}' (auto, cpu, cuda)", opt.backend));
  }
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
  p.plan.progress = &opt.progress;
  std::string what;
  std::visit(Overloaded{[&](const reduce::Count& r) {
                          p.plan.edges = range_of(r.range, "a count");
                          what = "the count of pairs";
                        },
                        [&](const reduce::PairList& r) {
                          p.plan.edges = range_of(r.range, "a pair list");
                          what = "the list of pairs";
                        },
                        [&](const reduce::PerPoint& r) {
                          p.plan.edges = range_of(r.range, "a per-point count");
                          what = "per point, the count of its partners";
                        },
                        [&](const reduce::Histogram& h) {
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
  const std::size_t pairs = pair_total(a.size(), b ? b->size() : a.size(), b == nullptr);
  const cpu::RowsChoice rows = cpu::choose_rows(c, codegen, static_cast<double>(pairs), p.plan.threads, dry);
  p.plan.compiled = rows.fn;
  // The plan in the engine's layout (backend, traversal, output, kernel), the expression's first.
  p.text = fmt::format("backend: cpu (host, {} threads){}\n", p.plan.threads,
                       opt.backend == "cpu" ? "" : "; pair expressions run on the cpu (their CUDA kernels are to come)");
  p.text += f.explain();
  p.text += fmt::format("traversal {}: {}, {} pairs\noutput: {}\ncpu kernel: brute-force tiles, 256 partners a row at a time\n"
                        "evaluator: {}",
                        b ? "cross (every pair of the two sets)" : "auto (each unordered pair once)",
                        b ? fmt::format("{} x {} points", a.size(), b->size()) : fmt::format("{} points", a.size()), pairs,
                        what, rows.how);
  return p;
}

}  // namespace

Result run_expression(const PairExpression& f, const Statistic& stat, const PairTable& a, const PairTable* b,
                      const RunOptions& opt, CpuCodegen codegen) {
  const Prepared p = prepare(f, stat, a, b, opt, codegen, false);
  const auto t0 = std::chrono::steady_clock::now();
  Result r = cpu::run_expression_cpu(p.plan);
  r.info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.info.backend = "cpu";
  r.info.device = "host";
  r.info.n_a = a.size();
  r.info.n_b = b ? b->size() : 0;
  r.info.plan = p.text;
  if (opt.on_plan) opt.on_plan(r.info.plan);
  return r;
}

std::string explain_expression(const PairExpression& f, const Statistic& stat, const PairTable& a, const PairTable* b,
                               const RunOptions& opt, CpuCodegen codegen) {
  return prepare(f, stat, a, b, opt, codegen, true).text;
}

}  // namespace twobody
