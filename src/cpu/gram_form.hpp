#pragma once
// The Gram form of the squared Euclidean distance on the CPU, shared by the k-NN (gram_knn.cpp)
// and the ε-join's rows (gram_key_rows.hpp): rows shifted to a common centre c, their norms
// q = Σ_k fl(x'_k²) in order, the dots ĝ = Σ_k x'_ik x'_jk by fused multiply-adds in registers
// across Q anchors × 8 partners, and the interval that holds the pair's rule key around
// κ̂ = fl(fl(q_i + q_j) − 2ĝ):
//   |κ̂ − ‖x'_i − x'_j‖²| ≤ 1.01 (2γ_d + 3u) S              (gemm_bounds.hpp: l2 on the GEMM route)
//   |‖x'_i − x'_j‖² − D²| ≤ 4.1 u S                          (the centring: each x' within u|x − c|, so
//                                                            ‖x'_i − x'_j‖ within e_c = 1.01u√(2S) of
//                                                            D = ‖x_i − x_j‖ ≤ √(2S)(1 + u) + e_c)
//   |key − D²| ≤ γ_{d+3} D²                                  (the rule's own: rule_squared_error)
// so key ∈ [max(0, κ̂ − cS)(1 − γ_{d+3}), (κ̂ + cS)(1 + γ_{d+3})], S = q_i + q_j,
// c = 1.01 (2γ_d + 3u) + 4.1u, each end moved out by 2^-50 of itself for the few roundings of
// computing it. S or κ̂ beyond 2^1020 (not finite, or near it), or S below 2^-900 (products that
// could underflow): the interval is [0, ∞).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "twobody/detail/cpu/vector_rows.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/exact/gemm_bounds.hpp"

namespace twobody::cpu::gram {

constexpr std::size_t kLanes = 8;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Why the Gram form does not serve `plan` ("" when it does): Euclidean vectors of at least 32
// dimensions (below, the rule's own keys are as fast), not a band of a hybrid run (it takes the
// rule's keys), unless the variable `force` (TWOBODY_CPU_KNN, TWOBODY_CPU_JOIN_KEYS) says gram or rule.
inline std::string refusal(const VectorPlan& plan, const char* force) {
  if (plan.stat->metric != Metric::Euclidean) return "the Gram form serves the Euclidean distance";
  if (plan.banded()) return "a band of a hybrid run takes the rule's keys";
  const char* forced = std::getenv(force);
  const std::string value = forced ? forced : "";
  if (value == "rule") return std::string(force) + "=rule";
  if (value == "gram") return {};
  if (plan.a->dim() < 32) return "below 32 dimensions the rule's own keys are as fast";
  return {};
}

// ĝ of Q centred anchors against the n centred partners of `panels` (panel_doubles' layout): the
// accumulators of 8 partners × Q anchors in registers through the whole sum, one fused
// multiply-add a coordinate (any order is within the bound).
template <int Q>
void dots(int dim, const double* panels, const double* const (&a)[Q], std::size_t n, double* out, std::size_t stride) {
  for (std::size_t t0 = 0; t0 < n; t0 += kLanes) {
    double acc[Q][kLanes] = {};
    const double* panel = panels + t0 * static_cast<std::size_t>(dim);
    for (int k = 0; k < dim; ++k) {
      const double* col = panel + static_cast<std::size_t>(k) * kLanes;
      for (int q = 0; q < Q; ++q) {
        const double aq = a[q][k];
#pragma omp simd
        for (std::size_t u = 0; u < kLanes; ++u) acc[q][u] = std::fma(aq, col[u], acc[q][u]);
      }
    }
    const std::size_t lanes = std::min(kLanes, n - t0);
    for (int q = 0; q < Q; ++q)
      for (std::size_t u = 0; u < lanes; ++u) out[static_cast<std::size_t>(q) * stride + t0 + u] = acc[q][u];
  }
}

// row − c into out[k·stride] (a panel's lane: stride 8; a row: 1), and its norm q = Σ_k x'_k² in order.
inline double centre_row(const double* row, const std::vector<double>& c, double* out, std::size_t stride) {
  double q = 0;
  for (std::size_t k = 0; k < c.size(); ++k) {
    const double x = row[k] - c[k];
    out[k * stride] = x;
    q += x * x;
  }
  return q;
}

// Rows [r0, r1) of a set centred on c, in panels of 8, with their centred norms q (in order); and,
// kept: the rows as loaded, in the same panels (the rule's keys read them).
class CentredPanels {
 public:
  CentredPanels(int dim, std::size_t width, const std::vector<double>& centre, bool keep_raw = false)
      : dim_(dim), t_(panel_doubles(width, dim), 0.0), raw_(keep_raw ? t_.size() : 0, 0.0), q_(width),
        row_(static_cast<std::size_t>(dim)), c_(centre) {}
  void load(const RuleRows& rows, std::size_t r0, std::size_t r1) {
    if (r0 == r0_ && r1 == r1_) return;
    const std::size_t d = static_cast<std::size_t>(dim_);
    for (std::size_t j = r0; j < r1; ++j) {
      rows.load(j, row_.data());
      const std::size_t at = (j - r0) / kLanes * kLanes * d + (j - r0) % kLanes;
      q_[j - r0] = centre_row(row_.data(), c_, t_.data() + at, kLanes);
      if (!raw_.empty())
        for (std::size_t k = 0; k < d; ++k) raw_[at + k * kLanes] = row_[k];
    }
    r0_ = r0;
    r1_ = r1;
  }
  const double* panels() const { return t_.data(); }
  const std::vector<double>& norms() const { return q_; }
  // Row r0 + t as loaded: its coordinate k at raw(t)[k·8].
  const double* raw(std::size_t t) const { return raw_.data() + t / kLanes * kLanes * static_cast<std::size_t>(dim_) + t % kLanes; }

