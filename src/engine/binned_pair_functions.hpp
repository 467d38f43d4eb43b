#pragma once
// The binned pair functions of 2-D statistics (twobody/binning2d.hpp states the binning rule):
// what a pair's flat (r_p, pi) or (s, mu) bin is, written once for the host and the device.
#include <cmath>

#include "twobody/binning2d.hpp"
#include "twobody/config.hpp"
#include "twobody/detail/engine/key_edges.hpp"

namespace twobody {

// The binned pair functions. Each is a small trivially copyable struct holding pointers to its
// edge tables (host memory on the CPU; a GPU backend copies the tables to the device and points
// these at them) and
//   static constexpr int dim = 3;
//   TWOBODY_HD int bin(const double* a, const double* b) const;  flat bin, or -1 outside
//   TWOBODY_HD int bin(const double* a, const double* b, double& sep) const;  the same, and the
//       pair's separation along the outer axis (r_p or s), for Statistic::mean_separation
// The engine (cpu/binned2d.hpp) evaluates bin() for the pairs its traversal finds within
// Binning2D::cutoff() and adds each pair to histogram bin bin(a, b): nothing else is per
// statistic.
struct Binned2DTables {
  KeyEdges outer;  // squared r_p or s edges
  KeyEdges inner;  // π or μ edges (μ: the top edge nudged above 1 when μ_max = 1)
  static Binned2DTables make(const Binning2D& b);
};

template <bool Periodic>
struct SeparationAxes {
  double length[3] = {0, 0, 0}, half[3] = {0, 0, 0};
  SeparationAxes() = default;
  explicit SeparationAxes(const Box& box) {
    if constexpr (Periodic)
      for (int d = 0; d < 3; ++d) {
        length[d] = box.length[d];
        half[d] = 0.5 * box.length[d];
      }
  }
  // a - b along axis d, the minimum image in a periodic box (PeriodicEuclidean's rule).
  TWOBODY_HD double diff(const double* a, const double* b, int d) const {
    double x = a[d] - b[d];
    if constexpr (Periodic) {
      x = x > half[d] ? x - length[d] : x;
      x = x < -half[d] ? x + length[d] : x;
    }
    return x;
  }
};

template <bool Periodic>
struct RpPiBins {
  static constexpr int dim = 3;
  SeparationAxes<Periodic> axes;
  const double* rp2 = nullptr;  // squared r_p edges, padded (KeyEdges)
  int n_rp = 0, steps_rp = 0;
  const double* pi = nullptr;  // π edges, padded
  int n_pi = 0, steps_pi = 0;

  RpPiBins() = default;
  RpPiBins(const Binned2DTables& t, const Box& box)
      : axes(box), rp2(t.outer.padded.data()), n_rp(t.outer.nbins), steps_rp(t.outer.steps),
        pi(t.inner.padded.data()), n_pi(t.inner.nbins), steps_pi(t.inner.steps) {}

  TWOBODY_HD int bin(const double* a, const double* b, double& sep) const {
    const double dx = axes.diff(a, b, 0), dy = axes.diff(a, b, 1), dz = axes.diff(a, b, 2);
    const double r2 = dx * dx + dy * dy;
    sep = sqrt(r2);
    const int i = find_bin(rp2, n_rp, steps_rp, r2);
    const int k = find_bin(pi, n_pi, steps_pi, fabs(dz));
    return (i < 0 || k < 0) ? -1 : i * n_pi + k;
  }
  TWOBODY_HD int bin(const double* a, const double* b) const {
    double sep;
    return bin(a, b, sep);
  }
};

template <bool Periodic>
struct SMuBins {
  static constexpr int dim = 3;
  SeparationAxes<Periodic> axes;
  const double* s2 = nullptr;  // squared s edges, padded
  int n_s = 0, steps_s = 0;
  const double* mu = nullptr;  // μ edges, padded
  int n_mu = 0, steps_mu = 0;

  SMuBins() = default;
  SMuBins(const Binned2DTables& t, const Box& box)
      : axes(box), s2(t.outer.padded.data()), n_s(t.outer.nbins), steps_s(t.outer.steps),
        mu(t.inner.padded.data()), n_mu(t.inner.nbins), steps_mu(t.inner.steps) {}

