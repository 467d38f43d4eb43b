#pragma once
// Vectors on the CPU: rows as the float64 rule reads them (docs/exactness.md) and the keys of one
// anchor against a block of partners. The partners are held in panels of 8, coordinate-major
// within a panel, so that the key loop runs over partners — vectorised, each pair's sum still
// taken over k in stored order (a sum over k vectorised would reassociate it, and the rule fixes
// the order).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "twobody/error.hpp"
#include "twobody/statistic.hpp"
#include "twobody/vectors.hpp"

namespace twobody::cpu {

// The cosine rule's norm of a row: fl(sqrt(sum_k x_k^2)), the sum in stored order.
inline double cosine_rule_norm(const double* row, int dim) {
  double s = 0;
  for (int k = 0; k < dim; ++k) s += row[k] * row[k];
  return std::sqrt(s);
}

// The cosine distance's refusal of a row without a direction (`index` 0-based): the same words
// wherever the rows are normalised (here, or on the GPU: cuda/gram_rows_device.hpp).
[[noreturn]] inline void throw_cosine_norm(const std::string& which, std::size_t index, double norm) {
  throw_input(fmt::format("{}vector {} has norm {}: the cosine distance needs rows of nonzero, finite norm "
                          "(below about 1e154 in magnitude)", which, index + 1, norm));
}

// A set's rows as the rule reads them: promoted exactly to float64 and, for the cosine distance,
// divided by the row's norm fl(sqrt(sum_k x_k^2)) (sum in stored order). `first`: the set's row
// of v's first (v a slice: a band), for the messages.
class RuleRows {
 public:
  RuleRows(const VectorSet& v, Metric m, int threads, const char* which, std::size_t first = 0)
      : v_(v), cosine_(m == Metric::Cosine) {
    if (!cosine_) return;
    norms_.resize(v.size());
    const auto n = static_cast<std::ptrdiff_t>(v.size());
    std::ptrdiff_t bad = 0;
#pragma omp parallel num_threads(threads)
    {
      std::vector<double> r(static_cast<std::size_t>(v.dim()));
#pragma omp for schedule(static) reduction(+ : bad)
      for (std::ptrdiff_t i = 0; i < n; ++i) {
        v.row_f64(static_cast<std::size_t>(i), r.data());
        const double norm = cosine_rule_norm(r.data(), v.dim());
        norms_[static_cast<std::size_t>(i)] = norm;
        bad += !(norm > 0) || !std::isfinite(norm);
      }
    }
    if (bad > 0) {
      // The first offending row, for the message.
      for (std::size_t i = 0; i < v.size(); ++i)
        if (!(norms_[i] > 0) || !std::isfinite(norms_[i])) throw_cosine_norm(which, first + i, norms_[i]);
    }
  }
  int dim() const { return v_.dim(); }
  std::size_t size() const { return v_.size(); }
  void load(std::size_t i, double* out) const {
    v_.row_f64(i, out);
    if (cosine_) {
      const double n = norms_[i];
      for (int k = 0; k < v_.dim(); ++k) out[k] /= n;
    }
  }

 private:
  const VectorSet& v_;
  bool cosine_;
  std::vector<double> norms_;
};

// A whole set's rows as the rule reads them, contiguous float64 (n x dim, row-major).
inline std::vector<double> rule_rows_f64(const VectorSet& v, Metric m, int threads, const char* which) {
  const RuleRows rows(v, m, threads, which);
  const std::size_t dim = static_cast<std::size_t>(v.dim());
  std::vector<double> out(v.size() * dim);
  const auto n = static_cast<std::ptrdiff_t>(v.size());
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) rows.load(static_cast<std::size_t>(i), out.data() + static_cast<std::size_t>(i) * dim);
  return out;
}

// Partners in panels of 8: partner t's coordinate k at [(t / 8) * 8 * dim + k * 8 + t % 8], so
// that the 8 partners of a chunk lie in one contiguous run of 64·dim bytes (a layout of whole
// columns, coordinate k of every partner together, made each chunk touch dim pages 8·width bytes
// apart: the brute force ran 1.5× slower at d = 32 and 64).
inline std::size_t panel_doubles(std::size_t n, int dim) { return (n + 7) / 8 * 8 * static_cast<std::size_t>(dim); }