 private:
  int dim_;
  std::vector<double> t_, raw_, q_, row_;
  const std::vector<double>& c_;
  std::size_t r0_ = static_cast<std::size_t>(-1), r1_ = 0;
};

// The centre: the midpoint of the two sets' joint range, per coordinate (B ignored for a self-join).
inline std::vector<double> centre_of(const RuleRows& A, const RuleRows& B, bool self, int threads) {
  const std::size_t d = static_cast<std::size_t>(A.dim());
  std::vector<double> lo(d, kInf), hi(d, -kInf);
  for (const RuleRows* s : {&A, &B}) {
    if (s == &B && self) break;
    const auto n = static_cast<std::ptrdiff_t>(s->size());
#pragma omp parallel num_threads(threads)
    {
      std::vector<double> row(d), l(d, kInf), h(d, -kInf);
#pragma omp for schedule(static) nowait
      for (std::ptrdiff_t i = 0; i < n; ++i) {
        s->load(static_cast<std::size_t>(i), row.data());
        for (std::size_t k = 0; k < d; ++k) {
          l[k] = std::min(l[k], row[k]);
          h[k] = std::max(h[k], row[k]);
        }
      }
#pragma omp critical
      for (std::size_t k = 0; k < d; ++k) {
        lo[k] = std::min(lo[k], l[k]);
        hi[k] = std::max(hi[k], h[k]);
      }
    }
  }
  std::vector<double> c(d, 0.0);
  for (std::size_t k = 0; k < d; ++k)
    if (lo[k] <= hi[k]) c[k] = 0.5 * lo[k] + 0.5 * hi[k];
  return c;
}

// The interval of the header, for d dimensions.
struct KeyInterval {
  double c, down, up;
  explicit KeyInterval(int dim)
      : c(1.01 * (2 * exact::gemm_gamma(dim) + 3 * exact::kGemmUnit) + 4.1 * exact::kGemmUnit),
        down((1 - exact::rule_squared_error(dim)) * (1 - 0x1p-50)),
        up((1 + exact::rule_squared_error(dim)) * (1 + 0x1p-50)) {}
  // [lower, upper] of the rule key of a pair with norms qi, qj and Gram dot g.
  void operator()(double qi, double qj, double g, double& lower, double& upper) const {
    const double S = qi + qj;
    const double kappa = S - 2 * g;
    const bool bounded = S >= 0x1p-900 && S <= 0x1p1020 && kappa <= 0x1p1020 && kappa >= -0x1p1020;
    const double e = c * S;
    const double lo = kappa - e > 0 ? (kappa - e) * down : 0.0;
    lower = bounded ? lo : 0.0;
    upper = bounded ? (kappa + e) * up : kInf;
  }
};

// The rule's key of a pair (panel_keys' Euclidean sum, the same operations in the same order), b's
// coordinate k at b[k·stride].
inline double rule_key(const double* a, const double* b, int dim, std::size_t stride = 1) {
  double acc = 0;
  for (int k = 0; k < dim; ++k) {
    const double d = a[k] - b[static_cast<std::size_t>(k) * stride];
    acc += d * d;
  }
  return acc;
}

}  // namespace twobody::cpu::gram
