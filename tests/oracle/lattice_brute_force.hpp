#pragma once
// The lattice rule (docs/exactness.md, "Lattices"), written apart from the engine: every source
// against every node, the pair decided in float64, its term in float64 with the C library's exp
// and std::cyl_bessel_i, the node's sum in __float128 (exact enough to be the reference).
#include <cmath>
#include <cstdint>
#include <vector>

namespace oracle {

struct LatticeCase {
  int dim = 3;
  double origin[3] = {0, 0, 0}, spacing[3] = {1, 1, 1};
  std::int64_t shape[3] = {1, 1, 1};
  bool periodic[3] = {false, false, false};
  enum Kind { Coulomb, Blinn, KaiserBesselRadial, KaiserBesselSeparable } kind = Coulomb;
  double cutoff = 1, exclusion = 0, blobbiness = 0, beta = 0;
  std::vector<std::vector<double>> x;  // x[k][i]
  std::vector<double> re, im, radius;  // re empty: 1
};

struct LatticeNode {
  __float128 re = 0, im = 0;
  double abs_sum = 0;      // Σ |term| (either part)
  std::uint64_t terms = 0;
  bool excluded = false;
};

inline double kb_window(double d2, double a2, double beta) {
  const double s2 = 1.0 - d2 / a2;
  return std::cyl_bessel_i(0.0, beta * std::sqrt(s2 < 0 ? 0.0 : s2)) / std::cyl_bessel_i(0.0, beta);
}

// The float64 displacement of source coordinate x from node i on axis k (the nearest image on a
// periodic axis).
inline double displacement(const LatticeCase& c, int k, double x, std::int64_t i) {
  const double node = c.origin[k] + static_cast<double>(i) * c.spacing[k];
  double d = x - node;
  if (c.periodic[k]) {
    const double L = static_cast<double>(c.shape[k]) * c.spacing[k];
    const double w = std::nearbyint(d / L);
    if (w != 0) d = d - w * L;
  }
  return d;
}

inline std::vector<LatticeNode> lattice_brute_force(const LatticeCase& c) {
  const std::size_t nodes = static_cast<std::size_t>(c.shape[0] * c.shape[1] * c.shape[2]);
  std::vector<LatticeNode> out(nodes);
  const std::size_t n = c.x.empty() ? 0 : c.x[0].size();
  const double C2 = c.cutoff * c.cutoff, R2 = c.exclusion * c.exclusion;
  for (std::int64_t iz = 0; iz < c.shape[2]; ++iz)
    for (std::int64_t iy = 0; iy < c.shape[1]; ++iy)
      for (std::int64_t ix = 0; ix < c.shape[0]; ++ix) {
        LatticeNode& node = out[static_cast<std::size_t>(ix + c.shape[0] * (iy + c.shape[1] * iz))];
        const std::int64_t idx[3] = {ix, iy, iz};
        for (std::size_t s = 0; s < n; ++s) {
          double d[3] = {0, 0, 0};
          for (int k = 0; k < c.dim; ++k) d[k] = displacement(c, k, c.x[k][s], idx[k]);
          double r2 = d[0] * d[0] + d[1] * d[1];
          if (c.dim == 3) r2 = r2 + d[2] * d[2];
          double g = 0;
          if (c.kind == LatticeCase::KaiserBesselSeparable) {
            bool in = true;
            for (int k = 0; k < c.dim; ++k) in = in && std::fabs(d[k]) < c.cutoff;
            if (!in) continue;
            g = 1;
            for (int k = 0; k < c.dim; ++k) g *= kb_window(d[k] * d[k], C2, c.beta);
          } else {
            if (!(r2 < C2)) continue;
            if (c.kind == LatticeCase::Coulomb) {
              if (r2 < R2) {
                node.excluded = true;
                continue;
              }
              const double sw = 1.0 - r2 / C2;
              g = sw * sw / std::sqrt(r2);
            } else if (c.kind == LatticeCase::Blinn) {
              g = std::exp(c.blobbiness * (1.0 - r2 / (c.radius[s] * c.radius[s])));
            } else {
              g = kb_window(r2, C2, c.beta);
            }
          }
          const double q = c.re.empty() ? 1.0 : c.re[s];
          node.re += static_cast<__float128>(q * g);
          node.abs_sum += std::fabs(q * g);
          if (!c.im.empty()) {
            node.im += static_cast<__float128>(c.im[s] * g);
            node.abs_sum += std::fabs(c.im[s] * g);
          }
          ++node.terms;
        }
        if (node.excluded) node.re = node.im = 0;
      }
  return out;
}

}  // namespace oracle