  TWOBODY_HD int bin(const double* a, const double* b) const {
    double sep;
    return bin(a, b, sep);
  }
  TWOBODY_HD int bin(const double* a, const double* b, double& sep) const {
    const double dx = axes.diff(a, b, 0), dy = axes.diff(a, b, 1), dz = axes.diff(a, b, 2);
    const double z2 = dz * dz;
    const double r2 = dx * dx + dy * dy + z2;
    sep = sqrt(r2);
    const int i = find_bin(s2, n_s, steps_s, r2);
    if (i < 0) return -1;
    // z2 <= r2 (a sum of non-negative terms rounds up from each), so μ <= 1; s = 0 gives μ = 0.
    const double m = r2 > 0 ? sqrt(z2 / r2) : 0.0;
    const int k = find_bin(mu, n_mu, steps_mu, m);
    return k < 0 ? -1 : i * n_mu + k;
  }
};

// The midpoint line of sight (survey mocks): open space, points (x, y, z) about an observer at
// the origin. Both functions are symmetric in a and b (s changes sign, l does not).
struct MidpointSightlines {
  double s2, l2, sl;  // |s|², |l|², s·l
  TWOBODY_HD MidpointSightlines(const double* a, const double* b) {
    const double sx = a[0] - b[0], sy = a[1] - b[1], sz = a[2] - b[2];
    const double lx = a[0] + b[0], ly = a[1] + b[1], lz = a[2] + b[2];
    s2 = sx * sx + sy * sy + sz * sz;
    l2 = lx * lx + ly * ly + lz * lz;
    sl = sx * lx + sy * ly + sz * lz;
  }
};

struct RpPiBinsMock {
  static constexpr int dim = 3;
  const double* rp2 = nullptr;  // squared r_p edges, padded (KeyEdges)
  int n_rp = 0, steps_rp = 0;
  const double* pi = nullptr;  // π edges, padded
  int n_pi = 0, steps_pi = 0;

  RpPiBinsMock() = default;
  explicit RpPiBinsMock(const Binned2DTables& t)
      : rp2(t.outer.padded.data()), n_rp(t.outer.nbins), steps_rp(t.outer.steps), pi(t.inner.padded.data()),
        n_pi(t.inner.nbins), steps_pi(t.inner.steps) {}

  TWOBODY_HD int bin(const double* a, const double* b) const {
    double sep;
    return bin(a, b, sep);
  }
  TWOBODY_HD int bin(const double* a, const double* b, double& sep) const {
    const MidpointSightlines m(a, b);
    const double pi2 = m.l2 > 0 ? (m.sl * m.sl) / m.l2 : 0.0;
    const double r2 = m.s2 - pi2;
    sep = sqrt(r2 > 0 ? r2 : 0.0);
    const int i = find_bin(rp2, n_rp, steps_rp, r2 > 0 ? r2 : 0.0);
    const int k = find_bin(pi, n_pi, steps_pi, sqrt(pi2));
    return (i < 0 || k < 0) ? -1 : i * n_pi + k;
  }
};

struct SMuBinsMock {
  static constexpr int dim = 3;
  const double* s2 = nullptr;  // squared s edges, padded
  int n_s = 0, steps_s = 0;
  const double* mu = nullptr;  // μ edges, padded
  int n_mu = 0, steps_mu = 0;

  SMuBinsMock() = default;
  explicit SMuBinsMock(const Binned2DTables& t)
      : s2(t.outer.padded.data()), n_s(t.outer.nbins), steps_s(t.outer.steps), mu(t.inner.padded.data()),
        n_mu(t.inner.nbins), steps_mu(t.inner.steps) {}

  TWOBODY_HD int bin(const double* a, const double* b) const {
    double sep;
    return bin(a, b, sep);
  }
  TWOBODY_HD int bin(const double* a, const double* b, double& sep) const {
    const MidpointSightlines m(a, b);
    sep = sqrt(m.s2);
    const int i = find_bin(s2, n_s, steps_s, m.s2);
    if (i < 0) return -1;
    const double d = m.l2 * m.s2;
    const double mu2 = d > 0 ? (m.sl * m.sl) / d : 0.0;
    const int k = find_bin(mu, n_mu, steps_mu, sqrt(mu2 < 1 ? mu2 : 1.0));
    return k < 0 ? -1 : i * n_mu + k;
  }
};

}  // namespace twobody
