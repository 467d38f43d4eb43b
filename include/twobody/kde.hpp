#pragma once
// Kernel sums: for every point, S_i = Σ_j w_j K(r_ij) over its partners closer than a cutoff, and
// the Nadaraya–Watson estimate m_i = Σ_j w_j K(r_ij) y_j / Σ_j w_j K(r_ij) of a value column y.
// A declaration on the engine: the pairs within the cutoff come from the pair-list reduction
// (reduce::PairList, each pair's separation r from its float64 key, the same bits on the CPU and
// CUDA backends) streamed through RunOptions::pair_sink, and are summed on the host.
//
// Which pairs: those the binning rule puts in [0, cutoff): d² < cutoff·cutoff, d² in float64 in
// coordinate order, the minimum image in a periodic box. A point is never its own partner: S_i is a
// leave-one-out sum (a duplicate point is a partner, at r = 0). Auto: each unordered pair adds
// w_j K to S_i and w_i K to S_j. Cross: a point i of the first set sums over the second set, a
// point j of the second set over the first (its own rows of the table).
//
// Exactness: every term is w_j K(r) in float64, K computed from the pair's r (so from sqrt(d²):
// K carries a relative error of a few ulp times r²/2h² for the Gaussian; an Epanechnikov term just
// inside the support, where K → 0, an absolute error of a few ulp). Each point's terms are added in
// increasing partner index with Neumaier's compensated sum (error about one ulp of the sum plus
// n·ε² of the sum of magnitudes). That order is fixed by the data alone, so the sums are the same
// bits whatever the backend, traversal, threads, chunking, or the order of the pair batches.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "twobody/box.hpp"
#include "twobody/engine.hpp"
#include "twobody/points.hpp"
#include "twobody/result.hpp"
#include "twobody/table.hpp"

namespace twobody {

// Gaussian: K(r) = exp(−r²/2h²), default cutoff 5h (K(5h) = e^−12.5 ≈ 3.7e-6), the tail beyond
// the cutoff not summed. Epanechnikov: K(r) = 1 − r²/h² for r < h, 0 beyond: its support is h, its
// default cutoff h; a larger cutoff only adds zero terms (and partners). Neither is normalised:
// a density estimate divides S_i by the partners' total weight (N − 1 for an unweighted auto run)
// times the kernel's integral, (2π)^{d/2} h^d for the Gaussian (less its tail beyond the cutoff),
// 2 V_d h^d / (d + 2) for Epanechnikov (V_d the volume of the unit d-ball).
enum class KdeKernel { Gaussian, Epanechnikov };

// "gaussian" or "epanechnikov"; Error(Config) otherwise.
KdeKernel parse_kde_kernel(const std::string& name);
const char* to_string(KdeKernel k);

struct KdeOptions {
  KdeKernel kernel = KdeKernel::Gaussian;
  double bandwidth = 0;           // h: positive and finite
  std::optional<double> cutoff;   // positive and finite; none: 5h (Gaussian) or h (Epanechnikov)
  bool weighted = false;          // w_j from the points' weights (both sets need them); else 1
  // The most pair records (24 B each) one engine run lists at once. Beyond it, the points of the
  // first set run in chunks (a count of every point's partners first, to size them), each against
  // the partners it needs: memory stays near twice this (the engine's list and its copy here), a
  // chunk holding at least one point. RunOptions::max_pairs is not applied: this is the bound.
  std::size_t pairs_in_memory = std::size_t(1) << 24;
};

// The cutoff a run uses (the default when none is given); Error(Config) for a bandwidth or cutoff
// that is not positive and finite.
double kde_cutoff(const KdeOptions& opt);

struct KernelSums {
  KdeKernel kernel = KdeKernel::Gaussian;
  double bandwidth = 0;
  double cutoff = 0;
  bool default_cutoff = false;  // the cutoff is the kernel's default (5h or h)
  bool weighted = false;
  // Per point of the first set and (cross only) of the second, in file order: S_i, the number of
  // partners within the cutoff, and (regression only) m_i, NaN where Σ_j w_j K is 0 (no partner
  // within the cutoff, or only terms that are 0).
  std::vector<double> density_a, density_b;
  std::vector<std::uint64_t> partners_a, partners_b;
  std::vector<double> regression_a, regression_b;
  std::uint64_t pairs = 0;  // pairs within the cutoff (auto: unordered)
  std::size_t runs = 0;     // pair-list runs: 1, or the number of chunks
  // The runs' backend and device, their pairs evaluated, the whole call's wall time, and the plan
  // (what kernel_sums decided, then the last pair-list run's plan).
  RunInfo info;
};

// Kernel sums of `a` (auto, b null) or of `a` against `b` (cross), open (no box) or periodic
// (cutoff at most half the box's shortest side).
KernelSums kernel_sums(const PointSet& a, const PointSet* b, const KdeOptions& opt, const std::optional<Box>& box,
                       const RunOptions& run = {});

// The same sums and the Nadaraya–Watson estimate of a value per point: y_a for the points of `a`,
// y_b for those of `b` (cross only; empty for auto). Cross: a point of `a` averages y_b over its
// partners in `b`, a point of `b` y_a over its partners in `a`. Weights, when used, weight both
// sums.
KernelSums kernel_regression(const PointSet& a, const PointSet* b, std::span<const double> y_a,
                             std::span<const double> y_b, const KdeOptions& opt, const std::optional<Box>& box,
                             const RunOptions& run = {});

// The pair-list statistic the sums run on (for explain()): cross when `cross`.
Statistic kernel_sum_statistic(bool cross, const KdeOptions& opt, const std::optional<Box>& box);

// Columns set (1: the first set, 2: the second), index (0-based, in file order), density,
// [regression]: the first set's rows, then (cross) the second's. Metadata: the run's, and kernel,
// bandwidth, cutoff, cutoff_rule ("5h" or "h" when defaulted, "given" otherwise), weighted, pairs, runs.
Table kde_table(const KernelSums& s);

}  // namespace twobody
