// The rows of the dot-like kernels' GEMM route (engine/gemm_rows.hpp), by the float64 rule's
// operations: sums from +0 in stored order, no contraction (the library builds with
// -ffp-contract=off), so a row's mean, its centred elements and its norms are the rule's bits.
#include "twobody/detail/engine/gemm_rows.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace twobody {

std::optional<GemmForm> gemm_form(std::string_view kernel) {
  if (kernel == "dot") return GemmForm::Dot;
  if (kernel == "cosine") return GemmForm::Cosine;
  if (kernel == "pearson" || kernel == "spearman") return GemmForm::Correlation;
  if (kernel == "l2") return GemmForm::Distance;
  if (kernel == "sqeuclidean") return GemmForm::SquaredDistance;
  return std::nullopt;
}

bool is_distance(GemmForm f) { return f == GemmForm::Distance || f == GemmForm::SquaredDistance; }

std::vector<double> gemm_centre(const VectorSet& a, const VectorSet* b, int threads) {
  const std::size_t d = static_cast<std::size_t>(a.dim());
  std::vector<double> c(d, 0.0);
  const VectorSet* sets[2] = {&a, b};
  std::size_t rows = 0;
  for (const VectorSet* s : sets) {
    if (!s) continue;
    rows += s->size();
    // Partial sums of fixed chunks of rows, added in chunk order: the centre's bits depend on the
    // rows alone, not on the threads (every unsettled distance, and which are settled, follow them).
    const std::size_t n = s->size();
    const std::size_t chunk = std::max<std::size_t>(256, (n + 63) / 64);
    const std::size_t chunks = (n + chunk - 1) / chunk;
    std::vector<double> part(chunks * d, 0.0);
#pragma omp parallel num_threads(std::max(1, threads))
    {
      std::vector<double> x(d);
#pragma omp for schedule(static)
      for (std::ptrdiff_t q = 0; q < static_cast<std::ptrdiff_t>(chunks); ++q) {
        double* p = part.data() + static_cast<std::size_t>(q) * d;
        const std::size_t end = std::min(n, (static_cast<std::size_t>(q) + 1) * chunk);
        for (std::size_t i = static_cast<std::size_t>(q) * chunk; i < end; ++i) {
          s->row_f64(i, x.data());
          for (std::size_t k = 0; k < d; ++k) p[k] += x[k];
        }
      }
    }
    for (std::size_t q = 0; q < chunks; ++q)
      for (std::size_t k = 0; k < d; ++k) c[k] += part[q * d + k];
  }
  // (any centre keeps the bound; the mean makes the shifted rows short, the cancellation small)
  for (double& v : c) v /= static_cast<double>(rows);
  return c;
}

GemmRows make_gemm_rows(const VectorSet& v, GemmForm f, const std::vector<double>& centre, int threads) {
  GemmRows g;
  g.n = v.size();
  g.d = v.dim();
  const std::size_t d = static_cast<std::size_t>(g.d);
  g.rows.resize(g.n * d);
  if (f != GemmForm::Dot) g.scale.resize(g.n);
  // (a set's own contiguous float64 rows serve as the raw rows: 3.2 GB less to copy at 10^4 x 40,000)
  const bool view = is_distance(f) && v.element() == Element::F64 && (v.row_stride() == d || g.n <= 1);
  if (view) g.raw_view = static_cast<const double*>(v.row(0));
  else if (is_distance(f)) g.raw.resize(g.n * d);
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(g.n);
#pragma omp parallel for schedule(static) num_threads(std::max(1, threads))
  for (std::ptrdiff_t ip = 0; ip < n; ++ip) {
    const std::size_t i = static_cast<std::size_t>(ip);
    double* x = g.rows.data() + i * d;
    v.row_f64(i, x);
    if (f == GemmForm::Correlation) {
      double s = 0;
      for (std::size_t k = 0; k < d; ++k) s += x[k];
      const double mean = s / static_cast<double>(d);
      for (std::size_t k = 0; k < d; ++k) x[k] -= mean;
    } else if (is_distance(f)) {
      if (!view) std::copy(x, x + d, g.raw.data() + i * d);
      for (std::size_t k = 0; k < d; ++k) x[k] -= centre[k];
    }
    if (f == GemmForm::Dot) continue;
    double q = 0;
    for (std::size_t k = 0; k < d; ++k) q += x[k] * x[k];
    g.scale[i] = is_distance(f) ? q : std::sqrt(q);
  }
  return g;
}

}  // namespace twobody
