// twobody's GPU benchmark: unique pairs per second of the engine's CUDA backend (the whole run()
// call: upload, guard bands, kernel, download) on uniform 3-D points, beside the card's FP32 FMA
// ceiling and seed 000's naive and plain kernels, in one run. Prints a table; --csv FILE also
// writes it as CSV. --quick runs small sizes only.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gpu_baselines.hpp"
#include "matrix_rows.hpp"
#include "tiling_variants.hpp"
#include "twobody/engine.hpp"
#include "twobody/generate.hpp"
#include "twobody/statistics.hpp"

using namespace twobody;

namespace {

struct Row {
  std::string what;
  std::size_t n;
  std::size_t bins;
  double seconds;
  double pairs;
  double settled_fraction;
};

std::vector<Row> rows;

void report(const Row& r) {
  rows.push_back(r);
  std::fprintf(stderr, "%-34s N=%-9zu bins=%-5zu %9.4f s %10.1f Gpairs/s\n", r.what.c_str(), r.n, r.bins, r.seconds,
               r.pairs / r.seconds * 1e-9);
}

// Brute force by default: these rows measure the all-pairs kernel (issue 4), also where the
// cutoff would let the planner pick the grid.
Result timed_run(const Statistic& s, const PointSet& p, const char* path = "brute") {
  RunOptions o;
  o.backend = "cuda";
  o.path = path;
  // The first run pays the module load and first allocations; a long run has amortised them.
  Result first = run(s, p, nullptr, o);
  if (first.info.seconds > 1.0) return first;
  return run(s, p, nullptr, o);
}

// timed_run with one of the planner's switches (an environment variable) set for that run only.
Result timed_run_with(const char* var, const char* value, const Statistic& s, const PointSet& p) {
  setenv(var, value, 1);
  Result r = timed_run(s, p);
  unsetenv(var);
  return r;
}

// 90% of the points in a cube of 1% of the volume, the rest uniform (issue 3's non-uniform case).
PointSet concentrated_box(std::size_t n, double L, std::uint64_t seed) {
  const PointSet u = generate_uniform_box(n, 3, 1.0, seed);
  PointSet p(3, n);
  const double side = L * std::cbrt(0.01);
  for (std::size_t i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d) {
      const double x = u.coord(d)[i];
      p.coord(d)[i] = std::min(i % 10 == 0 ? x * L : 0.3 * L + x * side, std::nextafter(L, 0.0));
    }
  return p;
}

// The grid path (issue 3): pair counts in 20 log bins 0.1..rmax, periodic box of side 1000, the
// planner's choice. Rate: pairs found (inside the bins) per second; evaluations beside it.
void grid_rows(bool quick) {
  struct Case {
    const char* what;
    std::size_t n;
    double rmax;
    bool concentrated;
  };
  std::vector<Case> cases = {{"grid uniform r<25", 1000000, 25, false}, {"grid uniform r<100", 1000000, 100, false},
                             {"grid concentrated r<25", 1000000, 25, true}};
  if (!quick) {
    cases.push_back({"grid uniform r<25", 10000000, 25, false});
    cases.push_back({"grid uniform r<100", 10000000, 100, false});
  }
  for (const auto& c : cases) {
    const PointSet p = c.concentrated ? concentrated_box(c.n, 1000.0, 77) : generate_uniform_box(c.n, 3, 1000.0, 77);
    Statistic s;
    s.metric = Metric::Periodic;
    s.box = Box::cube(3, 1000.0);
    s.reduction = reduce::Histogram{Binning::logarithmic(0.1, c.rmax, 20)};
    const Result r = timed_run(s, p, "auto");
    double found = 0;
    for (auto k : r.counts) found += double(k);
    report({c.what, c.n, 20, r.info.seconds, found, double(r.info.pairs_settled_fp64) / double(r.info.pairs_evaluated)});
    std::fprintf(stderr, "  (%.3g pairs found, %.3g evaluated: %.1f Gevals/s; %s)\n", found, double(r.info.pairs_evaluated),
                 double(r.info.pairs_evaluated) / r.info.seconds * 1e-9, r.info.plan.substr(r.info.plan.rfind("ran: ")).c_str());
  }
}

// Seed 000's Table 4 on this GPU: for each number of bins, the SDH of 512 000 uniform points with
// H = 1, 2, ..., 32 sub-histogram copies (TWOBODY_HIST_COPIES), the fastest H measured, and the
// copies model's choices (ours, with bank collisions, and the seed's, with address collisions).
void copies_table() {
  const std::size_t n = 512000;
  const PointSet p = generate_uniform_box(n, 3, 1.0, 4242);
  const std::vector<int> bins = {1, 2, 4, 8, 10, 16, 24, 32, 48, 64, 80, 96, 128, 152, 200, 256, 300, 400, 450, 600};
  std::printf("\n%6s %9s %9s %9s %9s %9s %9s %9s %8s %8s\n", "bins", "H=1", "H=2", "H=4", "H=8", "H=16", "H=32", "best H",
              "model", "seed");
  for (int nb : bins) {
    Statistic s;
    s.reduction = reduce::Histogram{Binning::linear(0.0, std::sqrt(3.0) * 1.000001, nb)};
    double best = HUGE_VAL;
    int best_h = 0;
    std::string plan;
    std::printf("%6d", nb);
    for (int h = 1; h <= 32; h *= 2) {
      setenv("TWOBODY_HIST_COPIES", std::to_string(h).c_str(), 1);
      double t = HUGE_VAL;
      for (int rep = 0; rep < 2; ++rep) {  // the faster of two
        const Result r = timed_run(s, p);
        t = std::min(t, r.info.seconds);
        plan = r.info.plan;
      }
      if (t < best) {
        best = t;
        best_h = h;
      }
      std::printf(" %9.1f", 0.5 * double(n) * double(n - 1) / t * 1e-9);
    }
    unsetenv("TWOBODY_HIST_COPIES");
    auto after = [&](const char* key) {
      const auto at = plan.find(key);
      return at == std::string::npos ? std::string("?") : std::to_string(std::atoi(plan.c_str() + at + std::strlen(key)));
    };
    std::printf(" %9d %8s %8s\n", best_h, after("the model's choice ").c_str(), after("the seed's ").c_str());
  }
  std::printf("(Gpairs/s of the SDH with H copies; 'model': our copies model, 'seed': seed 000's as published)\n");
}

// Seed 000's §5.1 on this GPU (tiling_variants.cu): every partner source and load width on the
// same points, pairs within r = 0.1 (type I), and the intra-block schedules. Rows go to the table;
// the counts must agree (the same float arithmetic everywhere), else the run fails.
bool tiling_rows(int logn) {
  const std::size_t n = std::size_t(1) << logn;
  const PointSet p = generate_uniform_box(n, 3, 1.0, 77);
  std::vector<float> x(p.float_view(0).begin(), p.float_view(0).end()), y(p.float_view(1).begin(), p.float_view(1).end()),
      z(p.float_view(2).begin(), p.float_view(2).end());
  const auto variants = tiling_variants(x, y, z, 0.1);
  const double padded = double((n + 255) / 256 * 256);
  bool agree = true;
  unsigned long long intra_count = 0;  // the two intra-block schedules count the same pairs
  for (const auto& v : variants) {
    if (v.intra_passes > 0) {
      if (intra_count && v.result.count != intra_count) agree = false;
      intra_count = v.result.count;
    }
    const double pairs = v.intra_passes > 0 ? v.intra_passes * (padded / 256 * 256.0 * 255.0 / 2) : 0.5 * padded * (padded - 1);
    report({std::string("tiling: ") + v.source + " " + v.layout, n, 1, v.result.seconds, pairs, 0});
    if (v.intra_passes == 0 && v.result.count != variants.front().result.count) agree = false;
  }
  std::fprintf(stderr, "tiling variants: counts %s (%llu pairs within 0.1)\n", agree ? "agree" : "DISAGREE",
               variants.front().result.count);
  return agree;
}

// Dense matrices (seed 001's tiles, issue 4), in G entries/s (the "Gpairs/s" column): the tile
// kernel and a one-thread-an-entry kernel into device memory, with the card's write ceiling
// (cudaMemset) beside them; then whole runs to the host, n x n/2 entries, with the result page-
// locked, through pinned staging buffers and plainly, with the bus's device-to-host ceiling.
void matrix_rows(bool quick) {
  const std::size_t n = quick ? 8192 : 32768;
  const MatrixTimes t = matrix_times(n);
  const double entries = double(n) * double(n);
  report({"matrix tiles to device (seed 001)", n, 0, t.tiles, entries, 0});
  report({"matrix one thread an entry to device", n, 0, t.naive, entries, 0});
  report({"device write ceiling (cudaMemset)", n, 0, t.memset, entries, 0});
  report({"bus to pinned host ceiling", n, 0, t.d2h, t.d2h_bytes / 8, 0});
  const PointSet a = generate_uniform_box(n, 3, 1.0, 99), b = generate_uniform_box(n / 2, 3, 1.0, 98);
  Statistic s;
  s.traversal = Traversal::Cross;
  s.reduction = reduce::Matrix{};
  RunOptions o;
  o.backend = "cuda";
  for (const char* host : {"", "registered", "plain"}) {
    if (*host) setenv("TWOBODY_MATRIX_HOST", host, 1);
    run(s, a, &b, o);  // (first-touch of the result's pages and the kernel's load, not timed)
    const Result r = run(s, a, &b, o);
    unsetenv("TWOBODY_MATRIX_HOST");
    report({std::string("twobody matrix to host ") + (*host ? host : "staged"), n, 0, r.info.seconds,
            double(r.rows) * double(r.cols), 0});
    std::fprintf(stderr, "  (%s)\n", r.info.plan.substr(r.info.plan.rfind("ran: ")).c_str());
  }
}

// The SDH rows of n = 2^ln points: the engine's choice for each number of bins and, at 2^20 points
// or more, the other agents that compute it (each checked against the engine's choice).
void sdh_rows(const PointSet& p, std::size_t n, int ln) {
  const std::vector<std::size_t> nbins = {8, 32, 256, 1024, 8192};
  for (std::size_t nb : nbins) {
    Statistic s;
    s.reduction = reduce::Histogram{Binning::linear(0.0, std::sqrt(3.0) * 1.000001, nb)};
    const Result r = timed_run(s, p);
    report({"twobody SDH (exact)", n, nb, r.info.seconds, double(r.info.pairs_evaluated),
            double(r.info.pairs_settled_fp64) / double(r.info.pairs_evaluated)});
    const bool fp64 = r.info.plan.find("FP64 tensor cores") != std::string::npos;
    std::fprintf(stderr, "  (%s)\n", fp64 ? "counting tiles, d² on the FP64 tensor cores" : "CUDA-core counting tiles");
    if (fp64 && ln >= 20) {
      // The same SDH with d² from differences on the CUDA cores (the previous default).
      const Result rc = timed_run_with("TWOBODY_FP64_TENSOR_HISTOGRAM", "0", s, p);
      if (rc.counts != r.counts) std::fprintf(stderr, "  CUDA-CORE COUNTING TILES DIFFER\n");
      report({"CUDA-core counting tiles SDH (exact)", n, nb, rc.info.seconds, double(rc.info.pairs_evaluated),
              double(rc.info.pairs_settled_fp64) / double(rc.info.pairs_evaluated)});
      if (nb >= 256 && nb <= 1024) {
        // The other way of finding the pairs near an edge: a flag bit a pair (the plan's choice
        // from thousands of bins) against the marked words of a block.
        const Result rf = timed_run_with("TWOBODY_HIST_PAIR_FLAGS", "1", s, p);
        if (rf.counts != r.counts) std::fprintf(stderr, "  PAIR FLAGS DIFFER\n");
        report({"FP64 tensor SDH, a flag bit a pair", n, nb, rf.info.seconds, double(rf.info.pairs_evaluated),
                double(rf.info.pairs_settled_fp64) / double(rf.info.pairs_evaluated)});
      }
    }
    if (nb <= 256 && ln >= 20) {
      // The same SDH on the tensor-core histogram (on request: measured slower, kept for study).
      const Result rt = timed_run_with("TWOBODY_TENSOR_HISTOGRAM", "1", s, p);
      if (rt.counts != r.counts) std::fprintf(stderr, "  TENSOR-CORE HISTOGRAM DIFFERS\n");
      report({"tensor-core histogram SDH (exact)", n, nb, rt.info.seconds, double(rt.info.pairs_evaluated),
              double(rt.info.pairs_settled_fp64) / double(rt.info.pairs_evaluated)});
    }
  }
}

// The generic agent on the same points (the counting tiles switched off): SDHs at the model's block
// size and at both forced, and the count `c`.
void generic_agent_rows(const PointSet& p, std::size_t n, const Statistic& c) {
  setenv("TWOBODY_COUNTING_TILES", "0", 1);
  for (std::size_t nb : {std::size_t(256), std::size_t(1024), std::size_t(8192)}) {
    Statistic s;
    s.reduction = reduce::Histogram{Binning::linear(0.0, std::sqrt(3.0) * 1.000001, nb)};
    const Result r = timed_run(s, p);
    report({"generic agent SDH (exact)", n, nb, r.info.seconds, double(r.info.pairs_evaluated),
            double(r.info.pairs_settled_fp64) / double(r.info.pairs_evaluated)});
    std::fprintf(stderr, "  (blocks of %d threads, the model's choice)\n", r.info.threads);
    // Both block sizes, forced: what the model's choice is worth.
    for (const char* block : {"256", "512"}) {
      const Result rb = timed_run_with("TWOBODY_GENERIC_BLOCK", block, s, p);
      if (rb.counts != r.counts) std::fprintf(stderr, "  GENERIC SDH AT %s THREADS DIFFERS\n", block);
      report({std::string("generic agent SDH, blocks of ") + block, n, nb, rb.info.seconds,
              double(rb.info.pairs_evaluated), double(rb.info.pairs_settled_fp64) / double(rb.info.pairs_evaluated)});
    }
  }
  const Result rg = timed_run(c, p);
  report({"generic agent count r<0.1", n, 1, rg.info.seconds, double(rg.info.pairs_evaluated),
          double(rg.info.pairs_settled_fp64) / double(rg.info.pairs_evaluated)});
  unsetenv("TWOBODY_COUNTING_TILES");
}

// Weighted outputs (the exact 128-bit sums on the run's grid, issue 20): the SDH with pair weights
// w_i·w_j and the weighted count, on 2^20 points with weights in [0.5, 1.5), beside the same
// statistics unweighted on the same points.
void weighted_rows() {
  const std::size_t n = std::size_t(1) << 20;
  PointSet p = generate_uniform_box(n, 3, 1.0, 1020);
  const PointSet plain = p;
  std::vector<double> w(n);
  for (std::size_t i = 0; i < n; ++i) w[i] = 0.5 + double((i * 2654435761u) % 1000003u) / 1000003.0;
  p.set_weights(std::move(w));
  for (std::size_t nb : {std::size_t(8), std::size_t(256), std::size_t(1024)}) {
    Statistic s;
    s.reduction = reduce::Histogram{Binning::linear(0.0, std::sqrt(3.0) * 1.000001, nb)};
    const Result ru = timed_run(s, plain);
    report({"SDH unweighted (same points)", n, nb, ru.info.seconds, double(ru.info.pairs_evaluated), 0});
    s.weighted = true;
    const Result r = timed_run(s, p);
    report({"SDH weighted (exact sums)", n, nb, r.info.seconds, double(r.info.pairs_evaluated),
            double(r.info.pairs_settled_fp64) / double(r.info.pairs_evaluated)});
    std::fprintf(stderr, "  (%s)\n", r.info.plan.substr(r.info.plan.rfind("ran: ")).c_str());
  }
  Statistic c;
  c.reduction = reduce::Count{Binning::from_edges({0.0, 0.1})};
  const Result ru = timed_run(c, plain);
  report({"count r<0.1 unweighted (same points)", n, 1, ru.info.seconds, double(ru.info.pairs_evaluated), 0});
  c.weighted = true;
  const Result r = timed_run(c, p);
  report({"count r<0.1 weighted (exact sums)", n, 1, r.info.seconds, double(r.info.pairs_evaluated),
          double(r.info.pairs_settled_fp64) / double(r.info.pairs_evaluated)});
  std::fprintf(stderr, "  (%s)\n", r.info.plan.substr(r.info.plan.rfind("ran: ")).c_str());
}

}  // namespace

