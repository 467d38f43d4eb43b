#pragma once
// The forces oracle: every pair i < j in float64, written apart from the engine. The pair is in
// when r² = Σ_k d_k² (coordinate order, minimum image: d − L if d > L/2, d + L if d < −L/2) is
// below C·C; its energy and force are computed from the textbook forms with std::pow, and summed
// per body in long double, with Σ|term| per body for the comparison's tolerance.
#include <cmath>
#include <cstddef>
#include <vector>

namespace oracle {

struct ForceCase {
  int dim = 3;
  std::vector<std::vector<double>> x;  // x[i][d]
  std::vector<double> q;               // charges (Coulomb), empty for LJ
  std::vector<double> box;             // sides, empty: open
  double cutoff = 2.5, epsilon = 1, sigma = 1;
  bool coulomb = false, shift = false;
};

struct ForceSums {
  std::vector<std::vector<long double>> force;  // [i][d]
  std::vector<long double> energy;              // each body's half of its pairs' energies
  std::vector<std::vector<long double>> force_abs;
  std::vector<long double> energy_abs;
  std::vector<std::size_t> partners;
  long double total_energy = 0, virial = 0;
};

inline ForceSums brute_force_forces(const ForceCase& c) {
  const std::size_t n = c.x.size();
  ForceSums s;
  s.force.assign(n, std::vector<long double>(c.dim, 0));
  s.force_abs = s.force;
  s.energy.assign(n, 0);
  s.energy_abs.assign(n, 0);
  s.partners.assign(n, 0);
  const auto lj = [&](double r) {
    const double sr6 = std::pow(c.sigma / r, 6);
    return 4 * c.epsilon * (sr6 * sr6 - sr6);
  };
  const double e_shift = c.shift && !c.coulomb ? lj(c.cutoff) : 0.0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      std::vector<double> d(c.dim);
      double r2 = 0;
      for (int k = 0; k < c.dim; ++k) {
        double dx = c.x[i][k] - c.x[j][k];
        if (!c.box.empty()) {
          if (dx > c.box[k] / 2) dx -= c.box[k];
          if (dx < -c.box[k] / 2) dx += c.box[k];
        }
        d[k] = dx;
        r2 += dx * dx;
      }
      if (!(r2 < c.cutoff * c.cutoff)) continue;
      const double r = std::sqrt(r2);
      double e, fr;  // fr = |F| along d / r: F = fr·d
      if (c.coulomb) {
        const double qq = c.q[i] * c.q[j], sw = 1 - r2 / (c.cutoff * c.cutoff);
        e = qq * sw * sw / r;
        // −dE/dr = qq (sw²/r² + 4 sw/C²)
        fr = qq * (sw * sw / r2 + 4 * sw / (c.cutoff * c.cutoff)) / r;
      } else {
        const double sr6 = std::pow(c.sigma / r, 6);
        e = lj(r) - e_shift;
        fr = 24 * c.epsilon * (2 * sr6 * sr6 - sr6) / r2;
      }
      for (int k = 0; k < c.dim; ++k) {
        s.force[i][k] += (long double)fr * d[k];
        s.force[j][k] -= (long double)fr * d[k];
        s.force_abs[i][k] += std::fabs(fr * d[k]);
        s.force_abs[j][k] += std::fabs(fr * d[k]);
      }
      s.energy[i] += e / 2;
      s.energy[j] += e / 2;
      s.energy_abs[i] += std::fabs(e / 2);
      s.energy_abs[j] += std::fabs(e / 2);
      ++s.partners[i];
      ++s.partners[j];
      s.total_energy += e;
      s.virial += (long double)fr * r2;
    }
  return s;
}

}  // namespace oracle
