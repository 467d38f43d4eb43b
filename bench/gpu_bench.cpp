// twobody's GPU benchmark: unique pairs per second of the engine's CUDA backend (the whole run()
// call: upload, guard bands, kernel, download) on uniform 3-D points, beside the card's FP32 FMA
// ceiling and seed 000's naive and plain kernels, in one run. Prints a table; --csv FILE also
// writes it as CSV. --quick runs small sizes only.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gpu_baselines.hpp"
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

Result timed_run(const Statistic& s, const PointSet& p) {
  RunOptions o;
  o.backend = "cuda";
  run(s, p, nullptr, o);  // warm-up: module load, first allocations
  return run(s, p, nullptr, o);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string csv;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    if (!std::strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
  }
  const double fma = fma_lanes_per_second();
  rows.push_back({"fp32 FMA ceiling (lanes/s)", 0, 0, 1.0, fma, 0});
  std::fprintf(stderr, "FP32 FMA ceiling: %.1f T lanes/s\n", fma * 1e-12);

  const std::vector<int> logn = quick ? std::vector<int>{16, 18} : std::vector<int>{18, 20, 22};
  const std::vector<std::size_t> nbins = {8, 32, 256, 1024, 8192};
  for (int ln : logn) {
    const std::size_t n = std::size_t(1) << ln;
    const PointSet p = generate_uniform_box(n, 3, 1.0, 1000 + ln);
    for (std::size_t nb : nbins) {
      // At 2^22 the slowest bin counts would take minutes; 2^20 covers them.
      if (ln >= 22 && (nb == 32 || nb == 8192)) continue;
      Statistic s;
      s.binning = Binning::linear(0.0, std::sqrt(3.0) * 1.000001, nb);
      const Result r = timed_run(s, p);
      report({"twobody SDH (exact)", n, nb, r.info.seconds, double(r.info.pairs_evaluated),
              double(r.info.pairs_settled_fp64) / double(r.info.pairs_evaluated)});
    }
    Statistic c;
    c.output = OutputKind::Reduction;
    c.binning = Binning::from_edges({0.0, 0.1});
    const Result rc = timed_run(c, p);
    report({"twobody count r<0.1 (type I)", n, 1, rc.info.seconds, double(rc.info.pairs_evaluated),
            double(rc.info.pairs_settled_fp64) / double(rc.info.pairs_evaluated)});
    Statistic l;
    l.output = OutputKind::PairList;
    l.binning = Binning::from_edges({0.0, std::cbrt(2.0 / (n * 4.0 / 3.0 * M_PI))});
    const Result rl = timed_run(l, p);
    report({"twobody pair list ~N pairs (III)", n, 1, rl.info.seconds, double(rl.info.pairs_evaluated), 0.0});
    std::fprintf(stderr, "  (pair list held %zu pairs)\n", rl.pairs.size());

    std::vector<float> x(p.float_view(0).begin(), p.float_view(0).end()), y(p.float_view(1).begin(), p.float_view(1).end()),
        z(p.float_view(2).begin(), p.float_view(2).end());
    const double pairs = 0.5 * double(n) * double(n - 1);
    if (ln <= 18) report({"seed Alg.1 naive (inexact)", n, 256, naive_sdh(x, y, z, std::sqrt(3.0), 256).seconds, pairs, 0});
    report({"plain Alg.3 (inexact)", n, 256, alg3_sdh(x, y, z, std::sqrt(3.0), 256).seconds, pairs, 0});
  }

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
  return 0;
}
