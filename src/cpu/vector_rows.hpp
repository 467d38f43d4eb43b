#pragma once
// Vectors on the CPU: rows as the float64 rule reads them (docs/exactness.md) and the keys of one
// anchor against a block of partners. The block is held transposed (coordinate-major), so that the
// key loop runs over partners — vectorised, each pair's sum still taken over k in stored order
// (a sum over k vectorised would reassociate it, and the rule fixes the order).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "twobody/error.hpp"
#include "twobody/statistic.hpp"
#include "twobody/vectors.hpp"

namespace twobody::cpu {

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
        double s = 0;
        for (double x : r) s += x * x;
        const double norm = std::sqrt(s);
        norms_[static_cast<std::size_t>(i)] = norm;
        bad += !(norm > 0) || !std::isfinite(norm);
      }
    }
    if (bad > 0) {
      // The first offending row, for the message.
      for (std::size_t i = 0; i < v.size(); ++i)
        if (!(norms_[i] > 0) || !std::isfinite(norms_[i]))
          throw_input(fmt::format("{}vector {} has norm {}: the cosine distance needs rows of nonzero, finite norm "
                                  "(below about 1e154 in magnitude)", which, first + i + 1, norms_[i]));
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

// Partners [b0, b1) transposed: coordinate k of partner b0 + t at [k * width + t].
class PartnerBlock {
 public:
  // (8 doubles of padding: the last chunk of 8 partners may read past the block; unused.)
  PartnerBlock(int dim, std::size_t width)
      : dim_(dim), width_(width), t_(static_cast<std::size_t>(dim) * width + 8, 0.0), row_(dim) {}
  void load(const RuleRows& rows, std::size_t b0, std::size_t b1) {
    if (b0 == b0_ && b1 == b1_) return;
    for (std::size_t j = b0; j < b1; ++j) {
      rows.load(j, row_.data());
      for (int k = 0; k < dim_; ++k) t_[static_cast<std::size_t>(k) * width_ + (j - b0)] = row_[static_cast<std::size_t>(k)];
    }
    b0_ = b0;
    b1_ = b1;
  }
  std::size_t b0() const { return b0_; }
  // keys for Q anchors at once, anchor q's keys of partners [j0, j1) at out[q * stride + t]: a
  // chunk of 8 partners x Q anchors held in registers through the whole sum over k (one load of a
  // partner's coordinate serves Q pairs), each pair's sum still in stored order.
  template <int Q>
  void keys(Metric m, const double* const (&a)[Q], std::size_t j0, std::size_t j1, double* out, std::size_t stride) const {
    constexpr std::size_t kLanes = 8;
    const std::size_t n = j1 - j0, off = j0 - b0_;
    const bool cosine = m == Metric::Cosine;
    for (std::size_t t0 = 0; t0 < n; t0 += kLanes) {
      double acc[Q][kLanes] = {};
      const double* base = t_.data() + off + t0;
      for (int k = 0; k < dim_; ++k) {
        const double* col = base + static_cast<std::size_t>(k) * width_;
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
      const std::size_t lanes = std::min(kLanes, n - t0);
      for (int q = 0; q < Q; ++q)
        for (std::size_t u = 0; u < lanes; ++u) out[static_cast<std::size_t>(q) * stride + t0 + u] = cosine ? 1.0 - acc[q][u] : acc[q][u];
    }
  }
  // One anchor's keys, keys[t] for the partners [j0, j1).
  void keys(Metric m, const double* a, std::size_t j0, std::size_t j1, double* out) const {
    const double* const one[1] = {a};
    keys<1>(m, one, j0, j1, out, 0);
  }

 private:
  int dim_;
  std::size_t width_;
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
