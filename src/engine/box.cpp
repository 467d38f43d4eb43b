#include "twobody/box.hpp"

#include <algorithm>
#include <cmath>
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

double Box::min_length() const { return *std::min_element(length.begin(), length.begin() + dim); }

double Box::volume() const {
  double v = 1;
  for (int d = 0; d < dim; ++d) v *= length[d];
  return v;
}

std::string Box::describe() const {
  std::string s;
  for (int d = 0; d < dim; ++d) s += (d ? " x " : "") + fmt::format("{}", length[d]);
  return s;
}

}  // namespace twobody
