// The footprint of a catalogue on the sky as occupied pixels of an equal-area "igloo"
// pixelisation (generate.hpp says why this one).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "twobody/error.hpp"
#include "twobody/generate.hpp"

namespace twobody {

namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kDeg = 180.0 / kPi;
constexpr double kSphereDeg2 = 4 * kPi * kDeg * kDeg;  // 41 252.96 square degrees

// RA in [0, 360): any finite angle taken modulo 360 (360 itself, and a rounding up to it, is 0).
double wrap_ra(double ra) {
  double a = std::fmod(ra, 360.0);
  if (a < 0) a += 360.0;
  return a >= 360.0 ? 0.0 : a;
}

}  // namespace

SkyMask::SkyMask(const PointSet& radec, double resolution_deg, std::size_t min_count)
    : resolution_(resolution_deg), min_count_(min_count) {
  if (!(resolution_deg > 0 && resolution_deg <= 180))
    throw_config(fmt::format("the mask resolution must lie in (0, 180] degrees, not {}", resolution_deg));
  // 10^-3 degrees makes 4·10^10 pixels, far below the 64-bit index; finer is no footprint.
  if (resolution_deg < 1e-3) throw_config(fmt::format("the mask resolution {} deg is below 0.001 deg", resolution_deg));
  if (min_count == 0) throw_config("a mask pixel needs at least 1 data point (min count 0 would be the whole sky)");
  if (radec.dim() != 2) throw_config(fmt::format("a sky mask takes RA, Dec (2 coordinates), not {}", radec.dim()));
  if (radec.size() == 0) throw_input("the data catalogue is empty: no footprint to draw randoms in");
  const double s = resolution_deg / kDeg;
  const auto B = static_cast<std::size_t>(std::max(1.0, std::round(kPi / s)));
  ring_pixels_.resize(B);
  band_start_.assign(B + 1, 0);
  for (std::size_t b = 0; b < B; ++b) {
    const double dec_mid = -kPi / 2 + (static_cast<double>(b) + 0.5) * kPi / static_cast<double>(B);
    ring_pixels_[b] = static_cast<std::uint32_t>(std::max(1.0, std::round(2 * kPi * std::cos(dec_mid) / s)));
    band_start_[b + 1] = band_start_[b] + ring_pixels_[b];
  }
  // Ring b spans 2 n_b / N in sin(Dec): 2π · that = n_b pixels of 4π / N each.
  const auto N = static_cast<double>(band_start_.back());
  sin_edges_.resize(B + 1);
  for (std::size_t b = 0; b <= B; ++b) sin_edges_[b] = -1.0 + 2.0 * static_cast<double>(band_start_[b]) / N;
  sin_edges_.back() = 1.0;

  std::vector<std::uint64_t> hit(radec.size());
  const auto ra = radec.coord(0), dec = radec.coord(1);
  for (std::size_t i = 0; i < radec.size(); ++i) {
    if (!(dec[i] >= -90.0 && dec[i] <= 90.0) || !std::isfinite(ra[i]))
      throw_input(fmt::format("data point {} has (RA, Dec) = ({}, {}): Dec must lie in [-90, 90] degrees", i + 1,
                              ra[i], dec[i]));
    hit[i] = pixel_of(ra[i], dec[i]);
  }
  std::sort(hit.begin(), hit.end());
  for (std::size_t i = 0; i < hit.size();) {
    std::size_t j = i;
    while (j < hit.size() && hit[j] == hit[i]) ++j;
    if (j - i >= min_count) occupied_.push_back(hit[i]);
    i = j;
  }
  if (occupied_.empty())
    throw_input(fmt::format("no pixel of {} deg holds {} data points: no footprint (a coarser --resolution or a "
                            "lower --min-count)",
                            resolution_deg, min_count));
}

double SkyMask::pixel_area_deg2() const { return kSphereDeg2 / static_cast<double>(pixels()); }

std::uint64_t SkyMask::pixel_of(double ra_deg, double dec_deg) const {
  const double z = std::sin(std::clamp(dec_deg, -90.0, 90.0) / kDeg);
  // The ring whose [lower, upper) edges hold z (the north pole, z = 1, in the last).
  const auto b = static_cast<std::size_t>(std::upper_bound(sin_edges_.begin() + 1, sin_edges_.end() - 1, z) -
                                          (sin_edges_.begin() + 1));
  const std::uint32_t n = ring_pixels_[b];
  const auto cell = std::min<std::uint64_t>(n - 1, static_cast<std::uint64_t>(wrap_ra(ra_deg) / 360.0 * n));
  return band_start_[b] + cell;
}

bool SkyMask::contains(double ra_deg, double dec_deg) const {
  return std::binary_search(occupied_.begin(), occupied_.end(), pixel_of(ra_deg, dec_deg));
}

std::array<double, 2> SkyMask::uniform_in(std::uint64_t p, double u_ra, double u_sin) const {
  const auto b = static_cast<std::size_t>(std::upper_bound(band_start_.begin(), band_start_.end(), p) -
                                          band_start_.begin()) - 1;
  const double n = ring_pixels_[b], cell = static_cast<double>(p - band_start_[b]);
  const double ra = std::min(360.0 * (cell + u_ra) / n, std::nextafter(360.0 * (cell + 1) / n, 0.0));
  const double z = sin_edges_[b] + u_sin * (sin_edges_[b + 1] - sin_edges_[b]);
  return {ra, std::asin(std::clamp(z, -1.0, 1.0)) * kDeg};
}

std::string SkyMask::describe() const {
  return fmt::format("{} of {} equal-area pixels ({:.4g} deg2 each, resolution {} deg) hold at least {} data point{}: "
                     "{:.6g} deg2, {:.4g} % of the sky",
                     occupied_.size(), pixels(), pixel_area_deg2(), resolution_, min_count_, min_count_ > 1 ? "s" : "",
                     area_deg2(), 100.0 * sky_fraction());
}

}  // namespace twobody
