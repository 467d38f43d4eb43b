#include "twobody/detail/engine/binned_pair_functions.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "twobody/error.hpp"

namespace twobody {

Binning2D Binning2D::rp_pi(const Binning& rp, double pi_max, std::size_t n_pi, LineOfSight los) {
  if (rp.nbins() == 0) throw_config("r_p bins are needed");
  if (!std::isfinite(pi_max) || !(pi_max > 0))
    throw_config(fmt::format("pimax must be positive and finite, not {}", pi_max));
  if (n_pi == 0) {
    // Corrfunc's DDrppi: npibins = (int) pimax, bins of width pimax / npibins.
    const double f = std::floor(pi_max);
    if (f < 1)
      throw_config(fmt::format("pimax {} is below 1: give the number of pi bins (Corrfunc's default, floor(pimax), is 0)",
                               pi_max));
    if (f > 1e6) throw_config(fmt::format("pimax {} would make {} pi bins: give the number of pi bins", pi_max, f));
    n_pi = static_cast<std::size_t>(f);
  }
  Binning2D b;
  b.kind_ = Kind::RpPi;
  b.los_ = los;
  b.outer_ = rp;
  b.inner_ = Binning::linear(0.0, pi_max, n_pi);
  return b;
}

Binning2D Binning2D::s_mu(const Binning& s, double mu_max, std::size_t n_mu, LineOfSight los) {
  if (s.nbins() == 0) throw_config("s bins are needed");
  if (!(mu_max > 0 && mu_max <= 1)) throw_config(fmt::format("mu_max must lie in (0, 1], not {}", mu_max));
  if (n_mu == 0) throw_config("the number of mu bins must be positive");
  Binning2D b;
  b.kind_ = Kind::SMu;
  b.los_ = los;
  b.outer_ = s;
  b.inner_ = Binning::linear(0.0, mu_max, n_mu);
  return b;
}

double Binning2D::cutoff() const {
  const double r = kind_ == Kind::RpPi ? std::hypot(outer_.hi(), inner_.hi()) : outer_.hi();
  // A binned pair has r_p² < r_p_max² and |dz| < π_max in float64, so its distance is below
  // the hypotenuse up to a few ulps.
  return r * (1 + 1e-12);
}

std::string Binning2D::describe() const {
  if (kind_ == Kind::None) return "none";
  const Binning& o = outer_;
  const char* los = midpoint_los() ? "about each pair's midpoint line of sight (survey mocks)" : "about the z axis";
  if (kind_ == Kind::RpPi)
    return fmt::format("(r_p, pi): {} r_p bins [{}, {}) x {} pi bins [0, {}) {}", o.nbins(), o.lo(), o.hi(),
                       inner_.nbins(), inner_.hi(), los);
  return fmt::format("(s, mu): {} s bins [{}, {}) x {} mu bins [0, {}{} {}", o.nbins(), o.lo(), o.hi(), inner_.nbins(),
                     inner_.hi(), inner_.hi() == 1.0 ? "]" : ")", los);
}

Binned2DTables Binned2DTables::make(const Binning2D& b) {
  Binned2DTables t;
  std::vector<double> outer, inner(b.inner().edges());
  for (double e : b.outer().edges()) outer.push_back(e * e);
  // μ <= 1 always: with μ_max = 1 the last bin takes μ = 1 (a pair along the line of sight).
  if (b.kind() == Binning2D::Kind::SMu && inner.back() == 1.0)
    inner.back() = std::nextafter(1.0, std::numeric_limits<double>::infinity());
  t.outer = KeyEdges::from_keys(std::move(outer));
  t.inner = KeyEdges::from_keys(std::move(inner));
  return t;
}

}  // namespace twobody
