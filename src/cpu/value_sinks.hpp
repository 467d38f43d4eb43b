#pragma once
// What a pair expression's value produces on the CPU beyond the counting sinks (output_sinks.hpp):
// the sum of the values (reduce::Sum), per-point sums, minima and maxima (reduce::PerPointValue),
// and the largest |value| that fixes the exact sums' grid. A NaN value (no value: a false --where,
// or an expression undefined there) is skipped by all of them. Sums are exact sums on the run's
// grid (twobody/exact_sums.hpp), so threads and their order do not change a bit.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "twobody/error.hpp"
#include "twobody/exact_sums.hpp"
#include "twobody/result.hpp"

namespace twobody::cpu {

// The largest |value| over the pairs, and whether any is infinite.
class MaxAbsSink {
 public:
  template <class NaturalOf>
  void consume(std::size_t, std::size_t, const double* v, std::size_t n, const NaturalOf&) {
    double m = max_;
    for (std::size_t t = 0; t < n; ++t) {
      const double a = std::fabs(v[t]);
      m = a > m ? a : m;  // NaN compares false: skipped
    }
    max_ = m;
  }
  double max() const { return max_; }

 private:
  double max_ = 0;
};

class ValueSumSink {
 public:
  explicit ValueSumSink(const SumGrid& g) : g_(g) {}
  template <class NaturalOf>
  void consume(std::size_t, std::size_t, const double* v, std::size_t n, const NaturalOf&) {
    for (std::size_t t = 0; t < n; ++t)
      if (v[t] == v[t]) {
        sum_ += g_.steps(v[t]);
        ++count_;
      }
  }
  void merge_into(Result& r) const {
    if (r.counts.empty()) r.counts.assign(1, 0);
    if (r.exact.value_sum.empty()) r.exact.value_sum.assign(1, 0);
    r.counts[0] += count_;
    r.exact.value_sum[0] += sum_;
  }

 private:
  SumGrid g_;
  FixedSum sum_ = 0;
  std::uint64_t count_ = 0;
};

// Doubles in an order-preserving uint64 (−0 below +0), so a minimum or maximum is one integer
// comparison and every order of the pairs gives the same bits.
inline std::uint64_t ordered_bits(double x) {
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return (u >> 63) ? ~u : u | (std::uint64_t(1) << 63);
}
inline double from_ordered_bits(std::uint64_t u) {
  u = (u >> 63) ? u & ~(std::uint64_t(1) << 63) : ~u;
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

class PerPointValueSink {
 public:
  enum class Of { Sum, Min, Max };
  PerPointValueSink(Of of, const SumGrid& g, std::size_t na, std::size_t nb, bool is_auto)
      : of_(of), g_(g), a_(na, of), b_(is_auto ? 0 : nb, of), is_auto_(is_auto) {}

  template <class NaturalOf>
  void consume(std::size_t i, std::size_t j0, const double* v, std::size_t n, const NaturalOf&) {
    Arrays& b = is_auto_ ? a_ : b_;
    for (std::size_t t = 0; t < n; ++t) {
      if (v[t] != v[t]) continue;
      add(a_, i, v[t]);
      add(b, j0 + t, v[t]);
    }
  }

  struct Arrays {
    std::vector<std::uint64_t> counts;
    std::vector<FixedSum> sums;          // Sum
    std::vector<std::uint64_t> extreme;  // Min, Max: ordered bits
    Arrays(std::size_t n, Of of)
        : counts(n, 0), sums(of == Of::Sum ? n : 0, 0),
          extreme(of == Of::Sum ? 0 : n, of == Of::Min ? ~std::uint64_t(0) : 0) {}
  };
  const Arrays& a() const { return a_; }
  const Arrays& b() const { return b_; }

 private:
  void add(Arrays& x, std::size_t k, double v) {
    ++x.counts[k];
    if (of_ == Of::Sum) x.sums[k] += g_.steps(v);
    else if (of_ == Of::Min) x.extreme[k] = std::min(x.extreme[k], ordered_bits(v));
    else x.extreme[k] = std::max(x.extreme[k], ordered_bits(v));
  }

  Of of_;
  SumGrid g_;
  Arrays a_, b_;
  bool is_auto_;
};

// The threads' arrays merged: counts and exact sums added, extremes compared.
inline void merge_point_values(const std::vector<PerPointValueSink>& sinks, bool second, PerPointValueSink::Of of,
                               PointReductions& out, std::vector<FixedSum>& exact) {
  const auto arrays = [&](const PerPointValueSink& s) -> const PerPointValueSink::Arrays& { return second ? s.b() : s.a(); };
  const std::size_t n = arrays(sinks.at(0)).counts.size();
  out.counts.assign(n, 0);
  out.values.assign(n, 0.0);
  if (of == PerPointValueSink::Of::Sum) exact.assign(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    std::uint64_t e = of == PerPointValueSink::Of::Min ? ~std::uint64_t(0) : 0;
    for (const auto& s : sinks) {
      const auto& x = arrays(s);
      out.counts[k] += x.counts[k];
      if (of == PerPointValueSink::Of::Sum) exact[k] += x.sums[k];
      else e = of == PerPointValueSink::Of::Min ? std::min(e, x.extreme[k]) : std::max(e, x.extreme[k]);
    }
    if (of != PerPointValueSink::Of::Sum) out.values[k] = out.counts[k] ? from_ordered_bits(e) : std::nan("");
  }
}

}  // namespace twobody::cpu
