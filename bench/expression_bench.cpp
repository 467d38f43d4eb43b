// The CPU's two evaluators of pair expressions side by side (bench/RESULTS.md, "Pair expressions:
// interpreter and compiled object"): the interpreter and the compiled object on the plan's four
// cases (RDF's key, the NLJ predicate, L_p at d = 5,419, a Gaussian sum at d = 16), each the best
// of three runs, and the compile's wall time (a cold cache). Prints one line a case.
// Usage: twobody_expression_bench [THREADS] [SCALE]; SCALE multiplies the points (default 1).
// twobody_expression_bench gpu [SCALE] (gpu-matrices: the matrices alone): the generated GPU kernels (--backend cuda) on each case
// with the points multiplied by SCALE (default 30), the link's time (a cold cache), Gpairs/s, and
// the result checked against the compiled CPU object on the unscaled case (whose first GPU run,
// on a cold cache, gives the link's time: NVRTC, nvJitLink, the module's load). Then matrices of
// vectors (twobody::vector_matrix, --backend cuda) at n = 10,000 (n = 5,000 times SCALE / 30),
// d = 5,419: the named kernels l2 and pearson and the expression sum(abs(a - b)^3), each checked
// against the CPU on 300 rows first, in seconds and elements (pairs x d) a second.
// twobody_expression_bench gpu-rdf [SCALE]: seed 000's RDF case study — the histogram of
// sqrt(sum((a-b)^2)) over all pairs of 10^6 points times SCALE / 30 (the built-in point paths on
// key edges) against the built-in Euclidean histogram on the same points, 50 and 500 bins, best of
// 3 each on --backend cuda, with the bins in which the two rules differ (pairs within an ulp of an
// edge: fl(sqrt(key)) >= e against key >= fl(e·e)).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include "twobody/engine.hpp"
#include "twobody/expression.hpp"
#include "twobody/matrices.hpp"

namespace {

twobody::PairTable random_table(std::size_t n, int d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 100);
  std::vector<double> x(n * static_cast<std::size_t>(d));
  for (double& v : x) v = u(rng);
  std::vector<std::vector<double>> cols(2);
  for (std::size_t i = 0; i < n; ++i) {
    cols[0].push_back(x[i * static_cast<std::size_t>(d)]);
    cols[1].push_back(static_cast<double>(rng() % 1000));
  }
  return twobody::PairTable(twobody::VectorSet::from_rows(x, n, d), {"x", "t"}, cols);
}

