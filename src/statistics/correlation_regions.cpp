// A correlation function's jackknife regions: the per-region sums its normalisations leave a
// region out of, and how its catalogues are labelled (their own labels, k-means on the sky, or
// equal cells of the box or of the catalogues' joint bounding box).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "twobody/detail/statistics/correlation_counts.hpp"
#include "twobody/error.hpp"

namespace twobody::detail {

RegionSums::RegionSums(const PointSet& p, std::size_t R) : n(R, 0.0), w(R, 0.0), w2(R, 0.0) {
  const auto l = p.regions();
  for (std::size_t i = 0; i < p.size(); ++i) {
    n[l[i]] += 1;
    if (p.has_weights()) {
      w[l[i]] += p.weights()[i];
      w2[l[i]] += p.weights()[i] * p.weights()[i];
    }
  }
  for (std::size_t r = 0; r < R; ++r) {
    total_n += n[r];
    total_w += w[r];
    total_w2 += w2[r];
  }
}

double RegionSums::auto_norm(std::size_t r, bool weighted) const {
  if (!weighted) {
    const double m = total_n - n[r];
    return 0.5 * m * (m - 1);
  }
  const double s = total_w - w[r];
  return 0.5 * (s * s - (total_w2 - w2[r]));
}

std::vector<std::int32_t> RegionLabeller::label(const PointSet& given, const PointSet& prepared,
                                                const std::string& which) const {
  if (numbering) return numbering->number(given, which);
  if (cells) return cell_regions(prepared, *cells);
  if (!space_centres.empty()) return nearest_space_centre(prepared, space_centres);
  return nearest_centre(prepared, centres);
}

PointSet fitting_sample(const std::vector<const PointSet*>& sets, int regions) {
  const std::size_t budget = std::max<std::size_t>(20000, 1000 * static_cast<std::size_t>(std::max(regions, 0)));
  std::size_t total = 0;
  for (const PointSet* s : sets) total += s->size();
  const std::size_t stride = std::max<std::size_t>(1, (total + budget - 1) / budget);
  const int dim = sets.empty() ? 0 : sets.front()->dim();
  std::vector<std::vector<double>> cols(dim);
  std::size_t at = 0;  // the index of the current set's first point in the joined catalogues
  for (const PointSet* s : sets) {
    if (s->dim() != dim) continue;  // the engine reports the mismatch
    for (std::size_t i = (at + stride - 1) / stride * stride - at; i < s->size(); i += stride)
      for (int d = 0; d < dim; ++d) cols[d].push_back(s->coord(d)[i]);
    at += s->size();
  }
  PointSet p(dim, dim ? cols[0].size() : 0);
  for (int d = 0; d < dim; ++d) std::copy(cols[d].begin(), cols[d].end(), p.coord(d).begin());
  return p;
}

// Unit vectors from the observer at the origin to each point (survey mocks): the directions
// sky regions are fitted on. A point at the origin keeps (0, 0, 0).
PointSet directions(const PointSet& p) {
  PointSet u(3, p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double x = p.coord(0)[i], y = p.coord(1)[i], z = p.coord(2)[i];
    const double n = std::sqrt(x * x + y * y + z * z);
    const double f = n > 0 ? 1 / n : 0.0;
    u.coord(0)[i] = x * f;
    u.coord(1)[i] = y * f;
    u.coord(2)[i] = z * f;
  }
  return u;
}

RegionLabeller make_labeller(const JackknifeRequest& jk, CorrelationSpace space, const std::optional<Box>& box,
                             const PointSet& data, const PointSet& unit_data, const std::vector<const PointSet*>& others,
                             const SavedCounts* reuse, const RegionFit& fit) {
  RegionLabeller L;
  if (jk.use_labels && jk.regions != 0)
    throw_config("give the regions either as labels or as a number to assign automatically, not both");
  if (jk.use_labels) {
    L.numbering = number_regions(data);
    L.regions = L.numbering->labels.size();
    L.layout = fmt::format("{} regions from the catalogues' labels ({} to {})", L.regions, L.numbering->labels.front(),
                           L.numbering->labels.back());
    return L;
  }
  if (jk.regions < 2) throw_config(fmt::format("a jackknife needs at least 2 regions, not {}", jk.regions));
  // (A periodic box keeps its equal cells: no sample needed.)
  const PointSet sample = space == CorrelationSpace::Box ? PointSet() : fitting_sample(fit.randoms, jk.regions);
  if (space == CorrelationSpace::Sky) {
    // With a saved RR counted in sky regions of as many centres: its centres (check_reusable
    // compares the rest of the setting, the random catalogues' hash among it); else k-means on
    // this run's randoms, or data.
    const bool saved = reuse && reuse->jackknife && reuse->jackknife->centres.size() == static_cast<std::size_t>(jk.regions);
    L.fitted_on_data = sample.size() == 0;
    if (saved)
      L.centres = reuse->jackknife->centres;
    else
      L.centres = sky_region_centres(L.fitted_on_data ? unit_data : fit.to_unit(sample), jk.regions, jk.seed);
    L.regions = L.centres.size();
    L.layout = L.fitted_on_data
                   ? fmt::format("{} sky regions by k-means on the data's unit vectors (seed {}); randoms take the nearest",
                                 L.regions, jk.seed)
                   : fmt::format("{} sky regions by k-means on {} points of the random catalogues' unit vectors (seed {}); "
                                 "every catalogue takes the nearest",
                                 L.regions, sample.size(), jk.seed);
    return L;
  }
  if (space == CorrelationSpace::Open && sample.size() > 0) {
    L.space_centres = space_region_centres(sample, jk.regions, jk.seed);
    L.regions = L.space_centres.size();
    L.layout = fmt::format("{} regions by k-means on {} points of the random catalogues (seed {}); every catalogue "
                           "takes the nearest",
                           L.regions, sample.size(), jk.seed);
    return L;
  }
  const int dim = data.dim();
  std::vector<double> lo(dim), hi(dim);
  for (int d = 0; d < dim; ++d) {
    if (space == CorrelationSpace::Box) {
      lo[d] = 0;
      hi[d] = box->length[d];
      continue;
    }
    std::tie(lo[d], hi[d]) = joint_range(data, data, d);
    for (const PointSet* r : others) {
      if (r->dim() != dim) continue;  // the engine reports the mismatch
      const auto [a, b] = joint_range(*r, *r, d);
      lo[d] = std::min(lo[d], a);
      hi[d] = std::max(hi[d], b);
    }
  }
  L.cells = cell_layout(jk.regions, lo, hi);
  L.regions = static_cast<std::size_t>(L.cells->total());
  L.layout = L.cells->describe();
  return L;
}

}  // namespace twobody::detail
