#pragma once
// What a pair produces on the CPU backend. Each thread owns one sink (output privatisation, seed
// 000 section 4.3, the CPU form of it), fills it without synchronisation and merges it once.
// Floating sums are exact sums on the run's grids (twobody/exact_sums.hpp): whichever thread a
// pair falls to, and in whatever order, the merged integers are the same; run_plan rounds them
// into the Result's float64 sums once at the end.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "twobody/detail/engine/key_edges.hpp"
#include "twobody/detail/engine/pair_limit.hpp"
#include "twobody/extend/portable_math.hpp"
#include "twobody/error.hpp"
#include "twobody/result.hpp"

namespace twobody::cpu {

struct PairWeights {
  const double* a = nullptr;  // null when unweighted
  const double* b = nullptr;
  SumGrids grids;             // the run's (Plan::grids)
  std::int64_t pair(std::size_t i, std::size_t j) const { return grids.pair_weight.steps(a[i] * b[j]); }
};

// to[k] += from[k], `to` sized on first use.
inline void add_exact(std::vector<FixedSum>& to, const std::vector<FixedSum>& from) {
  if (to.size() < from.size()) to.resize(from.size(), 0);
  for (std::size_t k = 0; k < from.size(); ++k) to[k] += from[k];
}

class HistogramSink {
 public:
  HistogramSink(const KeyEdges& e, PairWeights w)
      : e_(e.padded.data()), nbins_(e.nbins), steps_(e.steps), w_(w),
        counts_(e.nbins, 0), wsum_(w.a ? e.nbins : 0, 0) {}

  template <class NaturalOf>
  void consume(std::size_t i, std::size_t j0, const double* keys, std::size_t n, const NaturalOf&) {
    for (std::size_t t = 0; t < n; ++t) {
      const int k = find_bin(e_, nbins_, steps_, keys[t]);
      if (k < 0) continue;
      ++counts_[k];
      if (w_.a) wsum_[k] += w_.pair(i, j0 + t);
    }
  }
  // Counts gathered elsewhere (the fast path's private counters), unweighted histograms only.
  void add_count(int k, std::uint64_t n) { counts_[k] += n; }
  bool weighted() const { return w_.a != nullptr; }
  // One pair of the float32 fast path, bin k already decided (key64() gives its float64 key).
  template <class Key64, class NaturalOf>
  void accept(int k, std::size_t i, std::size_t j, const Key64&, const NaturalOf&) {
    ++counts_[k];
    if (w_.a) wsum_[k] += w_.pair(i, j);
  }
  void merge_into(Result& r) const {
    if (r.counts.empty()) {
      r.counts.assign(counts_.size(), 0);
      r.weighted.assign(wsum_.size(), 0.0);
    }
    for (std::size_t k = 0; k < counts_.size(); ++k) r.counts[k] += counts_[k];
    add_exact(r.exact.weighted, wsum_);
  }

 private:
  const double* e_;
  int nbins_, steps_;
  PairWeights w_;
  std::vector<std::uint64_t> counts_;
  std::vector<FixedSum> wsum_;
};

// Statistic::mean_separation: per bin, Σ w s and Σ w log s as exact sums (w = w_i w_j, or 1), s
// the pair's natural separation from its float64 key; a pair at s = 0 adds log of the smallest
// normal float64 (−708.4), not −∞. Empty (and never touched) when not asked for.
class SeparationSums {
 public:
  SeparationSums(std::size_t nbins, bool on, const SumGrids& g)
      : g_(g), sum_(on ? nbins : 0, 0), log_sum_(on ? nbins : 0, 0) {}
  bool on() const { return !sum_.empty(); }
  void add(int k, double s, double w) {
    sum_[k] += g_.separation.steps(w * s);
    log_sum_[k] += g_.log_separation.steps(w * portable::log(std::max(s, DBL_MIN)));
  }
  void merge_into(Result& r) const {
    if (!on()) return;
    if (r.separation_sum.empty()) {
      r.separation_sum.assign(sum_.size(), 0.0);
      r.log_separation_sum.assign(sum_.size(), 0.0);
    }
    add_exact(r.exact.separation_sum, sum_);
    add_exact(r.exact.log_separation_sum, log_sum_);
  }