// The keys of Q anchors against the n partners of `panels` (panels of 8 as above, from a panel's
// first partner; the last panel's unused lanes are read, their keys dropped), anchor q's at
// out[q * stride + t]: a chunk of 8 partners x Q anchors held in registers through the whole sum
// over k (one load of a partner's coordinate serves Q pairs), each pair's sum still in stored
// order. The brute force's blocks and the EGO join's leaves both run it: the same keys, bit for bit.
template <int Q>
void panel_keys(Metric m, int dim, const double* panels, const double* const (&a)[Q], std::size_t n, double* out,
                std::size_t stride) {
  constexpr std::size_t kLanes = 8;
  const bool cosine = m == Metric::Cosine;
  for (std::size_t t0 = 0; t0 < n; t0 += kLanes) {
    double acc[Q][kLanes] = {};
    const double* panel = panels + t0 * static_cast<std::size_t>(dim);
    for (int k = 0; k < dim; ++k) {
      const double* col = panel + static_cast<std::size_t>(k) * kLanes;
      for (int q = 0; q < Q; ++q) {
        const double aq = a[q][k];
        if (cosine) {
#pragma omp simd
          for (std::size_t u = 0; u < kLanes; ++u) acc[q][u] += aq * col[u];
        } else {
#pragma omp simd
          for (std::size_t u = 0; u < kLanes; ++u) {
            const double d = aq - col[u];
            acc[q][u] += d * d;
          }
        }
      }
    }
    // A whole chunk is stored as one vector; a short last one lane by lane (a copy of run-time
    // length became `rep movs`, a fifth of the EGO join's time at d = 16).
    const std::size_t lanes = std::min(kLanes, n - t0);
    for (int q = 0; q < Q; ++q) {
      double* o = out + static_cast<std::size_t>(q) * stride + t0;
      if (lanes == kLanes) {
#pragma omp simd
        for (std::size_t u = 0; u < kLanes; ++u) o[u] = cosine ? 1.0 - acc[q][u] : acc[q][u];
      } else {
        for (std::size_t u = 0; u < lanes; ++u) o[u] = cosine ? 1.0 - acc[q][u] : acc[q][u];
      }
    }
  }
}

// Partners [b0, b1) in panels of 8 (panel_keys).
class PartnerBlock {
 public:
  PartnerBlock(int dim, std::size_t width) : dim_(dim), t_(panel_doubles(width, dim), 0.0), row_(dim) {}
  void load(const RuleRows& rows, std::size_t b0, std::size_t b1) {
    if (b0 == b0_ && b1 == b1_) return;
    const std::size_t d = static_cast<std::size_t>(dim_);
    for (std::size_t j = b0; j < b1; ++j) {
      rows.load(j, row_.data());
      double* p = t_.data() + (j - b0) / 8 * 8 * d + (j - b0) % 8;
      for (std::size_t k = 0; k < d; ++k) p[k * 8] = row_[k];
    }
    b0_ = b0;
    b1_ = b1;
  }
  std::size_t b0() const { return b0_; }
  // keys for Q anchors at once, anchor q's keys of partners [j0, j1) at out[q * stride + t]
  // (panel_keys); j0 − b0 a multiple of 8 (a panel's first partner).
  template <int Q>
  void keys(Metric m, const double* const (&a)[Q], std::size_t j0, std::size_t j1, double* out, std::size_t stride) const {
    panel_keys<Q>(m, dim_, t_.data() + (j0 - b0_) * static_cast<std::size_t>(dim_), a, j1 - j0, out, stride);
  }
  // One anchor's keys, keys[t] for the partners [j0, j1).
  void keys(Metric m, const double* a, std::size_t j0, std::size_t j1, double* out) const {
    const double* const one[1] = {a};
    keys<1>(m, one, j0, j1, out, 0);
  }

 private:
  int dim_;
  std::vector<double> t_;
  std::vector<double> row_;
  std::size_t b0_ = static_cast<std::size_t>(-1), b1_ = 0;
};

// The natural value of a key: the distance sqrt(key), or the cosine distance itself.
inline double natural_of_vector_key(Metric m, double key) { return m == Metric::Cosine ? key : std::sqrt(key); }

// Partners a block holds: about 2 MB of float64 coordinates, between 16 and 1024 of them.
inline std::size_t vector_tile(int dim, std::size_t n, int threads) {
  std::size_t t = 1024;
  while (t > 16 && t * static_cast<std::size_t>(dim) * 8 > (std::size_t(2) << 20)) t /= 2;
  while (t > 16 && n / t < static_cast<std::size_t>(4 * threads)) t /= 2;
  return t;
}

}  // namespace twobody::cpu
