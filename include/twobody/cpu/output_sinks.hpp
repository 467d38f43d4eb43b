#pragma once
// What a pair produces on the CPU backend. Each thread owns one sink (output privatisation, seed
// 000 section 4.3, the CPU form of it), fills it without synchronisation and merges it once.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "twobody/bins.hpp"
#include "twobody/result.hpp"

namespace twobody::cpu {

struct PairWeights {
  const double* a = nullptr;  // null when unweighted
  const double* b = nullptr;
};

class HistogramSink {
 public:
  HistogramSink(const KeyEdges& e, PairWeights w)
      : e_(e.padded.data()), nbins_(e.nbins), steps_(e.steps), w_(w),
        counts_(e.nbins, 0), wsum_(w.a ? e.nbins : 0, 0.0) {}

  template <class NaturalOf>
  void consume(std::size_t i, std::size_t j0, const double* keys, std::size_t n, const NaturalOf&) {
    for (std::size_t t = 0; t < n; ++t) {
      const int k = find_bin(e_, nbins_, steps_, keys[t]);
      if (k < 0) continue;
      ++counts_[k];
      if (w_.a) wsum_[k] += w_.a[i] * w_.b[j0 + t];
    }
  }
  // Counts gathered elsewhere (the fast path's private counters), unweighted histograms only.
  void add_count(int k, std::uint64_t n) { counts_[k] += n; }
  bool weighted() const { return w_.a != nullptr; }
  // One pair of the float32 fast path, bin k already decided (key64() gives its float64 key).
  template <class Key64, class NaturalOf>
  void accept(int k, std::size_t i, std::size_t j, const Key64&, const NaturalOf&) {
    ++counts_[k];
    if (w_.a) wsum_[k] += w_.a[i] * w_.b[j];
  }
  void merge_into(Result& r) const {
    if (r.counts.empty()) {
      r.counts.assign(counts_.size(), 0);
      r.weighted.assign(wsum_.size(), 0.0);
    }
    for (std::size_t k = 0; k < counts_.size(); ++k) r.counts[k] += counts_[k];
    for (std::size_t k = 0; k < wsum_.size(); ++k) r.weighted[k] += wsum_[k];
  }

 private:
  const double* e_;
  int nbins_, steps_;
  PairWeights w_;
  std::vector<std::uint64_t> counts_;
  std::vector<double> wsum_;
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
  RegionHistogramSink(const KeyEdges& e, PairWeights w, RegionLabels l)
      : e_(e.padded.data()), nbins_(e.nbins), steps_(e.steps), w_(w), l_(l), counts_(e.nbins, 0),
        wsum_(w.a ? e.nbins : 0, 0.0), region_counts_(std::size_t(l.regions) * e.nbins, 0),
        region_wsum_(w.a ? std::size_t(l.regions) * e.nbins : 0, 0.0) {}

  template <class NaturalOf>
  void consume(std::size_t i, std::size_t j0, const double* keys, std::size_t n, const NaturalOf&) {
    for (std::size_t t = 0; t < n; ++t) {
      const int k = find_bin(e_, nbins_, steps_, keys[t]);
      if (k >= 0) add(k, i, j0 + t);
    }
  }
  bool weighted() const { return w_.a != nullptr; }
  template <class Key64, class NaturalOf>
  void accept(int k, std::size_t i, std::size_t j, const Key64&, const NaturalOf&) {
    add(k, i, j);
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
    for (std::size_t k = 0; k < wsum_.size(); ++k) r.weighted[k] += wsum_[k];
    for (std::size_t k = 0; k < region_counts_.size(); ++k) r.region_counts[k] += region_counts_[k];
    for (std::size_t k = 0; k < region_wsum_.size(); ++k) r.region_weighted[k] += region_wsum_[k];
  }

 private:
  void add(int k, std::size_t i, std::size_t j) {
    const std::size_t nb = static_cast<std::size_t>(nbins_);
    const std::size_t ri = static_cast<std::size_t>(l_.a[i]), rj = static_cast<std::size_t>(l_.b[j]);
    ++counts_[k];
    ++region_counts_[ri * nb + k];
    if (rj != ri) ++region_counts_[rj * nb + k];
    if (w_.a) {
      const double w = w_.a[i] * w_.b[j];
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
  std::vector<double> wsum_;
  std::vector<std::uint64_t> region_counts_;
  std::vector<double> region_wsum_;
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
    if (w_.a) {
      double s = 0;
      for (std::size_t t = 0; t < n; ++t)
        if (keys[t] >= lo_ && keys[t] < hi_) s += w_.b[j0 + t];
      wsum_ += w_.a[i] * s;
    }
  }
  template <class Key64, class NaturalOf>
  void accept(int, std::size_t i, std::size_t j, const Key64&, const NaturalOf&) {
    ++count_;
    if (w_.a) wsum_ += w_.a[i] * w_.b[j];
  }
  void merge_into(Result& r) const {
    if (r.counts.empty()) {
      r.counts.assign(1, 0);
      r.weighted.assign(w_.a ? 1 : 0, 0.0);
    }
    r.counts[0] += count_;
    if (w_.a) r.weighted[0] += wsum_;
  }

 private:
  double lo_, hi_;
  PairWeights w_;
  std::uint64_t count_ = 0;
  double wsum_ = 0;
};

// Type III: each thread appends to its own list; lists are concatenated and sorted by (i, j).
class PairListSink {
 public:
  PairListSink(const KeyEdges& e, std::size_t max_pairs) : lo_(e.lo()), hi_(e.hi()), max_(max_pairs) {}

  template <class NaturalOf>
  void consume(std::size_t i, std::size_t j0, const double* keys, std::size_t n, const NaturalOf& nat) {
    for (std::size_t t = 0; t < n; ++t)
      if (keys[t] >= lo_ && keys[t] < hi_) pairs_.push_back({i, j0 + t, nat(keys[t])});
    overflow_ = overflow_ || pairs_.size() > max_;
  }
  template <class Key64, class NaturalOf>
  void accept(int, std::size_t i, std::size_t j, const Key64& key64, const NaturalOf& nat) {
    pairs_.push_back({i, j, nat(key64())});
    overflow_ = overflow_ || pairs_.size() > max_;
  }
  bool overflow() const { return overflow_; }
  std::size_t size() const { return pairs_.size(); }
  void merge_into(Result& r) const { r.pairs.insert(r.pairs.end(), pairs_.begin(), pairs_.end()); }

 private:
  double lo_, hi_;
  std::size_t max_;
  bool overflow_ = false;
  std::vector<PairRecord> pairs_;
};

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