 private:
  SumGrids g_;
  std::vector<FixedSum> sum_, log_sum_;
};

// A histogram with the mean separation per bin. No add_count(), for the reason RegionHistogramSink
// has none: the fast path's private counters would count pairs without their separations.
class MeanHistogramSink {
 public:
  MeanHistogramSink(const KeyEdges& e, PairWeights w)
      : e_(e.padded.data()), nbins_(e.nbins), steps_(e.steps), w_(w), counts_(e.nbins, 0),
        wsum_(w.a ? e.nbins : 0, 0), sums_(std::size_t(e.nbins), true, w.grids) {}

  template <class NaturalOf>
  void consume(std::size_t i, std::size_t j0, const double* keys, std::size_t n, const NaturalOf& nat) {
    for (std::size_t t = 0; t < n; ++t) {
      const int k = find_bin(e_, nbins_, steps_, keys[t]);
      if (k >= 0) add(k, i, j0 + t, nat(keys[t]));
    }
  }
  bool weighted() const { return w_.a != nullptr; }
  template <class Key64, class NaturalOf>
  void accept(int k, std::size_t i, std::size_t j, const Key64& key64, const NaturalOf& nat) {
    add(k, i, j, nat(key64()));
  }
  void merge_into(Result& r) const {
    if (r.counts.empty()) {
      r.counts.assign(counts_.size(), 0);
      r.weighted.assign(wsum_.size(), 0.0);
    }
    for (std::size_t k = 0; k < counts_.size(); ++k) r.counts[k] += counts_[k];
    add_exact(r.exact.weighted, wsum_);
    sums_.merge_into(r);
  }

 private:
  void add(int k, std::size_t i, std::size_t j, double s) {
    ++counts_[k];
    double w = 1.0;
    if (w_.a) {
      w = w_.a[i] * w_.b[j];
      wsum_[k] += w_.grids.pair_weight.steps(w);
    }
    sums_.add(k, s, w);
  }

  const double* e_;
  int nbins_, steps_;
  PairWeights w_;
  std::vector<std::uint64_t> counts_;
  std::vector<FixedSum> wsum_;
  SeparationSums sums_;
};

// Jackknife regions, counted the seed's way (seed 003, "inverse jackknives"): every pair is
// binned ONCE, into the histogram and into T[r][k] for the region(s) of its two points: T[r_i][k]
// and, when r_j != r_i, T[r_j][k]. T[r][k] is then the pairs of bin k with at least one point in r,
// and the histogram without region r is counts[k] − T[r][k] (weighted sums likewise): every
// leave-one-region-out histogram without a recount.
//
// The per-pair output is R x nbins counters (plus the nbins histogram), not R² x nbins (pairs by
// region pair) nor the seed's CPU layout of R full histograms each pair adds to R − 1 of: with
// R = 100 regions and 30 bins that is 3 000 counters, small enough for a GPU block to privatise in
// shared memory the way the plain histogram is (one or two extra increments per pair, at a
// per-pair-label offset). The CPU keeps one such array per thread, merged once.
//
// No add_count(): the fast path counts unweighted histograms in private counters that bypass the
// sink (FastRows::own_counts_ is only taken by sinks that offer add_count), and those counters
// know no labels; without it every accepted pair reaches accept(k, i, j, ...) with its points.
struct RegionLabels {
  const std::int32_t* a = nullptr;  // labels of the anchors' set, in traversal order
  const std::int32_t* b = nullptr;  // labels of the partners' set
  int regions = 0;
};

class RegionHistogramSink {
 public:
  // means: also the separation sums of Statistic::mean_separation (whole sample, not per region).
  RegionHistogramSink(const KeyEdges& e, PairWeights w, RegionLabels l, bool means = false)
      : e_(e.padded.data()), nbins_(e.nbins), steps_(e.steps), w_(w), l_(l), counts_(e.nbins, 0),
        wsum_(w.a ? e.nbins : 0, 0), region_counts_(std::size_t(l.regions) * e.nbins, 0),
        region_wsum_(w.a ? std::size_t(l.regions) * e.nbins : 0, 0), sums_(std::size_t(e.nbins), means, w.grids) {}

