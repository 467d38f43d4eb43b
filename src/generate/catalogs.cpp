#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <vector>

#include "twobody/detail/generate/rng.hpp"
#include "twobody/error.hpp"
#include "twobody/generate.hpp"

namespace twobody {

namespace {

constexpr double kDeg = 180.0 / std::numbers::pi;

void check_request(std::size_t n, int dim) {
  if (n == 0) throw_config("the number of points must be positive");
  if (dim < 1 || dim > kMaxDim) throw_config(fmt::format("dimension must be 1 to {}", kMaxDim));
}

// A point uniform in the unit D-ball (rejection from the cube; D <= 8 keeps it cheap enough).
template <class Out>
void uniform_in_ball(Rng& rng, int dim, Out& out) {
  for (;;) {
    double r2 = 0;
    for (int d = 0; d < dim; ++d) {
      out[d] = 2.0 * rng.uniform() - 1.0;
      r2 += out[d] * out[d];
    }
    if (r2 <= 1.0) return;
  }
}

// Soneira–Peebles: a sphere of radius R holds eta centres uniformly, each the centre of a sphere
// of radius R/lambda, down `levels` levels; the deepest centres are the points. Hierarchies are
// added at uniform random top centres until n points exist.
std::vector<std::array<double, kMaxDim>> soneira_peebles(std::size_t n, int dim, double radius,
                                                         const ClusterOptions& c, Rng& rng,
                                                         auto&& top_centre) {
  if (c.eta < 1 || !(c.lambda > 1.0) || c.levels < 1)
    throw_config("Soneira–Peebles needs eta >= 1, lambda > 1 and levels >= 1");
  std::vector<std::array<double, kMaxDim>> pts;
  pts.reserve(n);
  std::array<double, kMaxDim> off{};
  while (pts.size() < n) {
    std::vector<std::array<double, kMaxDim>> level{top_centre()};
    double r = radius;
    for (int l = 0; l < c.levels && pts.size() + level.size() < 4 * n; ++l) {
      std::vector<std::array<double, kMaxDim>> next;
      next.reserve(level.size() * c.eta);
      for (const auto& centre : level)
        for (int e = 0; e < c.eta; ++e) {
          uniform_in_ball(rng, dim, off);
          auto p = centre;
          for (int d = 0; d < dim; ++d) p[d] += r * off[d];
          next.push_back(p);
        }
      level = std::move(next);
      r /= c.lambda;
    }
    for (const auto& p : level) {
      if (pts.size() == n) break;
      pts.push_back(p);
    }
  }
  return pts;
}

PointSet radec_from_vectors(const std::vector<std::array<double, kMaxDim>>& v) {
  PointSet p(2, v.size());
  auto ra = p.coord(0), dec = p.coord(1);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double x = v[i][0], y = v[i][1], z = v[i][2];
    const double r = std::sqrt(x * x + y * y + z * z);
    double a = std::atan2(y, x) * kDeg;
    if (a < 0) a += 360.0;
    if (a >= 360.0) a = 0.0;
    ra[i] = a;
    dec[i] = std::asin(std::clamp(z / r, -1.0, 1.0)) * kDeg;
  }
  return p;
}

std::array<double, kMaxDim> random_unit_vector(Rng& rng) {
  std::array<double, kMaxDim> u{};
  const double z = 2.0 * rng.uniform() - 1.0, phi = 2.0 * std::numbers::pi * rng.uniform();
  const double s = std::sqrt(1.0 - z * z);
  u[0] = s * std::cos(phi);
  u[1] = s * std::sin(phi);
  u[2] = z;
  return u;
}

}  // namespace

PointSet generate_uniform_box(std::size_t n, int dim, double side, std::uint64_t seed) {
  check_request(n, dim);
  if (!(side > 0)) throw_config("the box side must be positive");
  Rng rng(seed);
  PointSet p(dim, n);
  for (std::size_t i = 0; i < n; ++i)
    for (int d = 0; d < dim; ++d) p.coord(d)[i] = side * rng.uniform();
  return p;
}

PointSet generate_uniform_sky(std::size_t n, std::uint64_t seed) {
  check_request(n, 2);
  Rng rng(seed);
  PointSet p(2, n);
  for (std::size_t i = 0; i < n; ++i) {
    p.coord(0)[i] = 360.0 * rng.uniform();
    p.coord(1)[i] = std::asin(2.0 * rng.uniform() - 1.0) * kDeg;
  }
  return p;
}

