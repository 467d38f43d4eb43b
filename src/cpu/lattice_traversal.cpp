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
#include <exception>
#include <vector>

#include "twobody/detail/cpu/block_progress.hpp"
#include "twobody/detail/engine/lattice_bins.hpp"
#include "twobody/detail/engine/lattice_plan.hpp"
#include "twobody/extend/lattice_function.hpp"

namespace twobody::cpu {

namespace {

using lattice::Binned;
using lattice::Source;

constexpr int kTile = lattice::kTileNodes;

// The sums of one tile's nodes, the tile's own.
template <class Acc>
struct TileSums {
  std::vector<Acc> acc;
  std::vector<std::uint8_t> excluded;
};

// fn(node, at) for each node of the tile at `a` of `len` nodes an axis: its index in the tile's
// sums and in the lattice's (x fastest in both).
template <class Fn>
void for_each_tile_node(const Lattice& L, const std::int64_t (&a)[3], const std::int64_t (&len)[3], Fn&& fn) {
  for (std::int64_t jz = 0; jz < len[2]; ++jz)
    for (std::int64_t jy = 0; jy < len[1]; ++jy)
      for (std::int64_t jx = 0; jx < len[0]; ++jx)
        fn(static_cast<std::size_t>(jx + len[0] * (jy + len[1] * jz)),
           static_cast<std::size_t>((a[0] + jx) + L.shape[0] * ((a[1] + jy) + L.shape[1] * (a[2] + jz))));
}

// A tile's nodes into the map: each integer rounded once (to float32 too in Single).
template <class Acc>
void write_tile(const Lattice& L, const TileSums<Acc>& sums, const std::int64_t (&a)[3], const std::int64_t (&len)[3],
                int comps, bool coulomb, bool single, const SumGrid& grid, LatticeMap& out) {
  const auto nc = static_cast<std::size_t>(comps);
  for_each_tile_node(L, a, len, [&](std::size_t node, std::size_t at) {
    const bool ex = coulomb && sums.excluded[node];
    if (coulomb) out.excluded[at] = ex ? 1 : 0;
    for (std::size_t c = 0; c < nc; ++c)
      out.values[at * nc + c] = lattice::node_value(grid, static_cast<FixedSum>(sums.acc[node * nc + c]), ex, single);
  });
}

// Every tile of the lattice over the sources of `bins`, its sums handed to
// write(sums, a, len) (a: the tile's first node, len: its nodes an axis); returns the terms added.
template <class F, class Acc, class Write>
std::uint64_t run_tiles(const LatticePlan& plan, const F& f, const Binned& bins, Write&& write) {
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
  std::uint64_t terms = 0;
  BlockProgress progress(plan.progress, static_cast<std::size_t>(tiles));  // (a cancel skips the remaining tiles)

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
      if (progress.stopped()) continue;
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
      write(sums, a, len);
      progress.block_done();
    }
  }
  progress.rethrow();
  return terms;
}

}  // namespace

void run_lattice(const LatticePlan& plan, LatticeMap& out) {
  const Lattice& L = plan.stat->lattice;
  const Binned bins = lattice::bin_sources(plan);
  plan.lap("binning");
  out.values.resize(L.nodes() * static_cast<std::uint64_t>(plan.components));  // every tile writes its nodes
  const bool coulomb = plan.stat->function.kind == LatticeKernel::CoulombSwitched;
  if (coulomb) out.excluded.assign(L.nodes(), 0);
  const bool single = plan.stat->precision == Precision::Single;
  lattice::visit_lattice_function(plan.stat->function, [&](const auto& f) {
    const auto into_map = [&](const auto& sums, const std::int64_t (&a)[3], const std::int64_t (&len)[3]) {
      write_tile(L, sums, a, len, plan.components, coulomb, single, plan.grid, out);
    };
    out.terms = single ? run_tiles<std::decay_t<decltype(f)>, std::int64_t>(plan, f, bins, into_map)
                       : run_tiles<std::decay_t<decltype(f)>, FixedSum>(plan, f, bins, into_map);
  });
  plan.lap("traversal");
  lattice::finish_mask(out);
}

LatticeSums lattice_sums(const LatticePlan& plan, const Binned& bins) {
  const Lattice& L = plan.stat->lattice;
  const bool coulomb = plan.stat->function.kind == LatticeKernel::CoulombSwitched;
  const bool single = plan.stat->precision == Precision::Single;
  const std::size_t comps = static_cast<std::size_t>(plan.components);
  const std::size_t slots = static_cast<std::size_t>(L.nodes()) * comps;
  LatticeSums out;
  if (single) out.narrow.assign(slots, 0);
  else out.wide.assign(slots, 0);
  if (coulomb) out.excluded.assign(static_cast<std::size_t>(L.nodes()), 0);
  // A tile's sums into the whole lattice's (tiles do not overlap: no two threads write a node).
  const auto into = [&](auto* total) {
    return [&, total](const auto& sums, const std::int64_t (&a)[3], const std::int64_t (&len)[3]) {
      for_each_tile_node(L, a, len, [&](std::size_t node, std::size_t at) {
        if (coulomb) out.excluded[at] = sums.excluded[node];
        for (std::size_t c = 0; c < comps; ++c) total[at * comps + c] = sums.acc[node * comps + c];
      });
    };
  };
  lattice::visit_lattice_function(plan.stat->function, [&](const auto& f) {
    using F = std::decay_t<decltype(f)>;
    out.terms = single ? run_tiles<F, std::int64_t>(plan, f, bins, into(out.narrow.data()))
                       : run_tiles<F, FixedSum>(plan, f, bins, into(out.wide.data()));
  });
  return out;
}

}  // namespace twobody::cpu