  template <class NaturalOf>
  void consume(std::size_t i, std::size_t j0, const double* keys, std::size_t n, const NaturalOf& nat) {
    for (std::size_t t = 0; t < n; ++t) {
      const int k = find_bin(e_, nbins_, steps_, keys[t]);
      if (k < 0) continue;
      add(k, i, j0 + t);
      if (sums_.on()) sums_.add(k, nat(keys[t]), w_.a ? w_.a[i] * w_.b[j0 + t] : 1.0);
    }
  }
  bool weighted() const { return w_.a != nullptr; }
  template <class Key64, class NaturalOf>
  void accept(int k, std::size_t i, std::size_t j, const Key64& key64, const NaturalOf& nat) {
    add(k, i, j);
    if (sums_.on()) sums_.add(k, nat(key64()), w_.a ? w_.a[i] * w_.b[j] : 1.0);
  }
  void merge_into(Result& r) const {
    if (r.counts.empty()) {
      r.counts.assign(counts_.size(), 0);
      r.weighted.assign(wsum_.size(), 0.0);
      r.regions = static_cast<std::size_t>(l_.regions);
      r.region_counts.assign(region_counts_.size(), 0);
      r.region_weighted.assign(region_wsum_.size(), 0.0);
    }
    for (std::size_t k = 0; k < counts_.size(); ++k) r.counts[k] += counts_[k];
    add_exact(r.exact.weighted, wsum_);
    for (std::size_t k = 0; k < region_counts_.size(); ++k) r.region_counts[k] += region_counts_[k];
    add_exact(r.exact.region_weighted, region_wsum_);
    sums_.merge_into(r);
  }

 private:
  void add(int k, std::size_t i, std::size_t j) {
    const std::size_t nb = static_cast<std::size_t>(nbins_);
    const std::size_t ri = static_cast<std::size_t>(l_.a[i]), rj = static_cast<std::size_t>(l_.b[j]);
    ++counts_[k];
    ++region_counts_[ri * nb + k];
    if (rj != ri) ++region_counts_[rj * nb + k];
    if (w_.a) {
      const std::int64_t w = w_.pair(i, j);
      wsum_[k] += w;
      region_wsum_[ri * nb + k] += w;
      if (rj != ri) region_wsum_[rj * nb + k] += w;
    }
  }

  const double* e_;
  int nbins_, steps_;
  PairWeights w_;
  RegionLabels l_;
  std::vector<std::uint64_t> counts_;
  std::vector<FixedSum> wsum_;
  std::vector<std::uint64_t> region_counts_;
  std::vector<FixedSum> region_wsum_;
  SeparationSums sums_;
};

// Type I: one total in registers per thread.
class ReductionSink {
 public:
  ReductionSink(const KeyEdges& e, PairWeights w) : lo_(e.lo()), hi_(e.hi()), w_(w) {}

  template <class NaturalOf>
  void consume(std::size_t i, std::size_t j0, const double* keys, std::size_t n, const NaturalOf&) {
    std::uint64_t c = 0;
    for (std::size_t t = 0; t < n; ++t) c += (keys[t] >= lo_) & (keys[t] < hi_);
    count_ += c;
    if (w_.a)
      for (std::size_t t = 0; t < n; ++t)
        if (keys[t] >= lo_ && keys[t] < hi_) wsum_ += w_.pair(i, j0 + t);
  }
  template <class Key64, class NaturalOf>
  void accept(int, std::size_t i, std::size_t j, const Key64&, const NaturalOf&) {
    ++count_;
    if (w_.a) wsum_ += w_.pair(i, j);
  }
  void merge_into(Result& r) const {
    if (r.counts.empty()) {
      r.counts.assign(1, 0);
      r.weighted.assign(w_.a ? 1 : 0, 0.0);
    }
    r.counts[0] += count_;
    if (w_.a) add_exact(r.exact.weighted, {wsum_});
  }

 private:
  double lo_, hi_;
  PairWeights w_;
  std::uint64_t count_ = 0;
  FixedSum wsum_ = 0;
};

// Per-point reductions (OutputKind::PerPoint): per thread, a private count (and weight sum) for
// every point of the anchors' set and, cross, of the partners' set; auto shares one array, so a
// pair adds to both of its points. A row adds its anchor's total once and each partner in range to
// its own entry (a contiguous run of the array: the rows vectorise). merge_per_point sums the
// threads' arrays point by point: counts and the exact weighted sums do not depend on the thread
// count. No add_count(): the fast path hands every pair in range to accept() with its points.
class PerPointSink {
 public:
  PerPointSink(const KeyEdges& e, PairWeights w, std::size_t na, std::size_t nb, bool is_auto)
      : lo_(e.lo()), hi_(e.hi()), w_(w), a_(na, w.a != nullptr), b_(is_auto ? 0 : nb, w.a != nullptr),
        bc_(is_auto ? a_.counts.data() : b_.counts.data()), bw_(is_auto ? a_.wsum.data() : b_.wsum.data()) {}
  // Moving keeps bc_ and bw_ valid: a moved vector keeps its buffer.
  PerPointSink(PerPointSink&&) noexcept = default;
  PerPointSink(const PerPointSink&) = delete;
  PerPointSink& operator=(const PerPointSink&) = delete;

