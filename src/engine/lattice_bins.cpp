// bin_sources (lattice_bins.hpp): the counting sort of a lattice map's sources into its bins.
#include "twobody/detail/engine/lattice_bins.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "twobody/detail/engine/lattice_screen.hpp"

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
  // Each bin's start is its cursor while the sources are placed (no second array of bins + 1
  // offsets: MRI's 256³ bins are 134 MB); it ends at the next bin's start, so the array is then
  // shifted up by one.
  for (std::size_t i = 0; i < n; ++i) {
    if (bin[i] < 0) continue;
    Source& s = out.sources[out.start[static_cast<std::size_t>(bin[i])]++];
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
  std::copy_backward(out.start.begin(), out.start.end() - 1, out.start.end());
  out.start[0] = 0;
  return out;
}

void write_values(const LatticePlan& plan, const unsigned char* sums, const std::vector<std::uint8_t>& mask, LatticeMap& out) {
  const std::uint64_t nodes = plan.stat->lattice.nodes();
  const int comps = plan.components;
  const bool single = plan.stat->precision == Precision::Single;
  const std::size_t width = single ? sizeof(std::int64_t) : sizeof(FixedSum);
  const bool masked = !mask.empty();
  out.values.resize(nodes * static_cast<std::uint64_t>(comps));
  out.excluded.assign(masked ? nodes : 0, 0);
  std::uint64_t excluded = 0;
#pragma omp parallel for schedule(static) num_threads(plan.threads) reduction(+ : excluded)
  for (std::uint64_t at = 0; at < nodes; ++at) {
    const bool ex = masked && mask[at];
    if (masked) out.excluded[at] = ex ? 1 : 0;
    excluded += ex;
    for (int c = 0; c < comps; ++c) {
      const std::uint64_t slot = at * static_cast<std::uint64_t>(comps) + static_cast<std::uint64_t>(c);
      FixedSum sum;
      if (single) {
        std::int64_t v;
        std::memcpy(&v, sums + slot * width, sizeof v);
        sum = static_cast<FixedSum>(v);
      } else {
        std::memcpy(&sum, sums + slot * width, sizeof sum);
      }
      double v = ex ? 0.0 : plan.grid.value(sum);
      if (single) v = static_cast<double>(static_cast<float>(v));
      out.values[slot] = v;
    }
  }
  out.excluded_count = excluded;
  if (excluded == 0) out.excluded.clear();
}

namespace {

// v as a float32 no smaller (up) or no larger (down) than v.
float rounded(double v, bool up) {
  float f = static_cast<float>(v);
  if (up && static_cast<double>(f) < v) f = std::nextafter(f, INFINITY);
  if (!up && static_cast<double>(f) > v) f = std::nextafter(f, -INFINITY);
  return f;
}

}  // namespace

// The margins (u = 2^-53, C the cutoff, h_k the spacing, S the plan's coordinate scale). The
// rule's displacement d_k = fl64(x − node) (after the wrap) is within 3uS + 2u|d| of the exact
// one; the screen's dk = fl32(fl32(f − m)·fl32(h)) is within 2uS + 2^-24·h (f's own rounding) +
// 3·2^-24·|dk| of it, so near the cutoff |dk − d_k| ≤ 5uS + 2^-22·(C + 2h), below
// ε = 2^-21·(C + 3h) + 2^-47·S. A pair's squares then differ by ε·(2|d| + ε) an axis, the float32
// squares and sum add 3·2^-24 relative, the float64 ones 3u: beyond T + E, with
// E = 3ε(2√T + ε) + 2^-20·T, scaled by 1 + 2^-20, r² ≥ T in float64; below T − E, scaled by
// 1 − 2^-20, r² < T (T = fl64(C²), or the exclusion's fl64(R²)). Along one axis (separable
// support), |dk| < C − ε gives |d| < C and |dk| ≥ C + ε gives |d| ≥ C. A periodic axis takes one
// image per tile (tile_source): the image within C of any node of the tile is within C + 4.5h of
// the tile's centre, and is the one nearest it when the period exceeds 2(C + 6h).
PairScreen make_pair_screen(const LatticePlan& plan, int tile) {
  const Lattice& L = plan.stat->lattice;
  const LatticeFunction& fn = plan.stat->function;
  PairScreen s;
  s.dim = L.dim;
  s.ball = fn.support == Support::Ball;
  s.coulomb = fn.kind == LatticeKernel::CoulombSwitched;
  const double C = fn.cutoff, S = plan.coordinate_scale;
  double eps = 0;
  bool on = std::isfinite(S) && S >= 0;
  for (int k = 0; k < 3; ++k) {
    s.h[k] = static_cast<float>(L.spacing[k]);
    if (k >= L.dim) continue;
    eps = std::max(eps, 0x1p-21 * (C + 3 * L.spacing[k]) + 0x1p-47 * S);
    if (L.periodic[k] && !(L.period(k) > 2 * (C + (0.5 * tile + 2) * L.spacing[k]))) on = false;
  }
  const auto band = [&](double T) { return 3 * eps * (2 * std::sqrt(T) + eps) + 0x1p-20 * T; };
  if (s.ball) {
    const double T = C * C, E = band(T);
    on = on && E < 0.25 * T;
    s.out_sq = rounded((T + E) * (1 + 0x1p-20), true);
    s.in_sq = rounded((T - E) * (1 - 0x1p-20), false);
    if (s.coulomb) {
      const double X = fn.exclusion * fn.exclusion, Ex = band(X);
      s.ex_in = rounded((X - Ex) * (1 - 0x1p-20), false);
      s.ex_out = rounded((X + Ex) * (1 + 0x1p-20), true);
    }
  } else {
    on = on && eps < 0.25 * C;
    s.out_sq = rounded((C + eps) * (C + eps) * (1 + 0x1p-20), true);
    s.in_sq = rounded((C - eps) * (C - eps) * (1 - 0x1p-20), false);
  }
  s.on = on && std::isfinite(s.out_sq) && s.in_sq > 0;
  return s;
}

}  // namespace twobody::lattice
