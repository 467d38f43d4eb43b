// bin_sources (lattice_bins.hpp): a lattice map's sources sorted into its bins (a stable radix
// sort on the run's threads), and write_wide_values and make_pair_screen beside it.
#include "twobody/detail/engine/lattice_bins.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "twobody/detail/engine/lattice_screen.hpp"
#include "twobody/error.hpp"
#include "twobody/points.hpp"

namespace twobody::lattice {

namespace {

struct BinnedSource {
  std::uint64_t source;
  std::uint32_t bin;
};

// Sorts by bin, stably: a least-significant-digit radix sort of 11 bits a pass on `threads`
// threads, each pass one sequential read and 2 048 streams of writes. (A counting sort straight
// into the bins scattered each source to a random one of up to 2^24 bins' cursors and slots,
// missing the caches twice a source: most of MRI gridding's binning.) Stable because each thread
// takes a contiguous range of the input and the ranges' digits are laid out in thread order.
void sort_by_bin(std::vector<BinnedSource>& v, std::uint64_t bins, int threads) {
  constexpr int kBits = 11, kDigits = 1 << kBits;
  int bits = 0;
  while (bits < 32 && (std::uint64_t{1} << bits) < bins) ++bits;
  std::vector<BinnedSource> other(v.size());
  std::vector<std::size_t> offsets(static_cast<std::size_t>(threads) * kDigits);
  const std::size_t n = v.size();
  for (int shift = 0; shift < bits; shift += kBits) {
    const BinnedSource* in = v.data();
    BinnedSource* out = other.data();
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      const std::size_t lo = n * static_cast<std::size_t>(t) / static_cast<std::size_t>(nt);
      const std::size_t hi = n * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(nt);
      std::size_t* mine = offsets.data() + static_cast<std::size_t>(t) * kDigits;
      std::fill(mine, mine + kDigits, std::size_t{0});
      for (std::size_t i = lo; i < hi; ++i) ++mine[(in[i].bin >> shift) & (kDigits - 1)];
#pragma omp barrier
#pragma omp single
      {
        std::size_t at = 0;
        for (int d = 0; d < kDigits; ++d)
          for (int u = 0; u < nt; ++u) {
            std::size_t& c = offsets[static_cast<std::size_t>(u) * kDigits + static_cast<std::size_t>(d)];
            const std::size_t count = c;
            c = at;
            at += count;
          }
      }
      for (std::size_t i = lo; i < hi; ++i) out[mine[(in[i].bin >> shift) & (kDigits - 1)]++] = in[i];
    }
    v.swap(other);
  }
}

}  // namespace

std::array<AxisBins, 3> axis_bins(const LatticePlan& plan) {
  const Lattice& L = plan.stat->lattice;
  const LatticeFunction& fn = plan.stat->function;
  std::array<AxisBins, 3> axis;
  for (int k = 0; k < 3; ++k) {
    AxisBins& a = axis[k];
    a.n = L.shape[k];
    a.periodic = k < L.dim && L.periodic[k];
    a.nodes = k < L.dim ? plan.bin_nodes : 1;
    a.reach = k < L.dim ? static_cast<std::int64_t>(std::ceil(fn.cutoff / L.spacing[k])) + 1 : 0;
    a.first = a.periodic ? 0 : -a.reach;
    a.nb = a.periodic ? (a.n + a.nodes - 1) / a.nodes : (a.n + 2 * a.reach + a.nodes - 1) / a.nodes;
  }
  // A cutoff of very many spacings makes the bins reach far beyond the lattice: refuse before the
  // offsets' array (8 bytes a bin) is asked for.
  const double many = static_cast<double>(axis[0].nb) * static_cast<double>(axis[1].nb) * static_cast<double>(axis[2].nb);
  if (many > 0x1p32)
    throw Error(ErrorKind::Resource, fmt::format("the cutoff reaches {:.3g} bins of {} nodes around the lattice: use a coarser "
                                                 "spacing or a smaller cutoff", many, plan.bin_nodes));
  return axis;
}

Binned bin_sources(const LatticePlan& plan) {
  const Lattice& L = plan.stat->lattice;
  const LatticeSources& src = *plan.sources;
  const PointSet& p = *src.points;
  Binned out;
  out.axis = axis_bins(plan);
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
  // The kept sources in order of bin, each bin's in input order (sort_by_bin), then each placed
  // and its offsets worked out on the run's threads.
  std::vector<BinnedSource> order;
  order.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    if (bin[i] >= 0) order.push_back({static_cast<std::uint64_t>(i), static_cast<std::uint32_t>(bin[i])});
  sort_by_bin(order, bins, plan.threads);
  const std::size_t kept = order.size();
  out.sources.resize(kept);   // not zeroed: every field of every source is written below, and
  out.start.resize(bins + 1);  // every offset, on the threads (their first touches in parallel)
#pragma omp parallel for schedule(static) num_threads(plan.threads)
  for (std::size_t j = 0; j < kept; ++j) {
    const std::size_t i = static_cast<std::size_t>(order[j].source);
    Source& s = out.sources[j];
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
    // Bins up to this source's start here: those after the previous source's bin.
    const std::uint64_t from = j == 0 ? 0 : std::uint64_t{order[j - 1].bin} + 1;
    for (std::uint64_t b = from; b <= order[j].bin; ++b) out.start[b] = j;
  }
  const std::uint64_t after = kept == 0 ? 0 : std::uint64_t{order[kept - 1].bin} + 1;
  std::fill(out.start.begin() + static_cast<std::ptrdiff_t>(after), out.start.end(), kept);
  return out;
}

void write_wide_values(const LatticePlan& plan, const unsigned char* sums, const std::vector<std::uint8_t>& mask,
                       LatticeMap& out) {
  const std::uint64_t nodes = plan.stat->lattice.nodes();
  const int comps = plan.components;
  out.values.resize(nodes * static_cast<std::uint64_t>(comps));
  out.excluded.assign(mask.begin(), mask.end());
#pragma omp parallel for schedule(static) num_threads(plan.threads)
  for (std::uint64_t at = 0; at < nodes; ++at) {
    const bool ex = !mask.empty() && mask[at];
    for (int c = 0; c < comps; ++c) {
      const std::uint64_t slot = at * static_cast<std::uint64_t>(comps) + static_cast<std::uint64_t>(c);
      FixedSum sum;
      std::memcpy(&sum, sums + slot * sizeof(FixedSum), sizeof sum);
      out.values[slot] = node_value(plan.grid, sum, ex, false);
    }
  }
  finish_mask(out);
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
// rule's displacement d_k = fl64(x − node), after the wrap (whose period fl(n·h) and product
// w·fl(n·h) add their roundings), is within about 7uS + 2u|d| of the exact one; the screen's
// dk = fl32(fl32(f − m)·fl32(h)) is within 2uS + 2^-24·h·|f| (f's own rounding; f is in about
// [−1/8, 9/8] even where b is a rounding off) + 3·2^-24·|dk| of it, so near the cutoff
// |dk − d_k| < 10uS + 2^-22·(C + 2h), below ε = 2^-21·(C + 3h) + 2^-47·S (2^-47·S = 64uS). A pair's squares then differ by ε·(2|d| + ε) an axis, the float32
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
    // The tile-relative floor nodes and node differences must be exact in float32 (validate caps
    // the cutoff at 2^20 spacings; this keeps the screen right should that cap move).
    if (!(C / L.spacing[k] + tile + 2 < 0x1p23)) on = false;
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