  template <class NaturalOf>
  void consume(std::size_t i, std::size_t j0, const double* keys, std::size_t n, const NaturalOf&) {
    // Partners j >= j0 never include the anchor i (auto rows hold j > i, or another cell's points).
    std::uint64_t* __restrict pc = bc_ + j0;
    std::uint64_t c = 0;
    for (std::size_t t = 0; t < n; ++t) {
      const std::uint64_t in = (keys[t] >= lo_) & (keys[t] < hi_);
      pc[t] += in;
      c += in;
    }
    a_.counts[i] += c;
    if (w_.a) {
      FixedSum* __restrict pw = bw_ + j0;
      const double* wb = w_.b + j0;
      const std::int64_t wi = point(w_.a[i]);
      FixedSum s = 0;
      for (std::size_t t = 0; t < n; ++t)
        if ((keys[t] >= lo_) & (keys[t] < hi_)) {
          pw[t] += wi;
          s += point(wb[t]);
        }
      a_.wsum[i] += s;
    }
  }
  template <class Key64, class NaturalOf>
  void accept(int, std::size_t i, std::size_t j, const Key64&, const NaturalOf&) {
    ++a_.counts[i];
    ++bc_[j];
    if (w_.a) {
      a_.wsum[i] += point(w_.b[j]);
      bw_[j] += point(w_.a[i]);
    }
  }

  struct Arrays {
    std::vector<std::uint64_t> counts;
    std::vector<FixedSum> wsum;
    Arrays(std::size_t n, bool weighted) : counts(n, 0), wsum(weighted ? n : 0, 0) {}
  };
  const Arrays& a() const { return a_; }
  const Arrays& b() const { return b_; }

 private:
  std::int64_t point(double w) const { return w_.grids.point_weight.steps(w); }

  double lo_, hi_;
  PairWeights w_;
  Arrays a_, b_;
  std::uint64_t* bc_;  // the partners' counts: b_'s, or a_'s for auto
  FixedSum* bw_;
};

// The threads' per-point arrays summed point by point into `out` (the weighted sums into `exact`,
// `out.weighted` sized for them); entry k of an array belongs to the caller's point order[k] (the
// grid's cell order), or k without one.
inline void merge_per_point(const std::vector<PerPointSink>& sinks, bool second, const std::uint32_t* order,
                            PointReductions& out, std::vector<FixedSum>& exact, int threads) {
  const auto arrays = [&](const PerPointSink& s) -> const PerPointSink::Arrays& { return second ? s.b() : s.a(); };
  const std::size_t n = sinks.empty() ? 0 : arrays(sinks[0]).counts.size();
  const bool weighted = !sinks.empty() && !arrays(sinks[0]).wsum.empty();
  out.counts.assign(n, 0);
  out.weighted.assign(weighted ? n : 0, 0.0);
  exact.assign(weighted ? n : 0, 0);
  const auto points = static_cast<std::int64_t>(n);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t k = 0; k < points; ++k) {
    std::uint64_t c = 0;
    FixedSum s = 0;
    for (const PerPointSink& t : sinks) {
      c += arrays(t).counts[k];
      if (weighted) s += arrays(t).wsum[k];
    }
    const std::size_t to = order ? order[k] : static_cast<std::size_t>(k);
    out.counts[to] = c;
    if (weighted) exact[to] = s;
  }
}

// Pairs handed to RunOptions::pair_sink while the run goes, so that a pair list larger than
// memory streams to its consumer (a file): each thread's PairListSink passes its list here every
// kFlushPairs pairs, under a lock, after `to_callers` has put the callers' indices in. The sink may
// throw (a full disk): the first exception is kept, the traversal stops (the sinks' overflow) and
// finish() throws it after the parallel region, where exceptions may leave.
class PairStream {
 public:
  static constexpr std::size_t kFlushPairs = std::size_t{1} << 16;
  using Sink = std::function<void(std::span<const PairRecord>)>;
  using ToCallers = std::function<void(std::span<PairRecord>)>;

  PairStream(const Sink& sink, std::size_t max_pairs, ToCallers to_callers = {})
      : sink_(sink), max_(max_pairs), to_callers_(std::move(to_callers)) {}