PointSet generate_clustered_box(std::size_t n, int dim, double side, const ClusterOptions& c,
                                std::uint64_t seed) {
  check_request(n, dim);
  if (!(side > 0)) throw_config("the box side must be positive");
  Rng rng(seed);
  std::vector<std::array<double, kMaxDim>> pts;
  const auto uniform_centre = [&] {
    std::array<double, kMaxDim> x{};
    for (int d = 0; d < dim; ++d) x[d] = side * rng.uniform();
    return x;
  };
  if (c.kind == ClusterOptions::Kind::GaussianBlobs) {
    if (c.blobs == 0) throw_config("Gaussian blobs need at least one blob");
    std::vector<std::array<double, kMaxDim>> centres(c.blobs);
    for (auto& x : centres) x = uniform_centre();
    for (std::size_t i = 0; i < n; ++i) {
      auto x = centres[static_cast<std::size_t>(rng.uniform() * c.blobs)];
      for (int d = 0; d < dim; ++d) x[d] += c.sigma * side * rng.normal();
      pts.push_back(x);
    }
  } else {
    pts = soneira_peebles(n, dim, c.radius * side, c, rng, uniform_centre);
  }
  PointSet p(dim, n);
  for (std::size_t i = 0; i < n; ++i)
    for (int d = 0; d < dim; ++d) {
      double x = pts[i][d] - side * std::floor(pts[i][d] / side);
      p.coord(d)[i] = (x >= side || x < 0) ? 0.0 : x;
    }
  return p;
}

PointSet generate_concentrated_box(std::size_t n, int dim, double side, double fraction, double volume,
                                   std::uint64_t seed) {
  check_request(n, dim);
  if (!(side > 0)) throw_config("the box side must be positive");
  if (!(fraction >= 0 && fraction <= 1)) throw_config("the concentrated fraction must lie in [0, 1]");
  if (!(volume > 0 && volume < 1)) throw_config("the concentrated volume must lie in (0, 1), a fraction of the box");
  Rng rng(seed);
  const double cube = side * std::pow(volume, 1.0 / dim);
  std::array<double, kMaxDim> corner{};
  for (int d = 0; d < dim; ++d) corner[d] = (side - cube) * rng.uniform();
  const auto in_cube = static_cast<std::size_t>(std::llround(fraction * static_cast<double>(n)));
  // corner + cube * u can round up to side; such a coordinate takes the largest value below it.
  const double below_side = std::nextafter(side, 0.0);
  PointSet p(dim, n);
  for (std::size_t i = 0; i < n; ++i) {
    for (bool inside = true; inside;) {  // the rest lies outside the cube: rejection, 1 - volume accepted
      inside = i >= in_cube;
      for (int d = 0; d < dim; ++d) {
        const double x = i < in_cube ? corner[d] + cube * rng.uniform() : side * rng.uniform();
        p.coord(d)[i] = std::min(x, below_side);
        inside = inside && x >= corner[d] && x < corner[d] + cube;
      }
    }
  }
  return p;
}

PointSet generate_clustered_sky(std::size_t n, const ClusterOptions& c, std::uint64_t seed) {
  check_request(n, 2);
  Rng rng(seed);
  if (c.kind == ClusterOptions::Kind::GaussianBlobs) {
    if (c.blobs == 0) throw_config("Gaussian blobs need at least one blob");
    std::vector<std::array<double, kMaxDim>> centres(c.blobs), pts;
    for (auto& x : centres) x = random_unit_vector(rng);
    for (std::size_t i = 0; i < n; ++i) {
      auto x = centres[static_cast<std::size_t>(rng.uniform() * c.blobs)];
      for (int d = 0; d < 3; ++d) x[d] += c.sigma * rng.normal();
      pts.push_back(x);
    }
    return radec_from_vectors(pts);
  }
  // The hierarchy lives in 3-D around a point on the unit sphere and is projected onto it.
  return radec_from_vectors(soneira_peebles(n, 3, c.radius, c, rng, [&] { return random_unit_vector(rng); }));
}

}  // namespace twobody
