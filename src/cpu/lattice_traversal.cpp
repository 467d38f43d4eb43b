// The CPU's lattice traversal (seed 002's gather with compact binning): the sources are counted
// into bins aligned to the lattice's nodes (a counting sort, x fastest, so a row of bins along x
// is one contiguous range of sources: the seed's range access), and each thread owns tiles of
// 8×8×8 nodes whose sums it keeps in its own integer accumulators (no atomics, no privatised map).
// For each tile the bins within the cutoff of it are visited row by row; every (source, node)
// pair is decided by the float64 rule and its term added onto the run's sum grid, so the map does
// not depend on the bin size, the tiles or the threads.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <vector>

#include "twobody/detail/engine/lattice_plan.hpp"
#include "twobody/extend/lattice_function.hpp"

namespace twobody::cpu {

namespace {

constexpr int kTile = 8;

// One source in bin order, with what both precisions read.
struct Source {
  double x[3];         // float64 position
  std::int64_t b[3];   // its floor node: floor((x − o) / h)
  float f[3];          // fl32((x − node(b)) / h): its offset from that node, in spacings (Single)
  double re, im, aux;  // strength, imaginary part, Blinn's R²
};

// Axis k's bins: boxes of `nodes` lattice cells; bin 0 starts at node `first` (negative on an open
// axis, whose bins reach `reach` nodes beyond the lattice so that sources just outside it count).
struct AxisBins {
  std::int64_t n = 1, first = 0, reach = 0, nb = 1, nodes = 1;
  bool periodic = false;
  // The bin of a source at t = (x − o)/h, or −1 when it is too far from the lattice to matter.
  std::int64_t bin_of(double t) const {
    if (periodic) {
      double tw = t - std::floor(t / static_cast<double>(n)) * static_cast<double>(n);
      const auto b = static_cast<std::int64_t>(std::floor(tw / static_cast<double>(nodes)));
      return std::clamp<std::int64_t>(b, 0, nb - 1);
    }
    if (!(t > static_cast<double>(-reach)) || !(t < static_cast<double>(n - 1 + reach))) return -1;
    const auto b = static_cast<std::int64_t>(std::floor((t - static_cast<double>(first)) / static_cast<double>(nodes)));
    return std::clamp<std::int64_t>(b, 0, nb - 1);
  }
  // The bins holding sources that may lie within `reach` nodes of nodes [lo, hi], as sorted
  // disjoint runs [first, last] (a periodic axis may wrap: two runs, or all bins once).
  void runs_near(std::int64_t lo, std::int64_t hi, std::vector<std::pair<std::int64_t, std::int64_t>>& out) const {
    out.clear();
    const std::int64_t plo = lo - reach, phi = hi + reach;  // node positions, a bin's slack included
    if (!periodic) {
      const std::int64_t b0 = std::max<std::int64_t>(0, (plo - first) / nodes - 1);
      const std::int64_t b1 = std::min<std::int64_t>(nb - 1, (phi - first) / nodes + 1);
      if (b0 <= b1) out.emplace_back(b0, b1);
      return;
    }
    if (phi - plo + 1 >= n) {
      out.emplace_back(0, nb - 1);
      return;
    }
    std::vector<char> mark(static_cast<std::size_t>(nb), 0);
    for (std::int64_t p = plo; p <= phi; ++p) {
      const std::int64_t w = ((p % n) + n) % n;
      mark[static_cast<std::size_t>(w / nodes)] = 1;
    }
    for (std::int64_t b = 0; b < nb;) {
      if (!mark[static_cast<std::size_t>(b)]) {
        ++b;
        continue;
      }
      std::int64_t e = b;
      while (e + 1 < nb && mark[static_cast<std::size_t>(e + 1)]) ++e;
      out.emplace_back(b, e);
      b = e + 1;
    }
  }
};

struct Binned {
  std::vector<Source> sources;          // in bin order
  std::vector<std::uint64_t> start;     // bins + 1 offsets
  AxisBins axis[3];
  std::uint64_t bin_id(std::int64_t bx, std::int64_t by, std::int64_t bz) const {
    return static_cast<std::uint64_t>(bx + axis[0].nb * (by + axis[1].nb * bz));
  }
};

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

// The sums of one tile's nodes, the tile's own.
template <class Acc>
struct TileSums {
  std::vector<Acc> acc;
  std::vector<std::uint8_t> excluded;
};

template <class F, class Acc>
void run_tiles(const LatticePlan& plan, const F& f, const Binned& bins, LatticeMap& out) {
  const Lattice& L = plan.stat->lattice;
  const LatticeFunction& fn = plan.stat->function;
  const bool single = plan.stat->precision == Precision::Single;
  const bool coulomb = fn.kind == LatticeKernel::CoulombSwitched;
  const bool ball = fn.support == Support::Ball;
  const int comps = plan.components, dim = L.dim;
  const double C = fn.cutoff, C2 = C * C, Rex2 = fn.exclusion * fn.exclusion;
  const SumGrid grid = plan.grid;
  std::int64_t tiles_per[3];
  for (int k = 0; k < 3; ++k) tiles_per[k] = (L.shape[k] + kTile - 1) / kTile;
  const std::int64_t tiles = tiles_per[0] * tiles_per[1] * tiles_per[2];
  float h32[3];
  double period[3];
  for (int k = 0; k < 3; ++k) {
    h32[k] = static_cast<float>(L.spacing[k]);
    period[k] = L.period(k);
  }
  std::atomic<std::int64_t> done{0};
  std::uint64_t terms = 0;

#pragma omp parallel num_threads(plan.threads) reduction(+ : terms)
  {
    TileSums<Acc> sums;
    std::vector<std::pair<std::int64_t, std::int64_t>> runs[3];
    // Per axis and tile node: the float64 displacement, whether |d| < C, and m = i + w·n − b.
    double d[3][kTile];
    bool near[3][kTile];
    std::int64_t m[3][kTile];
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t t = 0; t < tiles; ++t) {
      std::int64_t a[3], len[3];
      std::int64_t rest = t;
      for (int k = 0; k < 3; ++k) {
        a[k] = (rest % tiles_per[k]) * kTile;
        rest /= tiles_per[k];
        len[k] = std::min<std::int64_t>(kTile, L.shape[k] - a[k]);
      }
      const std::size_t tile_nodes = static_cast<std::size_t>(len[0] * len[1] * len[2]);
      sums.acc.assign(tile_nodes * static_cast<std::size_t>(comps), Acc(0));
      if (coulomb) sums.excluded.assign(tile_nodes, 0);
      for (int k = 0; k < 3; ++k) bins.axis[k].runs_near(a[k], a[k] + len[k] - 1, runs[k]);
      for (const auto& [z0, z1] : runs[2])
        for (std::int64_t bz = z0; bz <= z1; ++bz)
          for (const auto& [y0, y1] : runs[1])
            for (std::int64_t by = y0; by <= y1; ++by)
              for (const auto& [x0, x1] : runs[0]) {
                const std::uint64_t s0 = bins.start[bins.bin_id(x0, by, bz)];
                const std::uint64_t s1 = bins.start[bins.bin_id(x1, by, bz) + 1];
                for (std::uint64_t si = s0; si < s1; ++si) {
                  const Source& s = bins.sources[si];
                  bool any = true;
                  for (int k = 0; k < 3; ++k) {
                    bool some = false;
                    for (std::int64_t j = 0; j < len[k]; ++j) {
                      const std::int64_t i = a[k] + j;
                      if (k >= dim) {
                        d[k][j] = 0;
                        m[k][j] = 0;
                        near[k][j] = true;
                        some = true;
                        continue;
                      }
                      double dk = s.x[k] - L.node(k, i);
                      std::int64_t w = 0;
                      if (L.periodic[k]) {
                        const double wd = std::nearbyint(dk / period[k]);
                        if (wd != 0) {
                          dk = dk - wd * period[k];
                          w = static_cast<std::int64_t>(wd);
                        }
                      }
                      d[k][j] = dk;
                      m[k][j] = i + w * L.shape[k] - s.b[k];
                      near[k][j] = std::fabs(dk) < C;
                      some = some || near[k][j];
                    }
                    any = any && some;
                  }
                  if (!any) continue;
                  for (std::int64_t jz = 0; jz < len[2]; ++jz) {
                    if (!near[2][jz]) continue;
                    for (std::int64_t jy = 0; jy < len[1]; ++jy) {
                      if (!near[1][jy]) continue;
                      for (std::int64_t jx = 0; jx < len[0]; ++jx) {
                        if (!near[0][jx]) continue;
                        const std::size_t node = static_cast<std::size_t>(jx + len[0] * (jy + len[1] * jz));
                        double r2 = d[0][jx] * d[0][jx] + d[1][jy] * d[1][jy];
                        if (dim == 3) r2 = r2 + d[2][jz] * d[2][jz];
                        if (ball && !(r2 < C2)) continue;
                        if (coulomb && r2 < Rex2) {
                          sums.excluded[node] = 1;
                          continue;
                        }
                        double g;
                        const std::int64_t jj[3] = {jx, jy, jz};
                        if (single) {
                          float sq[3] = {0, 0, 0};
                          for (int k = 0; k < dim; ++k) {
                            const float D = s.f[k] - static_cast<float>(m[k][jj[k]]);
                            const float dk = D * h32[k];
                            sq[k] = dk * dk;
                          }
                          if constexpr (F::kSeparable) {
                            g = f.axis(sq[0]) * f.axis(sq[1]);
                            if (dim == 3) g = g * f.axis(sq[2]);
                          } else {
                            float r2f = sq[0] + sq[1];
                            if (dim == 3) r2f = r2f + sq[2];
                            g = f.g(r2f, s.aux);
                          }
                        } else if constexpr (F::kSeparable) {
                          g = f.axis(d[0][jx] * d[0][jx]) * f.axis(d[1][jy] * d[1][jy]);
                          if (dim == 3) g = g * f.axis(d[2][jz] * d[2][jz]);
                        } else {
                          g = f.g(r2, s.aux);
                        }
                        Acc* acc = &sums.acc[node * static_cast<std::size_t>(comps)];
                        acc[0] += grid.steps(s.re * g);
                        if (comps == 2) acc[1] += grid.steps(s.im * g);
                        ++terms;
                      }
                    }
                  }
                }
              }
      // The tile's nodes: each integer rounded once.
      for (std::int64_t jz = 0; jz < len[2]; ++jz)
        for (std::int64_t jy = 0; jy < len[1]; ++jy)
          for (std::int64_t jx = 0; jx < len[0]; ++jx) {
            const std::size_t node = static_cast<std::size_t>(jx + len[0] * (jy + len[1] * jz));
            const std::uint64_t at = static_cast<std::uint64_t>(
                (a[0] + jx) + L.shape[0] * ((a[1] + jy) + L.shape[1] * (a[2] + jz)));
            const bool ex = coulomb && sums.excluded[node];
            if (coulomb) out.excluded[at] = ex ? 1 : 0;
            for (int c = 0; c < comps; ++c) {
              double v = ex ? 0.0 : grid.value(static_cast<FixedSum>(sums.acc[node * static_cast<std::size_t>(comps) + static_cast<std::size_t>(c)]));
              if (single) v = static_cast<double>(static_cast<float>(v));
              out.values[at * static_cast<std::uint64_t>(comps) + static_cast<std::uint64_t>(c)] = v;
            }
          }
      const std::int64_t now = ++done;
      if (plan.progress && omp_get_thread_num() == 0) plan.progress(static_cast<double>(now) / static_cast<double>(tiles));
    }
  }
  out.terms = terms;
}

}  // namespace

void run_lattice(const LatticePlan& plan, LatticeMap& out) {
  const Lattice& L = plan.stat->lattice;
  const Binned bins = bin_sources(plan);
  out.values.assign(L.nodes() * static_cast<std::uint64_t>(plan.components), 0.0);
  if (plan.stat->function.kind == LatticeKernel::CoulombSwitched) out.excluded.assign(L.nodes(), 0);
  lattice::visit_lattice_function(plan.stat->function, [&](const auto& f) {
    if (plan.stat->precision == Precision::Single)
      run_tiles<std::decay_t<decltype(f)>, std::int64_t>(plan, f, bins, out);
    else
      run_tiles<std::decay_t<decltype(f)>, FixedSum>(plan, f, bins, out);
  });
  out.excluded_count = 0;
  for (const std::uint8_t e : out.excluded) out.excluded_count += e;
  if (plan.stat->function.kind == LatticeKernel::CoulombSwitched && out.excluded_count == 0) out.excluded.clear();
}

}  // namespace twobody::cpu
