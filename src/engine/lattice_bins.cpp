// bin_sources (lattice_bins.hpp): the counting sort of a lattice map's sources into its bins.
#include "twobody/detail/engine/lattice_bins.hpp"

#include <fmt/format.h>

#include "twobody/error.hpp"
#include "twobody/points.hpp"

namespace twobody::lattice {

Binned bin_sources(const LatticePlan& plan) {
  const Lattice& L = plan.stat->lattice;
  const LatticeFunction& fn = plan.stat->function;
  const LatticeSources& src = *plan.sources;
  const PointSet& p = *src.points;
  Binned out;
  for (int k = 0; k < 3; ++k) {
    AxisBins& a = out.axis[k];
    a.n = L.shape[k];
    a.periodic = k < L.dim && L.periodic[k];
    a.nodes = k < L.dim ? plan.bin_nodes : 1;
    a.reach = k < L.dim ? static_cast<std::int64_t>(std::ceil(fn.cutoff / L.spacing[k])) + 1 : 0;
    a.first = a.periodic ? 0 : -a.reach;
    a.nb = a.periodic ? (a.n + a.nodes - 1) / a.nodes : (a.n + 2 * a.reach + a.nodes - 1) / a.nodes;
  }
  // A cutoff of very many spacings makes the bins reach far beyond the lattice: refuse before the
  // offsets' array (8 bytes a bin) is asked for.
  const double many = static_cast<double>(out.axis[0].nb) * static_cast<double>(out.axis[1].nb) * static_cast<double>(out.axis[2].nb);
  if (many > 0x1p32)
    throw Error(ErrorKind::Resource, fmt::format("the cutoff reaches {:.3g} bins of {} nodes around the lattice: use a coarser "
                                                 "spacing or a smaller cutoff", many, plan.bin_nodes));
  const std::size_t n = p.size();
  std::vector<std::int64_t> bin(n);
  const std::uint64_t bins = static_cast<std::uint64_t>(out.axis[0].nb * out.axis[1].nb * out.axis[2].nb);
#pragma omp parallel for schedule(static) num_threads(plan.threads)
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t b[3] = {0, 0, 0};
    bool keep = true;
    for (int k = 0; k < L.dim; ++k) {
      b[k] = out.axis[k].bin_of((p.coord(k)[i] - L.origin[k]) / L.spacing[k]);
      keep = keep && b[k] >= 0;
    }
    bin[i] = keep ? static_cast<std::int64_t>(out.bin_id(b[0], b[1], b[2])) : -1;
  }
  out.start.assign(bins + 1, 0);
  for (std::size_t i = 0; i < n; ++i)
    if (bin[i] >= 0) ++out.start[static_cast<std::size_t>(bin[i]) + 1];
  for (std::uint64_t b = 0; b < bins; ++b) out.start[b + 1] += out.start[b];
  out.sources.resize(out.start[bins]);
  std::vector<std::uint64_t> slot(out.start.begin(), out.start.end() - 1);
  for (std::size_t i = 0; i < n; ++i) {
    if (bin[i] < 0) continue;
    Source& s = out.sources[slot[static_cast<std::size_t>(bin[i])]++];
    for (int k = 0; k < 3; ++k) {
      s.x[k] = 0;
      s.b[k] = 0;
      s.f[k] = 0;
    }
    for (int k = 0; k < L.dim; ++k) {
      const double x = p.coord(k)[i];
      s.x[k] = x;
      s.b[k] = static_cast<std::int64_t>(std::floor((x - L.origin[k]) / L.spacing[k]));
      s.f[k] = static_cast<float>((x - L.node(k, s.b[k])) / L.spacing[k]);
    }
    s.re = src.strength.empty() ? 1.0 : src.strength[i];
    s.im = src.strength_im.empty() ? 0.0 : src.strength_im[i];
    s.aux = src.radius.empty() ? 0.0 : src.radius[i] * src.radius[i];
  }
  return out;
}

}  // namespace twobody::lattice
