#pragma once
// Two-variable bins of a pair's separation about a line of sight, the z axis (the last of three
// coordinates; Corrfunc's theory codes): (r_p, π) with r_p² = dx² + dy² and π = |dz|, or (s, μ)
// with s² = dx² + dy² + dz² and μ = |dz| / s. A 2-D statistic is a declaration like any other:
// the engine visits the pairs closer than cutoff() (the grid prunes on it) and a *binned pair
// function* (RpPiBins, SMuBins below) maps each pair to one flat bin index, decided in float64
// by the rule the README states ("The 2-D binning rule"):
//
//   r_p or s bin i:  e_i² <= r_p² (or s²) < e_{i+1}²   (the 1-D rule: squared edges)
//   π bin k:         p_k <= π < p_{k+1},  p_k = π_max·k/n_π      (π = π_max is outside)
//   μ bin k:         m_k <= μ < m_{k+1},  m_k = μ_max·k/n_μ,  μ = sqrt(dz² / s²) in float64;
//                    with μ_max = 1 the last bin is closed (μ = 1, a pair along the line of
//                    sight, is counted); a pair at s = 0 has μ = 0 (its first bin).
//   flat index:      i · n_inner + k   (r_p or s outer, π or μ inner)
//
// In a periodic box every difference is the minimum image along its axis (as PeriodicEuclidean),
// which is unique for r_p_max <= min(L_x, L_y)/2, π_max <= L_z/2 and s_max <= min L/2.
//
// Survey mocks (LineOfSight::PairMidpoint; Corrfunc's DDrppi_mocks and DDsmu_mocks): the line of
// sight of each pair is its midpoint seen from the observer at the origin. With s = a − b and
// l = a + b (the direction of the midpoint), in float64, in this order:
//   |s|² = s_x² + s_y² + s_z²,  |l|² = l_x² + l_y² + l_z²,  s·l = s_x l_x + s_y l_y + s_z l_z
//   π = sqrt((s·l)² / |l|²),  r_p² = max(|s|² − (s·l)²/|l|², 0)
//   μ = sqrt(min((s·l)² / (|l|² |s|²), 1))                 (Corrfunc's expression)
// and the bins as above (r_p² against squared edges, π and μ against linear edges). A pair with
// |l| = 0 (both points at the observer, or opposite about it) has π = 0 and μ = 0; s = 0 has μ = 0.
// Open space only: a line of sight from an observer has no meaning in a periodic box.
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "twobody/binning.hpp"
#include "twobody/bins.hpp"
#include "twobody/box.hpp"
#include "twobody/config.hpp"

namespace twobody {

// The line of sight that π and μ are measured along: the z axis (simulation boxes; Corrfunc's
// theory codes) or each pair's midpoint direction from the origin (survey mocks; Corrfunc's
// *_mocks codes).
enum class LineOfSight { ZAxis, PairMidpoint };

class Binning2D {
 public:
  enum class Kind { None, RpPi, SMu };

  Binning2D() = default;
  // r_p bins (any edges) and n_π bins of π in [0, π_max); n_π = 0 takes Corrfunc's
  // floor(π_max) (bins of width about 1). Throws Error(Config) for π_max <= 0 or not finite,
  // or when floor(π_max) is 0 and no n_π is given.
  static Binning2D rp_pi(const Binning& rp, double pi_max, std::size_t n_pi = 0,
                         LineOfSight los = LineOfSight::ZAxis);
  // s bins (any edges) and n_μ bins of μ in [0, μ_max], 0 < μ_max <= 1.
  static Binning2D s_mu(const Binning& s, double mu_max, std::size_t n_mu, LineOfSight los = LineOfSight::ZAxis);

  Kind kind() const noexcept { return kind_; }
  bool active() const noexcept { return kind_ != Kind::None; }
  LineOfSight line_of_sight() const noexcept { return los_; }
  bool midpoint_los() const noexcept { return los_ == LineOfSight::PairMidpoint; }
  const Binning& outer() const noexcept { return outer_; }  // r_p or s
  const Binning& inner() const noexcept { return inner_; }  // π or μ
  std::size_t nbins() const noexcept { return outer_.nbins() * inner_.nbins(); }
  // Every binned pair is closer than this (sqrt(r_p_max² + π_max²) or s_max, widened by a few
  // ulps): the reach the grid index prunes on. With the midpoint line of sight too: π² and r_p²
  // split |s|² (π² <= |s|² by Cauchy–Schwarz), so r_p < r_p_max and π < π_max give
  // |s|² = r_p² + π² < r_p_max² + π_max² up to the rounding the widening covers.
  double cutoff() const;
  // Names of the two variables, for tables and messages: "rp", "pi" or "s", "mu".
  const char* outer_name() const { return kind_ == Kind::RpPi ? "rp" : "s"; }
  const char* inner_name() const { return kind_ == Kind::RpPi ? "pi" : "mu"; }
  std::string describe() const;

 private:
  Kind kind_ = Kind::None;
  LineOfSight los_ = LineOfSight::ZAxis;
  Binning outer_, inner_;
};

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
