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

}  // namespace twobody