  // Hands `pairs` over, in the callers' indices and sorted by (i, j) (RunOptions::pair_sink's
  // batches), and empties it. Thread-safe: the mapping and the sort outside the lock.
  void flush(std::vector<PairRecord>& pairs) {
    if (pairs.empty()) return;
    if (to_callers_) to_callers_(pairs);
    std::sort(pairs.begin(), pairs.end(), pair_order);
    std::lock_guard<std::mutex> lock(m_);
    if (!error_) {
      try {
        total_ += pairs.size();
        if (total_ > max_)
          throw_pair_limit(max_);
        sink_(pairs);
      } catch (...) {
        error_ = std::current_exception();
      }
    }
    pairs.clear();
  }
  bool failed() const {
    std::lock_guard<std::mutex> lock(m_);
    return error_ != nullptr;
  }
  void finish() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  const Sink& sink_;
  std::size_t max_;
  ToCallers to_callers_;
  mutable std::mutex m_;
  std::size_t total_ = 0;
  std::exception_ptr error_;
};

// Type III: each thread appends to its own list; lists are concatenated and sorted by (i, j), or
// with a PairStream handed over as they fill.
class PairListSink {
 public:
  PairListSink(const KeyEdges& e, std::size_t max_pairs, PairStream* stream = nullptr)
      : lo_(e.lo()), hi_(e.hi()), max_(max_pairs), stream_(stream) {}

  template <class NaturalOf>
  void consume(std::size_t i, std::size_t j0, const double* keys, std::size_t n, const NaturalOf& nat) {
    for (std::size_t t = 0; t < n; ++t)
      if (keys[t] >= lo_ && keys[t] < hi_) pairs_.push_back({i, j0 + t, nat(keys[t])});
    added();
  }
  template <class Key64, class NaturalOf>
  void accept(int, std::size_t i, std::size_t j, const Key64& key64, const NaturalOf& nat) {
    pairs_.push_back({i, j, nat(key64())});
    added();
  }
  // The traversal stops early when this is true: too many pairs, or the stream failed.
  bool overflow() const { return overflow_ || (stream_ && stream_->failed()); }
  std::size_t size() const { return pairs_.size(); }
  void merge_into(Result& r) const { r.pairs.insert(r.pairs.end(), pairs_.begin(), pairs_.end()); }
  void flush() {
    if (stream_) stream_->flush(pairs_);
  }

 private:
  void added() {
    if (stream_) {
      if (pairs_.size() >= PairStream::kFlushPairs) stream_->flush(pairs_);
    } else {
      overflow_ = overflow_ || pairs_.size() > max_;
    }
  }

  double lo_, hi_;
  std::size_t max_;
  PairStream* stream_;
  bool overflow_ = false;
  std::vector<PairRecord> pairs_;
};

// The threads' pair lists into r.pairs (unsorted: a caller may still map indices first), or
// Error(Resource) when together they exceed max_pairs. With a stream: their last pairs handed
// over, and the stream's error thrown; r.pairs stays empty.
inline void gather_pairs(std::vector<PairListSink>& sinks, std::size_t max_pairs, Result& r,
                         PairStream* stream = nullptr) {
  if (stream) {
    for (auto& k : sinks) k.flush();
    stream->finish();
    return;
  }
  std::size_t total = 0;
  for (auto& k : sinks) total += k.size();
  for (auto& k : sinks)
    if (k.overflow() || total > max_pairs)
      throw_pair_limit(max_pairs);
  r.pairs.reserve(total);
  for (auto& k : sinks) k.merge_into(r);
}

// Dense matrix: threads write disjoint cells of one shared matrix, so nothing is merged.
class MatrixSink {
 public:
  MatrixSink(double* m, std::size_t cols, bool symmetric) : m_(m), cols_(cols), symmetric_(symmetric) {}

  template <class NaturalOf>
  void consume(std::size_t i, std::size_t j0, const double* keys, std::size_t n, const NaturalOf& nat) {
    for (std::size_t t = 0; t < n; ++t) {
      const double v = nat(keys[t]);
      m_[i * cols_ + j0 + t] = v;
      if (symmetric_) m_[(j0 + t) * cols_ + i] = v;
    }
  }
  void merge_into(Result&) const {}

 private:
  double* m_;
  std::size_t cols_;
  bool symmetric_;
};

}  // namespace twobody::cpu
