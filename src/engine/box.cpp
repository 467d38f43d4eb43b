#include "twobody/box.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <fmt/format.h>

#include "twobody/error.hpp"

namespace twobody {

Box Box::from_lengths(std::span<const double> lengths) {
  if (lengths.empty() || lengths.size() > static_cast<std::size_t>(kMaxDim))
    throw_config(fmt::format("a box needs 1 to {} side lengths, got {}", kMaxDim, lengths.size()));
  Box b;
  b.dim = static_cast<int>(lengths.size());
  for (int d = 0; d < b.dim; ++d) {
    if (!(std::isfinite(lengths[d]) && lengths[d] > 0))
      throw_config(fmt::format("box side {} must be positive and finite, not {}", d + 1, lengths[d]));
    b.length[d] = lengths[d];
  }
  return b;
}

Box Box::cube(int dim, double side) {
  std::array<double, kMaxDim> l{};
  std::fill(l.begin(), l.end(), side);
  return from_lengths(std::span<const double>(l.data(), static_cast<std::size_t>(dim)));
}

Box Box::from_matrix(std::span<const double> m) {
  if (m.size() != 9) throw_config(fmt::format("a triclinic cell matrix has 9 entries (3 rows a, b, c), not {}", m.size()));
  for (std::size_t k = 0; k < 9; ++k)
    if (!std::isfinite(m[k])) throw_config(fmt::format("cell matrix entry {} is not finite ({})", k + 1, m[k]));
  if (m[1] != 0 || m[2] != 0 || m[5] != 0)
    throw_config(fmt::format("the cell matrix must be lower-triangular (a = (ax, 0, 0), b = (bx, by, 0), c = (cx, cy, cz), "
                             "as GROMACS, LAMMPS and MDAnalysis write it), but a = ({}, {}, {}), b = ({}, {}, {}): "
                             "rotate the cell and the points into that frame",
                             m[0], m[1], m[2], m[3], m[4], m[5]));
  if (!(m[0] > 0 && m[4] > 0 && m[8] > 0))
    throw_config(fmt::format("the cell matrix needs a positive diagonal (ax, by, cz), not ({}, {}, {}): a right-handed "
                             "cell of positive volume",
                             m[0], m[4], m[8]));
  Box b;
  b.dim = 3;
  b.length[0] = m[0];
  b.length[1] = m[4];
  b.length[2] = m[8];
  b.xy = m[3];
  b.xz = m[6];
  b.yz = m[7];
  return b;
}

Box Box::from_dimensions(std::span<const double, 6> v) {
  for (int k = 0; k < 3; ++k)
    if (!(std::isfinite(v[k]) && v[k] > 0))
      throw_config(fmt::format("cell length {} must be positive and finite, not {}", "abc"[k], v[k]));
  static constexpr const char* names[] = {"alpha", "beta", "gamma"};
  for (int k = 3; k < 6; ++k)
    if (!(v[k] > 0 && v[k] < 180))
      throw_config(fmt::format("cell angle {} must lie in (0, 180) degrees, not {}", names[k - 3], v[k]));
  const double lx = v[0], ly = v[1], lz = v[2], alpha = v[3], beta = v[4], gamma = v[5];
  const double deg = std::numbers::pi / 180.0;
  if (alpha == 90.0 && beta == 90.0 && gamma == 90.0) {
    const double l[3] = {lx, ly, lz};
    return from_lengths(l);
  }
  // MDAnalysis' triclinic_vectors, step for step (exact values for right angles).
  const double cos_alpha = alpha == 90.0 ? 0.0 : std::cos(alpha * deg);
  const double cos_beta = beta == 90.0 ? 0.0 : std::cos(beta * deg);
  const double cos_gamma = gamma == 90.0 ? 0.0 : std::cos(gamma * deg);
  const double sin_gamma = gamma == 90.0 ? 1.0 : std::sin(gamma * deg);
  const double bx = ly * cos_gamma, by = ly * sin_gamma;
  const double cx = lz * cos_beta;
  const double cy = lz * (cos_alpha - cos_beta * cos_gamma) / sin_gamma;
  const double cz = std::sqrt(lz * lz - cx * cx - cy * cy);
  if (!(cz > 0))
    throw_config(fmt::format("cell angles alpha {}, beta {}, gamma {} make no cell (each angle must be less than the sum "
                             "of the other two, and the three less than 360)",
                             alpha, beta, gamma));
  const double m[9] = {lx, 0, 0, bx, by, 0, cx, cy, cz};
  return from_matrix(m);
}

Box Box::from_values(std::span<const double> v, int dim) {
  if (v.size() == 1) return cube(dim, v[0]);
  if (static_cast<int>(v.size()) == dim) return from_lengths(v);
  if (dim == 3 && v.size() == 6) return from_dimensions(std::span<const double, 6>(v.data(), 6));
  if (dim == 3 && v.size() == 9) return from_matrix(v);
  throw_config(fmt::format("a box for {}-D points takes 1 value (a cube) or {} (the sides){}, not {}", dim, dim,
                           dim == 3 ? ", 6 (a, b, c, alpha, beta, gamma: a triclinic cell) or 9 (the cell matrix, rows a, b, c)"
                                    : "",
                           v.size()));
}

double Box::min_length() const { return *std::min_element(length.begin(), length.begin() + dim); }

double Box::volume() const {
  double v = 1;
  for (int d = 0; d < dim; ++d) v *= length[d];
  return v;
}

std::array<double, 3> Box::face_distances() const {
  if (!triclinic()) return {length[0], length[1], length[2]};
  const double ax = length[0], by = length[1], cz = length[2];
  // |b x c|, |c x a|, |a x b| for the lower-triangular rows; the volume is ax by cz.
  const double bc = std::hypot(by * cz, xy * cz, xy * yz - by * xz);
  const double ca = ax * std::hypot(cz, yz);
  const double v = ax * by * cz;
  return {v / bc, v / ca, cz};
}

double Box::max_cutoff() const {
  if (!triclinic()) return 0.5 * min_length();
  const auto h = face_distances();
  return 0.5 * std::min({h[0], h[1], h[2]});
}

std::array<double, 3> Box::cell_coordinates(double x, double y, double z) const {
  const double sc = z / length[2];
  const double sb = (y - sc * yz) / length[1];
  const double sa = (x - sb * xy - sc * xz) / length[0];
  return {sa, sb, sc};
}

std::string Box::describe() const {
  if (triclinic())
    return fmt::format("triclinic a = ({}, 0, 0), b = ({}, {}, 0), c = ({}, {}, {})", length[0], xy, length[1], xz, yz,
                       length[2]);
  std::string s;
  for (int d = 0; d < dim; ++d) s += (d ? " x " : "") + fmt::format("{}", length[d]);
  return s;
}

}  // namespace twobody