void print_table(const std::string& csv) {
  std::printf("\n%-34s %10s %6s %10s %12s %10s\n", "case", "N", "bins", "seconds", "Gpairs/s", "settled");
  for (const auto& r : rows)
    std::printf("%-34s %10zu %6zu %10.4f %12.1f %10.2e\n", r.what.c_str(), r.n, r.bins, r.seconds, r.pairs / r.seconds * 1e-9,
                r.settled_fraction);
  if (!csv.empty()) {
    std::ofstream out(csv);
    out << "case,n,bins,seconds,gpairs_per_s,settled_fraction\n";
    for (const auto& r : rows)
      out << r.what << ',' << r.n << ',' << r.bins << ',' << r.seconds << ',' << r.pairs / r.seconds * 1e-9 << ','
          << r.settled_fraction << '\n';
  }
}

int main(int argc, char** argv) {
  bool quick = false, grid_only = false, no_grid = false;
  std::vector<int> only_logn;  // --logn 20,22: these sizes of the brute-force rows only
  std::string csv;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    if (!std::strcmp(argv[i], "--grid")) grid_only = true;  // only the grid rows (10^6 and 10^7)
    if (!std::strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
    if (!std::strcmp(argv[i], "--logn") && i + 1 < argc) {
      for (const char* c = argv[++i]; *c;) {
        only_logn.push_back(std::atoi(c));
        while (*c && *c != ',') ++c;
        if (*c == ',') ++c;
      }
      no_grid = true;
    }
    if (!std::strcmp(argv[i], "--tiling")) {  // only seed 000's §5.1 tiling variants
      const bool ok = tiling_rows(20);
      print_table(csv);
      return ok ? 0 : 1;
    }
    if (!std::strcmp(argv[i], "--matrix")) {  // only the dense matrix rows
      matrix_rows(quick);
      print_table(csv);
      return 0;
    }
    if (!std::strcmp(argv[i], "--weighted")) {  // only the weighted rows (exact sums)
      weighted_rows();
      print_table(csv);
      return 0;
    }
    if (!std::strcmp(argv[i], "--copies")) {  // only seed 000's Table 4
      copies_table();
      return 0;
    }
  }
  const double fma = fma_lanes_per_second();
  rows.push_back({"fp32 FMA ceiling (lanes/s)", 0, 0, 1.0, fma, 0});
  std::fprintf(stderr, "FP32 FMA ceiling: %.1f T lanes/s\n", fma * 1e-12);
  const double atoms = shared_atomic_lanes_per_second();
  rows.push_back({"shared atomic ceiling (lanes/s)", 0, 0, 1.0, atoms, 0});
  std::fprintf(stderr, "shared atomic ceiling: %.1f G lanes/s\n", atoms * 1e-9);
  // The tensor-core counts' ceiling set by their MMAs alone: the TF32 form spends eight m16n8k8 on
  // a warp's 64 × 8 pairs, the FP16 form four m16n8k16.
  const double mma_tf32 = mma_per_second(false), mma_f16 = mma_per_second(true);
  rows.push_back({"TF32 mma.sync ceiling (count pairs/s)", 0, 0, 1.0, mma_tf32 * 64, 0});
  rows.push_back({"FP16 mma.sync ceiling (count pairs/s)", 0, 0, 1.0, mma_f16 * 128, 0});
  std::fprintf(stderr, "mma.sync: TF32 m16n8k8 %.1f G/s, FP16 m16n8k16 %.1f G/s\n", mma_tf32 * 1e-9, mma_f16 * 1e-9);

  if (!no_grid) grid_rows(quick);
  bool tiling_ok = true;
  if (!grid_only && only_logn.empty()) tiling_ok = tiling_rows(quick ? 16 : 18);
  if (grid_only) {
    print_table(csv);
    return 0;
  }

  const std::vector<int> logn = !only_logn.empty() ? only_logn : quick ? std::vector<int>{16, 18} : std::vector<int>{18, 20, 22};
  for (int ln : logn) {
    const std::size_t n = std::size_t(1) << ln;
    const PointSet p = generate_uniform_box(n, 3, 1.0, 1000 + ln);
    sdh_rows(p, n, ln);
    Statistic c;
    c.reduction = reduce::Count{Binning::from_edges({0.0, 0.1})};
    const Result rc = timed_run(c, p);
    report({"twobody count r<0.1 (type I)", n, 1, rc.info.seconds, double(rc.info.pairs_evaluated),
            double(rc.info.pairs_settled_fp64) / double(rc.info.pairs_evaluated)});
    if (rc.info.plan.find("tensor-core counts: Gram") == std::string::npos)
      std::fprintf(stderr, "  (the count above did not run on the tensor cores)\n");
    // The same count on the split-TF32 form.
    const Result rf = timed_run_with("TWOBODY_TENSOR_COUNT", "tf32", c, p);
    if (rf.counts != rc.counts) std::fprintf(stderr, "  TF32 COUNT DIFFERS\n");
    report({"tensor-core count TF32 r<0.1", n, 1, rf.info.seconds, double(rf.info.pairs_evaluated),
            double(rf.info.pairs_settled_fp64) / double(rf.info.pairs_evaluated)});
    // The same count on the CUDA-core counting tiles.
    const Result rt = timed_run_with("TWOBODY_TENSOR_COUNT", "0", c, p);
    if (rt.counts != rc.counts) std::fprintf(stderr, "  CUDA-CORE COUNT DIFFERS: %llu vs %llu\n",
                                             static_cast<unsigned long long>(rt.counts[0]),
                                             static_cast<unsigned long long>(rc.counts[0]));
    report({"CUDA-core count tiles r<0.1", n, 1, rt.info.seconds, double(rt.info.pairs_evaluated),
            double(rt.info.pairs_settled_fp64) / double(rt.info.pairs_evaluated)});
    // The generic agent on the same points (before the counting tiles), for the comparison.
    if (ln == 20 || (quick && ln == logn.back())) {
      generic_agent_rows(p, n, c);
    }
    Statistic l;
    l.reduction = reduce::PairList{Binning::from_edges({0.0, std::cbrt(2.0 / (n * 4.0 / 3.0 * M_PI))})};
    const Result rl = timed_run(l, p);
    report({"twobody pair list ~N pairs (III)", n, 1, rl.info.seconds, double(rl.info.pairs_evaluated), 0.0});
    std::fprintf(stderr, "  (pair list held %zu pairs)\n", rl.pairs.size());

    std::vector<float> x(p.float_view(0).begin(), p.float_view(0).end()), y(p.float_view(1).begin(), p.float_view(1).end()),
        z(p.float_view(2).begin(), p.float_view(2).end());
    const double pairs = 0.5 * double(n) * double(n - 1);
    if (ln <= 18) report({"seed Alg.1 naive (inexact)", n, 256, naive_sdh(x, y, z, std::sqrt(3.0), 256).seconds, pairs, 0});
    report({"plain Alg.3 (inexact)", n, 256, alg3_sdh(x, y, z, std::sqrt(3.0), 256).seconds, pairs, 0});
    // The pair list's same-device peer: one global atomic per pair in range, same radius.
    unsigned long long found = 0;
    const double r_list = l.binning().edges().back();
    const double t_list = atomic_pair_list(x, y, z, r_list, 4 * n + 1024, &found).seconds;
    report({"plain pair list, atomic a pair (inexact)", n, 1, t_list, pairs, 0});
    std::fprintf(stderr, "  (atomic pair list found %llu pairs)\n", found);
  }

  print_table(csv);
  return tiling_ok ? 0 : 1;
}
