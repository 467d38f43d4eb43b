#pragma once
// The test oracle: a plain float64 brute force, written apart from the engine and sharing none of
// its code. It applies the README's binning rule literally: a distance pair is in bin k when
// e_k*e_k <= d2 < e_{k+1}*e_{k+1} (d2 summed in coordinate order), an angular pair when
// cos(e_{k+1}) < a.b <= cos(e_k); bins are searched linearly.
#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

namespace oracle {

struct Points {
  int dim = 0;
  std::vector<std::vector<double>> x;  // x[i][d]
  std::vector<double> w;
};

inline double d2_open(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t d = 0; d < a.size(); ++d) s += (a[d] - b[d]) * (a[d] - b[d]);
  return s;
}

inline double d2_periodic(const std::vector<double>& a, const std::vector<double>& b,
                          const std::vector<double>& L) {
  double s = 0;
  for (std::size_t d = 0; d < a.size(); ++d) {
    double dx = a[d] - b[d];
    if (dx > L[d] / 2) dx -= L[d];
    if (dx < -L[d] / 2) dx += L[d];
    s += dx * dx;
  }
  return s;
}

inline int bin_of_d2(double d2, const std::vector<double>& edges) {
  for (std::size_t k = 0; k + 1 < edges.size(); ++k)
    if (edges[k] * edges[k] <= d2 && d2 < edges[k + 1] * edges[k + 1]) return static_cast<int>(k);
  return -1;
}

inline std::vector<double> unit_vector(double ra_deg, double dec_deg) {
  const double r = ra_deg * (std::numbers::pi / 180.0), d = dec_deg * (std::numbers::pi / 180.0);
  return {std::cos(d) * std::cos(r), std::cos(d) * std::sin(r), std::sin(d)};
}

inline int bin_of_cos(double c, const std::vector<double>& edges_deg) {
  for (std::size_t k = 0; k + 1 < edges_deg.size(); ++k) {
    const double chi = std::cos(edges_deg[k] * (std::numbers::pi / 180.0));
    const double clo = std::cos(edges_deg[k + 1] * (std::numbers::pi / 180.0));
    if (clo < c && c <= chi) return static_cast<int>(k);
  }
  return -1;
}

struct Histogram {
  std::vector<std::uint64_t> counts;
  std::vector<double> weighted;
};

// kind: 0 open, 1 periodic (box L), 2 angular (points are RA, Dec).
inline Histogram histogram(const Points& a, const Points* b, const std::vector<double>& edges, int kind,
                           const std::vector<double>& L = {}, bool weighted = false) {
  Histogram h{std::vector<std::uint64_t>(edges.size() - 1, 0), std::vector<double>(edges.size() - 1, 0.0)};
  const Points& B = b ? *b : a;
  auto prep = [&](const Points& p) {
    if (kind != 2) return p.x;
    std::vector<std::vector<double>> u;
    for (const auto& x : p.x) u.push_back(unit_vector(x[0], x[1]));
    return u;
  };
  const auto ua = prep(a), ub = b ? prep(B) : ua;
  for (std::size_t i = 0; i < ua.size(); ++i)
    for (std::size_t j = b ? 0 : i + 1; j < ub.size(); ++j) {
      int k;
      if (kind == 2)
        k = bin_of_cos(ua[i][0] * ub[j][0] + ua[i][1] * ub[j][1] + ua[i][2] * ub[j][2], edges);
      else
        k = bin_of_d2(kind == 1 ? d2_periodic(ua[i], ub[j], L) : d2_open(ua[i], ub[j]), edges);
      if (k < 0) continue;
      ++h.counts[k];
      if (weighted) h.weighted[k] += a.w[i] * B.w[j];
    }
  return h;
}

// Per-point reductions, literally: pair (i, j) is in range when lo*lo <= d2 < hi*hi; auto visits
// i < j and adds to both, cross adds to i of a and j of b; sums add the partner's weight.
struct PerPoint {
  std::vector<std::uint64_t> counts_a, counts_b;
  std::vector<double> wsum_a, wsum_b;
};

// kind: 0 open, 1 periodic (box L).
inline PerPoint per_point(const Points& a, const Points* b, double lo, double hi, int kind,
                          const std::vector<double>& L = {}) {
  const Points& B = b ? *b : a;
  PerPoint p{std::vector<std::uint64_t>(a.x.size(), 0), std::vector<std::uint64_t>(b ? B.x.size() : 0, 0),
             std::vector<double>(a.x.size(), 0.0), std::vector<double>(b ? B.x.size() : 0, 0.0)};
  auto& cb = b ? p.counts_b : p.counts_a;
  auto& wb = b ? p.wsum_b : p.wsum_a;
  for (std::size_t i = 0; i < a.x.size(); ++i)
    for (std::size_t j = b ? 0 : i + 1; j < B.x.size(); ++j) {
      const double d2 = kind == 1 ? d2_periodic(a.x[i], B.x[j], L) : d2_open(a.x[i], B.x[j]);
      if (!(lo * lo <= d2 && d2 < hi * hi)) continue;
      ++p.counts_a[i];
      ++cb[j];
      if (!a.w.empty()) {
        p.wsum_a[i] += B.w[j];
        wb[j] += a.w[i];
      }
    }
  return p;
}

}  // namespace oracle
