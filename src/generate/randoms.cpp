// Random catalogues matched to a data catalogue: uniform over its sky mask or its box, with the
// radial values of survey mocks drawn from the data's own (the "shuffled" randoms).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "twobody/detail/generate/rng.hpp"
#include "twobody/error.hpp"
#include "twobody/generate.hpp"

namespace twobody {

namespace {

// The index of one of m items, uniform (m < 2^53).
std::size_t uniform_index(Rng& rng, std::size_t m) {
  return std::min(m - 1, static_cast<std::size_t>(rng.uniform() * static_cast<double>(m)));
}

// A point uniform in `mask`, as (RA, Dec): the pixel first, then a point inside it. A point that
// rounding puts across the pixel's edge (asin, then sin again, can move it by an ulp) is drawn
// again inside the same pixel, so that every point lies in a pixel of the mask.
std::array<double, 2> draw_in_mask(const SkyMask& mask, Rng& rng) {
  const std::uint64_t p = mask.occupied()[uniform_index(rng, mask.occupied().size())];
  for (;;) {
    const double u_ra = rng.uniform(), u_sin = rng.uniform();
    const auto x = mask.uniform_in(p, u_ra, u_sin);
    if (mask.pixel_of(x[0], x[1]) == p) return x;
  }
}

PointSet first_two_columns(const PointSet& p) {
  PointSet q(2, p.size());
  for (int d = 0; d < 2; ++d) std::copy(p.coord(d).begin(), p.coord(d).end(), q.coord(d).begin());
  return q;
}

GeneratedRandoms randoms_in_box(const PointSet& data, std::size_t n, const RandomsLike& how, std::uint64_t seed) {
  const int dim = data.dim();
  std::vector<double> lo(dim, 0.0), hi(dim);
  std::string where;
  if (!how.box.empty()) {
    if (static_cast<int>(how.box.size()) != dim)
      throw_config(fmt::format("the box has {} lengths but the data have {} coordinates", how.box.size(), dim));
    for (int d = 0; d < dim; ++d) {
      if (!(how.box[d] > 0) || !std::isfinite(how.box[d]))
        throw_config(fmt::format("the box lengths must be positive and finite, not {}", how.box[d]));
      hi[d] = how.box[d];
      const auto [a, b] = joint_range(data, data, d);
      if (a < 0 || b > hi[d])
        throw_input(fmt::format("the data's coordinate {} spans [{}, {}], outside the box [0, {}): randoms in the box "
                                "would not match them",
                                d + 1, a, b, hi[d]));
      where += fmt::format("{}[0, {})", d ? " x " : "", hi[d]);
    }
    return {generate_randoms_in_range(n, lo, hi, seed), "uniform in the box " + where};
  }
  for (int d = 0; d < dim; ++d) {
    std::tie(lo[d], hi[d]) = joint_range(data, data, d);
    where += fmt::format("{}[{}, {})", d ? " x " : "", lo[d], hi[d]);
  }
  return {generate_randoms_in_range(n, lo, hi, seed),
          "uniform in the data's bounding box " + where + " (no --box given)"};
}

}  // namespace

PointSet generate_randoms_in_mask(const SkyMask& mask, std::size_t n, std::uint64_t seed) {
  if (n == 0) throw_config("the number of random points must be positive");
  Rng rng(seed);
  PointSet p(2, n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = draw_in_mask(mask, rng);
    p.coord(0)[i] = x[0];
    p.coord(1)[i] = x[1];
  }
  return p;
}

PointSet generate_randoms_in_range(std::size_t n, const std::vector<double>& lo, const std::vector<double>& hi,
                                   std::uint64_t seed) {
  if (n == 0) throw_config("the number of random points must be positive");
  const int dim = static_cast<int>(lo.size());
  if (dim < 1 || dim > kMaxDim || hi.size() != lo.size())
    throw_config(fmt::format("a range needs 1 to {} dimensions, as many lows as highs", kMaxDim));
  Rng rng(seed);
  PointSet p(dim, n);
  for (std::size_t i = 0; i < n; ++i)
    for (int d = 0; d < dim; ++d) {
      // lo + (hi − lo)·u can round up to hi: such a point takes the largest value below it.
      const double x = lo[d] + (hi[d] - lo[d]) * rng.uniform();
      p.coord(d)[i] = hi[d] > lo[d] ? std::min(x, std::nextafter(hi[d], lo[d])) : lo[d];
    }
  return p;
}

GeneratedRandoms generate_randoms_like(const PointSet& data, std::size_t n, const RandomsLike& how,
                                       std::uint64_t seed) {
  if (n == 0) throw_config("the number of random points must be positive");
  if (data.size() == 0) throw_input("the data catalogue is empty: no footprint to draw randoms in");
  using F = RandomsLike::Footprint;
  if (how.footprint == F::Box) return randoms_in_box(data, n, how, seed);
  const bool mocks = how.footprint == F::Mocks;
  if (data.dim() != (mocks ? 3 : 2))
    throw_config(mocks ? fmt::format("mocks are RA, Dec and a radial column: 3 coordinates, the data have {}",
                                     data.dim())
                       : fmt::format("sky catalogues are RA, Dec: 2 coordinates, the data have {}", data.dim()));
  const SkyMask mask(mocks ? first_two_columns(data) : data, how.resolution_deg, how.min_count);
  GeneratedRandoms out;
  out.note = "sky mask: " + mask.describe();
  if (!mocks) {
    out.points = generate_randoms_in_mask(mask, n, seed);
    return out;
  }
  // Angles and the data point lending its radial value (and weight) from one stream, point by point.
  Rng rng(seed);
  out.points = PointSet(3, n);
  std::vector<double> w(data.has_weights() ? n : 0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = draw_in_mask(mask, rng);
    const std::size_t j = uniform_index(rng, data.size());
    out.points.coord(0)[i] = x[0];
    out.points.coord(1)[i] = x[1];
    out.points.coord(2)[i] = data.coord(2)[j];
    if (!w.empty()) w[i] = data.weights()[j];
  }
  if (!w.empty()) out.points.set_weights(std::move(w));
  out.note += fmt::format("; radial column drawn from the data's {} values with replacement{}", data.size(),
                          data.has_weights() ? ", each with its point's weight" : "");
  return out;
}

}  // namespace twobody
