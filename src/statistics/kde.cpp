// Kernel sums (twobody/kde.hpp): the pair-list reduction within the cutoff, streamed through
// RunOptions::pair_sink, each pair's kernel term added on the host to both of its points.
#include "twobody/kde.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <utility>

#include "twobody/error.hpp"

namespace twobody {

namespace {

// Neumaier's compensated sum: the sum of n terms to about one ulp plus n·ε² of Σ|x|.
struct CompensatedSum {
  double sum = 0, carry = 0;
  void add(double x) {
    const double t = sum + x;
    carry += std::abs(sum) >= std::abs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }
  double value() const { return sum + carry; }
};

double kernel_value(KdeKernel k, double r, double h) {
  const double q = r / h;
  if (k == KdeKernel::Gaussian) return std::exp(-0.5 * q * q);
  // (1 − q)(1 + q): 1 − q is exact near the support's edge, where 1 − q·q would round q² first.
  return q < 1.0 ? (1.0 - q) * (1.0 + q) : 0.0;
}

// One set's side of the sums: what its points bring to their partners (weights, values) and what
// they collect from them.
struct Side {
  std::span<const double> w, y;
  std::vector<CompensatedSum> den, num;
  std::vector<std::uint64_t> partners;

  Side(std::size_t n, std::span<const double> weights, std::span<const double> values)
      : w(weights), y(values), den(n), num(values.empty() ? 0 : n), partners(n, 0) {}
};

// Adds partner j of `from` to point i of `to`. Every point takes its terms in increasing partner
// index (the callers see to it), so its sums do not depend on how the pairs were found.
void add_term(Side& to, std::size_t i, const Side& from, std::size_t j, double k) {
  const double wk = from.w.empty() ? k : from.w[j] * k;
  to.den[i].add(wk);
  if (!from.y.empty()) to.num[i].add(wk * from.y[j]);
  ++to.partners[i];
}

// A copy of points [first, first + n), coordinates only (the weights are applied here, not by
// the engine).
PointSet slice(const PointSet& p, std::size_t first, std::size_t n) {
  PointSet s(p.dim(), n);
  for (int d = 0; d < p.dim(); ++d) std::copy_n(p.coord(d).begin() + first, n, s.coord(d).begin());
  return s;
}

// What the runs of one call share: the caller's options, the kernel, and the totals the result
// reports.
struct Call {
  const RunOptions& user;
  KdeKernel kernel;
  double h;
  RunInfo info;
  std::string last_plan;
  double progress_shown = 0;