double seconds_of(const auto& f) {
  double best = 1e300;
  for (int k = 0; k < 3; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

// seed 000's RDF case study on the GPU: the expression against the built-in histogram.
int rdf_case_study(double scale) {
  const std::size_t n = static_cast<std::size_t>(1e6 * scale / 30);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0, 100);
  std::vector<std::vector<double>> cols(3, std::vector<double>(n));
  for (auto& c : cols)
    for (double& x : c) x = u(rng);
  const twobody::PointSet points = twobody::PointSet::from_columns(cols);
  const twobody::PairTable table(twobody::VectorSet::from_points(points), {}, {});
  const auto f = twobody::PairExpression::parse("sqrt(sum((a-b)^2))", table.schema());
  twobody::RunOptions cuda;
  cuda.backend = "cuda";
  fmt::print("# RDF from an expression (the built-in point paths on key edges) against the built-in histogram; {} points, "
             "all pairs, --backend cuda, best of 3\n",
             n);
  fmt::print("{:>6} {:>12} {:>12} {:>8} {:>14}\n", "bins", "built-in s", "expression s", "ratio", "bins differing");
  for (const int bins : {50, 500}) {
    twobody::Statistic s;
    s.reduction = twobody::reduce::Histogram{twobody::Binning::linear(0, 174, static_cast<std::size_t>(bins))};
    twobody::Result built, generated;
    const double tb = seconds_of([&] { built = twobody::run(s, points, nullptr, cuda); });
    s.reduction = twobody::reduce::Histogram{twobody::Binning::linear_values(0, 174, static_cast<std::size_t>(bins))};
    const double te = seconds_of([&] { generated = twobody::run_expression(f, s, table, nullptr, cuda); });
    if (generated.info.plan.find("route:") == std::string::npos) {
      fmt::print(stderr, "the expression did not take the point paths:\n{}\n", generated.info.plan);
      return 1;
    }
    int differ = 0;
    for (std::size_t k = 0; k < built.counts.size(); ++k) differ += built.counts[k] != generated.counts[k];
    fmt::print("{:>6} {:>12.4f} {:>12.4f} {:>8.3f} {:>14}\n", bins, tb, te, te / tb, differ);
    // Where the two differ: each run's phases and its kernel's report.
    for (const auto* r : {&built, &generated})
      for (const std::string key : {"phases", "ran:"})
        if (const auto at = r->info.plan.find(key); at != std::string::npos)
          fmt::print("   {} {}\n", r == &built ? "built-in  " : "expression", r->info.plan.substr(at, r->info.plan.find('\n', at) - at).substr(0, 600));
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "gpu-rdf") return rdf_case_study(argc > 2 ? std::atof(argv[2]) : 30.0);
  const bool matrices_only = argc > 1 && std::string(argv[1]) == "gpu-matrices";
  const bool gpu = matrices_only || (argc > 1 && std::string(argv[1]) == "gpu");
  const int threads = gpu ? 0 : argc > 1 ? std::atoi(argv[1]) : 1;
  const double scale = argc > 2 ? std::atof(argv[2]) : gpu ? 30.0 : 1.0;
  const auto cache = std::filesystem::temp_directory_path() / "twobody-expression-bench-cache";
  std::filesystem::remove_all(cache);
  ::setenv("TWOBODY_CACHE_DIR", cache.c_str(), 1);
  struct Case {
    const char* name;
    const char* text;
    int d;
    std::size_t n;
    bool predicate;
    const char* param;  // its value 2.5 (p) or 20 (h); null: none
  } cases[] = {
      {"rdf key, d=3", "sqrt(sum((a-b)^2))", 3, 6000, false, nullptr},
      {"nlj predicate", "a.t < b.t and abs(a.x - b.x) < 5", 3, 8000, true, nullptr},
      {"L_p, d=5419", "sum(abs(a - b)^p)^(1/p)", 5419, 120, false, "p"},
      {"L_3 (integer power), d=5419", "sum(abs(a - b)^3)^(1/3)", 5419, 160, false, nullptr},
      {"gaussian sum, d=16", "exp(-dot(a-b, a-b)/(2*h^2))", 16, 4000, false, "h"},
  };
  if (gpu) {
    if (!matrices_only) {
      fmt::print("# the generated GPU kernels; points x {}; best of 3; link = the first run of the unscaled case\n", scale);
      fmt::print("{:<28} {:>10} {:>10} {:>10} {:>8}\n", "case", "pairs", "seconds", "Gpairs/s", "link s");
    }
    for (const Case& c : cases) {
      if (matrices_only) break;
      twobody::ExpressionParams p;
      if (c.param) p.scalars[c.param] = std::string(c.param) == "p" ? 2.5 : 20.0;
      twobody::Statistic s;
      s.reduction = c.predicate ? twobody::Reduction(twobody::reduce::Count{}) : twobody::Reduction(twobody::reduce::Sum{});
      twobody::RunOptions cuda, cpu;
      double link = 0;  // the first (unscaled) GPU run: the link, the module's load and a small run
      cuda.backend = "cuda";
      cpu.backend = "cpu";
      {  // the same bits as the CPU's on the unscaled case
        const twobody::PairTable t = random_table(c.n, c.d, 7);
        const auto f = twobody::PairExpression::parse(c.text, t.schema(), nullptr, p);
        const auto x = twobody::run_expression(f, s, t, nullptr, cpu, twobody::CpuCodegen::On);
        std::filesystem::remove_all(cache);
        const auto t0 = std::chrono::steady_clock::now();
        const auto y = twobody::run_expression(f, s, t, nullptr, cuda);
        link = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (x.value_sum != y.value_sum || x.counts != y.counts) {
          fmt::print(stderr, "{}: the GPU and the CPU disagree\n", c.name);
          return 1;
        }
      }
      const std::size_t n = static_cast<std::size_t>(static_cast<double>(c.n) * scale);
      const twobody::PairTable t = random_table(n, c.d, 42);
      const auto f = twobody::PairExpression::parse(c.text, t.schema(), nullptr, p);
      const double tg = seconds_of([&] { twobody::run_expression(f, s, t, nullptr, cuda); });
      const double pairs = static_cast<double>(n) * static_cast<double>(n - 1) / 2;
      fmt::print("{:<28} {:>10.3g} {:>10.3f} {:>10.1f} {:>8.2f}\n", c.name, pairs, tg, pairs / tg / 1e9, link);
    }
    fmt::print("# matrices of vectors on the GPU (A x A, the symmetric half computed and mirrored), best of 3\n");
    fmt::print("{:<28} {:>9} {:>10} {:>10} {:>12} {:>10}\n", "kernel", "summation", "n x d", "seconds", "Gelements/s",
               "max |diff|");
    const int d = 5419;
    const std::size_t n = static_cast<std::size_t>(10000 * scale / 30);
    const twobody::VectorSet small = random_table(300, d, 3).coordinates();
    const twobody::VectorSet a = random_table(n, d, 5).coordinates();
    using twobody::MatrixSummation;
    const std::pair<const char*, MatrixSummation> runs[] = {
        {"l2", MatrixSummation::Ordered},     {"l2", MatrixSummation::Gemm},      {"pearson", MatrixSummation::Ordered},
        {"pearson", MatrixSummation::Gemm},   {"cosine", MatrixSummation::Gemm},  {"dot", MatrixSummation::Gemm},
        {"sum(abs(a - b)^3)", MatrixSummation::Ordered}};
    for (const auto& [kernel, summation] : runs) {
      twobody::MatrixOptions opt;
      opt.kernel = kernel;
      opt.summation = summation;
      twobody::RunOptions cuda, cpu;
      cuda.backend = "cuda";
      cpu.backend = "cpu";
      // (ordered: the CPU's bits, checked; gemm: the largest difference from them, printed)
      twobody::MatrixOptions rule = opt;
      rule.summation = MatrixSummation::Ordered;
      const auto want = twobody::vector_matrix(small, nullptr, rule, cpu).values;
      const auto got = twobody::vector_matrix(small, nullptr, opt, cuda).values;
      double diff = 0;
      for (std::size_t e = 0; e < want.size(); ++e) diff = std::max(diff, std::fabs(want[e] - got[e]));
      if (summation == MatrixSummation::Ordered && want != got) {
        fmt::print(stderr, "matrix {}: the GPU and the CPU disagree\n", kernel);
        return 1;
      }
      const double tg = seconds_of([&] { twobody::vector_matrix(a, nullptr, opt, cuda); });
      const double elements = static_cast<double>(n) * static_cast<double>(n + 1) / 2 * d;
      fmt::print("{:<28} {:>9} {:>10} {:>10.3f} {:>12.1f} {:>10.2e}\n", kernel,
                 summation == MatrixSummation::Gemm ? "gemm" : "ordered", fmt::format("{}x{}", n, d), tg, elements / tg / 1e9,
                 diff);
      if (summation == MatrixSummation::Gemm) {
        const std::string plan = twobody::vector_matrix(a, nullptr, opt, cuda).info.plan;
        if (const std::size_t at = plan.find("phases: "); at != std::string::npos)
          fmt::print("  {}\n", plan.substr(at, plan.find('\n', at) - at));
      }
    }
    std::filesystem::remove_all(cache);
    return 0;
  }
  fmt::print("# threads {}; best of 3; seconds and Mpairs/s; compile = first compiled run minus a cached one\n", threads);
  fmt::print("{:<28} {:>10} {:>12} {:>12} {:>9} {:>9} {:>8}\n", "case", "pairs", "interpreted", "compiled", "Mp/s int", "ratio",
             "compile");
  for (const Case& c : cases) {
    const std::size_t n = static_cast<std::size_t>(static_cast<double>(c.n) * scale);
    const twobody::PairTable t = random_table(n, c.d, 42);
    twobody::ExpressionParams p;
    if (c.param) p.scalars[c.param] = std::string(c.param) == "p" ? 2.5 : 20.0;
    const auto f = twobody::PairExpression::parse(c.text, t.schema(), nullptr, p);
    twobody::Statistic s;
    s.reduction = c.predicate ? twobody::Reduction(twobody::reduce::Count{}) : twobody::Reduction(twobody::reduce::Sum{});
    twobody::RunOptions opt;
    opt.threads = threads;
    const auto run = [&](twobody::CpuCodegen g) { return twobody::run_expression(f, s, t, nullptr, opt, g); };
    const auto t0 = std::chrono::steady_clock::now();
    const auto first = run(twobody::CpuCodegen::On);
    const double cold = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    twobody::Result a, b;
    const double ti = seconds_of([&] { a = run(twobody::CpuCodegen::Off); });
    const double tc = seconds_of([&] { b = run(twobody::CpuCodegen::On); });
    if (a.value_sum != b.value_sum || a.counts != b.counts || first.counts != b.counts) {
      fmt::print(stderr, "{}: the evaluators disagree\n", c.name);
      return 1;
    }
    if (b.info.plan.find("evaluator: a compiled object") == std::string::npos) {
      fmt::print(stderr, "{}: not compiled: {}\n", c.name, b.info.plan);
      return 1;
    }
    const double pairs = static_cast<double>(n) * static_cast<double>(n - 1) / 2;
    fmt::print("{:<28} {:>10.3g} {:>12.3f} {:>12.3f} {:>9.1f} {:>8.2f}x {:>8.2f}\n", c.name, pairs, ti, tc, pairs / ti / 1e6, ti / tc,
               cold - tc);
  }
  std::filesystem::remove_all(cache);
  return 0;
}