  // The caller's options for one engine run, its progress mapped onto [from, from + width).
  RunOptions options(double from, double width) {
    RunOptions o = user;
    o.max_pairs = std::numeric_limits<std::size_t>::max();
    o.pair_sink = nullptr;
    if (user.progress)
      o.progress = [this, from, width](double f) {
        progress_shown = std::max(progress_shown, from + width * f);
        user.progress(progress_shown);
      };
    return o;
  }
  void account(const Result& r) {
    info.backend = r.info.backend;
    info.device = r.info.device;
    info.threads = r.info.threads;
    info.pairs_evaluated += r.info.pairs_evaluated;
    info.pairs_settled_fp64 += r.info.pairs_settled_fp64;
  }
};

// Where the points of one pair-list run sit in the whole call.
struct Piece {
  std::size_t a0 = 0, b0 = 0;  // offsets of the run's first and second set
  bool is_auto = false;         // the call is auto: both points of a pair collect
  bool keep_above = false;      // keep only pairs with j > i (an auto chunk run as a cross run)
};

// Runs the pair list of `anchors` against `partners` (null: auto) and adds its pairs to the sides.
std::uint64_t run_piece(Call& call, const Statistic& stat, const PointSet& anchors, const PointSet* partners,
                        const Piece& piece, Side& sa, Side& sb, RunOptions opt) {
  std::vector<PairRecord> pairs;
  std::mutex taking;
  opt.pair_sink = [&](std::span<const PairRecord> batch) {
    std::lock_guard<std::mutex> lock(taking);
    // The CPU backend hands the whole list at once: no growth beyond it.
    if (pairs.empty()) pairs.reserve(batch.size());
    pairs.insert(pairs.end(), batch.begin(), batch.end());
  };
  const Result r = run(stat, anchors, partners, opt);
  call.account(r);
  call.last_plan = r.info.plan;
  for (auto& p : pairs) {
    p.i += piece.a0;
    p.j += piece.b0;
    if (piece.is_auto && !piece.keep_above && p.i > p.j) std::swap(p.i, p.j);
  }
  if (piece.keep_above)
    pairs.erase(std::remove_if(pairs.begin(), pairs.end(), [](const PairRecord& p) { return p.j <= p.i; }),
                pairs.end());
  // The batches come in no particular order (the CUDA backend's drain); sorted by (i, j), every
  // point meets its partners in increasing index: as first point over j, as second over i, and
  // in an auto run its partners below it (as second) before those above it (as first).
  const auto by_ij = [](const PairRecord& x, const PairRecord& y) { return x.i != y.i ? x.i < y.i : x.j < y.j; };
  if (!std::is_sorted(pairs.begin(), pairs.end(), by_ij)) std::sort(pairs.begin(), pairs.end(), by_ij);
  Side& second = piece.is_auto ? sa : sb;
  for (const PairRecord& p : pairs) {
    const double k = kernel_value(call.kernel, p.value, call.h);
    add_term(sa, p.i, second, p.j, k);
    add_term(second, p.j, sa, p.i, k);
  }
  return pairs.size();
}

// The first points of the chunks of `a`: consecutive points whose pairs in their run (`load[i]`
// at most) stay within `budget`, at least one point a chunk.
std::vector<std::size_t> chunk_starts(const std::vector<std::uint64_t>& load, std::size_t budget) {
  std::vector<std::size_t> starts{0};
  std::uint64_t held = 0;
  for (std::size_t i = 0; i < load.size(); ++i) {
    if (held > 0 && held + load[i] > budget) {
      starts.push_back(i);
      held = 0;
    }
    held += load[i];
  }
  return starts;
}

void check_options(const PointSet& a, const PointSet* b, std::span<const double> y_a, std::span<const double> y_b,
                   const KdeOptions& opt, const std::optional<Box>& box, double cutoff) {
  if (opt.weighted && (!a.has_weights() || (b && !b->has_weights())))
    throw_config("weighted kernel sums need a weight for every point of both sets");
  if (opt.pairs_in_memory == 0) throw_config("KdeOptions::pairs_in_memory must be at least 1");
  const bool regression = !y_a.empty() || !y_b.empty();
  if (regression) {
    if (y_a.size() != a.size())
      throw_config(fmt::format("the value column has {} values for {} points", y_a.size(), a.size()));
    if (b && y_b.size() != b->size())
      throw_config(fmt::format("the second set's value column has {} values for {} points", y_b.size(), b->size()));
    if (!b && !y_b.empty()) throw_config("an auto regression takes one value column");
  }
  if (box) {
    const double half = box->max_cutoff();
    if (cutoff > half)
      throw_config(fmt::format("kde cutoff {}{} exceeds {} ({}): the minimum image is only unique up to {}; give a "
                               "smaller cutoff or bandwidth",
                               cutoff, opt.cutoff ? "" : fmt::format(" (the default {})", opt.kernel == KdeKernel::Gaussian ? "5h" : "h"),
                               box->triclinic() ? "the triclinic cell's inscribed-sphere radius" : "half the periodic box",
                               half, box->triclinic() ? "it" : "L/2"));
  }
}

// The values of one side, rounded once.
void finish(const Side& s, bool regression, std::vector<double>& density, std::vector<std::uint64_t>& partners,
            std::vector<double>& m) {
  const std::size_t n = s.den.size();
  density.resize(n);
  for (std::size_t i = 0; i < n; ++i) density[i] = s.den[i].value();
  partners = s.partners;
  if (!regression) return;
  m.resize(n);
  for (std::size_t i = 0; i < n; ++i)
    m[i] = density[i] != 0 ? s.num[i].value() / density[i] : std::numeric_limits<double>::quiet_NaN();
}

KernelSums sums(const PointSet& a, const PointSet* b, std::span<const double> y_a, std::span<const double> y_b,
                const KdeOptions& opt, const std::optional<Box>& box, const RunOptions& user) {
  const auto t0 = std::chrono::steady_clock::now();
  const double cutoff = kde_cutoff(opt);
  check_options(a, b, y_a, y_b, opt, box, cutoff);
  const bool cross = b != nullptr;
  const bool regression = !y_a.empty();
  const Statistic stat = kernel_sum_statistic(cross, opt, box);
  const std::span<const double> none;
  Side sa(a.size(), opt.weighted ? a.weights() : none, regression ? y_a : none);
  Side sb(cross ? b->size() : 0, opt.weighted && cross ? b->weights() : none, regression ? y_b : none);
  Call call{user, opt.kernel, opt.bandwidth, {}, {}, 0};

  // The pairs of one run fit when every pair the traversal could form does; else a count of each
  // point's partners (a run without a list) sizes the chunks.
  const double n_a = static_cast<double>(a.size()), n_b = cross ? static_cast<double>(b->size()) : n_a;
  const double budget = static_cast<double>(opt.pairs_in_memory);
  const bool small = cross ? n_a * n_b <= budget : n_a * (n_a - 1) / 2 <= budget;
  std::vector<std::uint64_t> load;
  std::uint64_t listed = 0;
  if (!small) {
    Statistic counting = stat;
    counting.reduction = reduce::PerPoint{stat.binning()};
    const Result c = run(counting, a, b, call.options(0.0, 0.1));
    call.account(c);
    load = c.per_point_a.counts;
    for (auto& l : load) listed += l;
    // An auto chunk's run lists each anchor's partners at or above the chunk's start, and itself.
    if (!cross) {
      listed /= 2;
      for (auto& l : load) ++l;
    }
  }
  const double spent = small ? 0.0 : 0.1;
  KernelSums out;
  std::uint64_t pairs = 0;
  if (small || listed <= opt.pairs_in_memory) {
    Piece whole;
    whole.is_auto = !cross;
    pairs = run_piece(call, stat, a, b, whole, sa, sb, call.options(spent, 1.0 - spent));
    out.runs = 1;
  } else {
    Statistic chunk_stat = stat;
    chunk_stat.traversal = Traversal::Cross;
    const std::vector<std::size_t> starts = chunk_starts(load, opt.pairs_in_memory);
    const double width = (1.0 - spent) / static_cast<double>(starts.size());
    for (std::size_t c = 0; c < starts.size(); ++c) {
      const std::size_t s = starts[c], e = c + 1 < starts.size() ? starts[c + 1] : a.size();
      const PointSet anchors = slice(a, s, e - s);
      Piece piece;
      piece.a0 = s;
      piece.is_auto = !cross;
      piece.keep_above = !cross;
      RunOptions o = call.options(spent + width * static_cast<double>(c), width);
      if (cross) {
        pairs += run_piece(call, chunk_stat, anchors, b, piece, sa, sb, o);
      } else {
        // The anchors against the points from the chunk's start on: each pair once, as (i, j > i).
        piece.b0 = s;
        const PointSet rest = s == 0 ? PointSet() : slice(a, s, a.size() - s);
        pairs += run_piece(call, chunk_stat, anchors, s == 0 ? &a : &rest, piece, sa, sb, o);
      }
    }
    out.runs = starts.size();
  }

  out.kernel = opt.kernel;
  out.bandwidth = opt.bandwidth;
  out.cutoff = cutoff;
  out.default_cutoff = !opt.cutoff.has_value();
  out.weighted = opt.weighted;
  out.pairs = pairs;
  finish(sa, regression, out.density_a, out.partners_a, out.regression_a);
  if (cross) finish(sb, regression, out.density_b, out.partners_b, out.regression_b);
  out.info = call.info;
  out.info.n_a = a.size();
  out.info.n_b = cross ? b->size() : 0;
  out.info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.info.plan = fmt::format(
      "kernel sums: {} kernel, bandwidth {}, cutoff {}{}; {}; each point's terms added on the host in increasing "
      "partner index (Neumaier)\n{}",
      to_string(opt.kernel), opt.bandwidth, cutoff,
      out.default_cutoff ? (opt.kernel == KdeKernel::Gaussian ? " (5h, the default)" : " (h, the default)") : "",
      out.runs == 1 ? fmt::format("one pair-list run of {} pairs", pairs)
                    : fmt::format("{} pair-list runs over chunks of the first set, each listing at most {} pairs "
                                  "(sized by a count of every point's partners)",
                                  out.runs, opt.pairs_in_memory),
      call.last_plan);
  return out;
}

}  // namespace

KdeKernel parse_kde_kernel(const std::string& name) {
  if (name == "gaussian") return KdeKernel::Gaussian;
  if (name == "epanechnikov") return KdeKernel::Epanechnikov;
  throw_config(fmt::format("unknown kernel '{}' (gaussian or epanechnikov)", name));
}

const char* to_string(KdeKernel k) { return k == KdeKernel::Gaussian ? "gaussian" : "epanechnikov"; }

double kde_cutoff(const KdeOptions& opt) {
  if (!(std::isfinite(opt.bandwidth) && opt.bandwidth > 0))
    throw_config(fmt::format("the bandwidth must be positive and finite, not {}", opt.bandwidth));
  if (opt.cutoff && !(std::isfinite(*opt.cutoff) && *opt.cutoff > 0))
    throw_config(fmt::format("the cutoff must be positive and finite, not {}", *opt.cutoff));
  if (opt.cutoff) return *opt.cutoff;
  return opt.kernel == KdeKernel::Gaussian ? 5.0 * opt.bandwidth : opt.bandwidth;
}

Statistic kernel_sum_statistic(bool cross, const KdeOptions& opt, const std::optional<Box>& box) {
  Statistic s;
  s.traversal = cross ? Traversal::Cross : Traversal::Auto;
  s.metric = box ? Metric::Periodic : Metric::Euclidean;
  if (box) s.box = *box;
  s.reduction = reduce::PairList{Binning::from_edges({0.0, kde_cutoff(opt)})};
  return s;
}

KernelSums kernel_sums(const PointSet& a, const PointSet* b, const KdeOptions& opt, const std::optional<Box>& box,
                       const RunOptions& run) {
  return sums(a, b, {}, {}, opt, box, run);
}

KernelSums kernel_regression(const PointSet& a, const PointSet* b, std::span<const double> y_a,
                             std::span<const double> y_b, const KdeOptions& opt, const std::optional<Box>& box,
                             const RunOptions& run) {
  if (y_a.empty() && a.size() > 0) throw_config("a regression needs a value for every point");
  return sums(a, b, y_a, y_b, opt, box, run);
}

Table kde_table(const KernelSums& s) {
  Table t;
  std::vector<std::uint64_t> set, index;
  std::vector<double> density, regression;
  const bool with_regression = !s.regression_a.empty();
  for (const std::uint64_t which : {1, 2}) {
    const auto& d = which == 1 ? s.density_a : s.density_b;
    const auto& m = which == 1 ? s.regression_a : s.regression_b;
    for (std::size_t k = 0; k < d.size(); ++k) {
      set.push_back(which);
      index.push_back(k);
      density.push_back(d[k]);
      if (with_regression) regression.push_back(m[k]);
    }
  }
  t.columns = {{"set", std::move(set)}, {"index", std::move(index)}, {"density", std::move(density)}};
  if (with_regression) t.columns.push_back({"regression", std::move(regression)});
  Result r;
  r.info = s.info;
  t.meta = run_metadata(r);
  t.meta["kernel"] = to_string(s.kernel);
  t.meta["bandwidth"] = s.bandwidth;
  t.meta["cutoff"] = s.cutoff;
  t.meta["cutoff_rule"] = s.default_cutoff ? (s.kernel == KdeKernel::Gaussian ? "5h" : "h") : "given";
  t.meta["weighted"] = s.weighted;
  t.meta["pairs"] = s.pairs;
  t.meta["runs"] = s.runs;
  return t;
}

}  // namespace twobody
