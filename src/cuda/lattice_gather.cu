// The GPU's lattice traversal (seed 002's gather with compact binning): a block takes a work item,
// a tile of 8×8×8 nodes (8×8 for 2-D lattices) with a range of the sources near it, a thread a node
// holding its sums in registers. The tile's nearby rows of bins (the seed's range access: a row of
// compact bins is one contiguous range; a regular bin is one range a bin) are listed by the block,
// a thread a row, their lengths summed by a block scan, and their sources staged through shared
// memory a block's width at a time across rows, so that a staging is full however few sources a
// row holds. A tile whose nearby sources exceed one item's share (MRI samples crowd k-space's
// centre) is split into several items whose sums meet in global memory by integer atomics: the
// seed capped a bin's depth and summed the overflow on the CPU (kept for its regular bins, below);
// splitting keeps the GPU's speed on the crowded tiles and, the sums being integers, the bits.
// Tiles with no source near them take no item. Every (source, node) pair is first screened in float32 (engine/lattice_screen.hpp: the
// single-precision term's own displacement, with margins proven against the float64 rule); the
// pairs the screen cannot decide, and in double precision every pair it keeps, are decided and
// their terms computed by the CPU traversal's float64 rule with the same operations
// (cpu/lattice_traversal.cpp; --fmad=false, IEEE division and square root), and every term is
// added as an integer of steps on the plan's sum grid, so the map is the CPU's bit for bit. The
// sources are binned on the device (lattice_device_bins.hpp: the host's bins, bit for bit), or on
// the host (engine/lattice_bins.hpp) for regular bins and when the device cannot hold the binning;
// the integers are turned into values on the device in single precision (the host's rounding,
// lattice_map_sums.cu) and on the host, by the CPU's code, in double. For cutoffs of a few
// spacings, scatter (lattice_tiles.hpp: choose_lattice_traversal) turns the block around: a thread
// a source, adding its stencil's terms to the tile's sums in shared memory. Regular bins (the
// seed's baseline) with a capped depth leave their overflow to the CPU, beside the GPU, its sums
// added after (lattice_map_sums.cu). Later (issue 24's plan): slabs for maps beyond device memory.
// The host's side: tiles' runs of bins, work items and regular bins in lattice_tiles.hpp, the passes'
// sources and items on the device in lattice_passes.hpp.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <future>
#include <memory>
#include <type_traits>
#include <vector>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/cuda/lattice_map_sums.hpp"
#include "twobody/detail/cuda/lattice_passes.hpp"
#include "twobody/detail/cuda/lattice_tiles.hpp"
#include "twobody/detail/cuda/output/exact_sum_atomics.cuh"
#include "twobody/detail/cuda/staged_upload.hpp"
#include "twobody/detail/cuda/staged_widening.hpp"
#include "twobody/detail/engine/lattice_bins.hpp"
#include "twobody/detail/engine/lattice_plan.hpp"
#include "twobody/detail/engine/lattice_screen.hpp"
#include "twobody/error.hpp"
#include "twobody/extend/lattice_function.hpp"

namespace twobody::cuda {

namespace {

constexpr int kMaxThreads = kTile * kTile * kTile;

struct GatherArgs {
  // Compact bins: a bin's sources are [start[b], start[b + 1]), a row of bins one range. Regular
  // bins (seed 002's baseline): bin b's are [b·depth, b·depth + count[b]), padded to the depth.
  const lattice::Source* sources;
  const std::uint64_t* start;      // compact: bins + 1
  const std::uint32_t* count;      // regular: per bin
  unsigned long long depth;        // regular
  const long long* runs[3];        // per axis and tile: kMaxRuns × (first, last) bins; first −1: none
  long long tiles_per[3], nb[3], shape[3];
  double origin[3], spacing[3], period[3];
  bool periodic[3];
  float h32[3];
  int dim, comps;
  double cutoff, cutoff2, exclusion2;
  bool coulomb, ball;
  DeviceSumGrid grid;
  lattice::PairScreen screen;
  float stencil[3];  // scatter: spacings either side of a source beyond which the screen rejects every node
  const WorkItem* items;
  void* sums;        // per node and component: long long (Single) or DeviceFixedSum (Double)
  unsigned char* excluded;
  unsigned long long* terms;
};

// A 128-bit sum of steps in one thread (Double): two words, the carry by hand.
struct WideSum {
  unsigned long long lo = 0, hi = 0;
  __device__ void add(long long v) {
    const unsigned long long u = static_cast<unsigned long long>(v), old = lo;
    lo += u;
    hi += (v < 0 ? ~0ull : 0ull) + (lo < old ? 1ull : 0ull);
  }
};

struct NarrowSum {
  long long v = 0;
  __device__ void add(long long s) { v += s; }
};

// A source as the block stages it: its tile view (the screen's), its index (for the rule, which
// reads the whole Source) and what a term reads.
struct StagedSource {
  lattice::TileSource t;
  unsigned long long index;
  double re, im, aux;
};

// The block's exclusive prefix sum of v (every thread calls it; `warp_sums` holds 32 values), and
// the block's total.
__device__ unsigned long long block_exclusive_sum(unsigned long long v, unsigned long long* warp_sums, int tid, int threads,
                                                  unsigned long long& total) {
  const int lane = tid & 31, warp = tid >> 5, warps = threads >> 5;
  unsigned long long inclusive = v;
  for (int d = 1; d < 32; d <<= 1) {
    const unsigned long long up = __shfl_up_sync(0xffffffffu, inclusive, d);
    if (lane >= d) inclusive += up;
  }
  if (lane == 31) warp_sums[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    unsigned long long w = lane < warps ? warp_sums[lane] : 0;
    for (int d = 1; d < 32; d <<= 1) {
      const unsigned long long up = __shfl_up_sync(0xffffffffu, w, d);
      if (lane >= d) w += up;
    }
    if (lane < warps) warp_sums[lane] = w;
  }
  __syncthreads();
  total = warp_sums[warps - 1];
  return (warp > 0 ? warp_sums[warp - 1] : 0) + inclusive - v;
}

// The i-th bin of an axis' runs near a tile (runs as tile_runs pads them).
__device__ __forceinline__ long long run_bin(const long long* runs, unsigned long long i) {
  for (int a = 0; a < kMaxRuns && runs[2 * a] >= 0; ++a) {
    const unsigned long long len = static_cast<unsigned long long>(runs[2 * a + 1] - runs[2 * a] + 1);
    if (i < len) return runs[2 * a] + static_cast<long long>(i);
    i -= len;
  }
  return -1;
}

__device__ __forceinline__ unsigned long long run_bins(const long long* runs) {
  unsigned long long n = 0;
  for (int a = 0; a < kMaxRuns && runs[2 * a] >= 0; ++a) n += static_cast<unsigned long long>(runs[2 * a + 1] - runs[2 * a] + 1);
  return n;
}

template <class F, bool Single, bool Regular, bool Scatter>
__global__ void __launch_bounds__(kMaxThreads, 2) lattice_gather_kernel(const __grid_constant__ GatherArgs args, const F f) {
  static_assert(!Scatter || !Regular, "scatter takes compact bins");
  // Gather: the staged sources every node runs over. Scatter: none (a thread keeps the one it
  // staged), but the tile's sums (a node's components kMaxThreads apart; Double's two words
  // adjacent) and exclusions.
  __shared__ StagedSource s_src[Scatter ? 1 : kMaxThreads];
  constexpr int kWords = Single ? 1 : 2;
  __shared__ unsigned long long s_sum[Scatter ? 2 * kWords * kMaxThreads : 1];
  __shared__ unsigned char s_ex[Scatter ? kMaxThreads : 1];
  __shared__ unsigned long long s_first[kMaxThreads];  // a unit's first source (index into args.sources)
  __shared__ unsigned long long s_pos[kMaxThreads];    // its place in the tile's sequence of sources
  __shared__ unsigned long long s_warp[32];
  using Sum = std::conditional_t<Single, NarrowSum, WideSum>;
  const int tid = threadIdx.x + kTile * (threadIdx.y + kTile * threadIdx.z);
  const int threads = blockDim.x * blockDim.y * blockDim.z;
  const WorkItem item = args.items[blockIdx.x];
  const long long tile = static_cast<long long>(item.tile);
  const long long t[3] = {tile % args.tiles_per[0], tile / args.tiles_per[0] % args.tiles_per[1],
                          tile / (args.tiles_per[0] * args.tiles_per[1])};
  const std::int64_t tile0[3] = {t[0] * kTile, t[1] * kTile, t[2] * kTile};
  const long long i[3] = {tile0[0] + threadIdx.x, tile0[1] + threadIdx.y, tile0[2] + threadIdx.z};
  const float j[3] = {static_cast<float>(threadIdx.x), static_cast<float>(threadIdx.y), static_cast<float>(threadIdx.z)};
  const bool mine = i[0] < args.shape[0] && i[1] < args.shape[1] && i[2] < args.shape[2];
  double node[3] = {0, 0, 0};
  for (int k = 0; k < args.dim; ++k) node[k] = args.origin[k] + static_cast<double>(i[k]) * args.spacing[k];
  Sum sum[2];
  bool excluded = false;
  unsigned long long terms = 0;

  // Scatter: a node's component c in the tile's shared sums.
  const auto shared_sum = [&](int c, int at) { return &s_sum[kWords * (c * kMaxThreads + at)]; };
  if constexpr (Scatter) {
    // Each thread zeroes its own node's words (a 1-D or 2-D tile has fewer threads than kMaxThreads).
    for (int c = 0; c < 2; ++c)
      for (int w = 0; w < kWords; ++w) shared_sum(c, tid)[w] = 0;
    s_ex[tid] = 0;  // (the first staging's barrier orders these before any atomic)
  }
  // The single-precision term from the float32 squares (the rule's own, below).
  const auto single_term = [&](const float (&sq)[3], float r2f, double aux) {
    if constexpr (F::kSeparable) {
      double g = f.axis(sq[0]) * f.axis(sq[1]);
      if (args.dim == 3) g = g * f.axis(sq[2]);
      return g;
    } else {
      return f.g(r2f, aux);
    }
  };
  // The rule: the float64 decision for the node `ni` at `nx`, and the term in the plan's precision
  // handed to put(re, im, g); an excluded node sets `ex`.
  const auto rule = [&](const lattice::Source& s, const long long (&ni)[3], const double (&nx)[3], bool& ex, auto&& put) {
    double d[3];
    long long m[3];
    bool near = true;
    for (int k = 0; k < 3; ++k) {
      if (k >= args.dim) {
        d[k] = 0;
        m[k] = 0;
        continue;
      }
      double dk = s.x[k] - nx[k];
      long long w = 0;
      if (args.periodic[k]) {
        const double wd = nearbyint(dk / args.period[k]);
        if (wd != 0) {
          dk = dk - wd * args.period[k];
          w = static_cast<long long>(wd);
        }
      }
      d[k] = dk;
      m[k] = ni[k] + w * args.shape[k] - s.b[k];
      near = near && fabs(dk) < args.cutoff;
    }
    if (!near) return;
    double r2 = d[0] * d[0] + d[1] * d[1];
    if (args.dim == 3) r2 = r2 + d[2] * d[2];
    if (args.ball && !(r2 < args.cutoff2)) return;
    if (args.coulomb && r2 < args.exclusion2) {
      ex = true;
      return;
    }
    double g;
    if constexpr (Single) {
      float sq[3] = {0, 0, 0};
      for (int k = 0; k < args.dim; ++k) {
        const float D = s.f[k] - static_cast<float>(m[k]);
        const float dk = D * args.h32[k];
        sq[k] = dk * dk;
      }
      float r2f = sq[0] + sq[1];
      if (args.dim == 3) r2f = r2f + sq[2];
      g = single_term(sq, r2f, s.aux);
    } else if constexpr (F::kSeparable) {
      g = f.axis(d[0] * d[0]) * f.axis(d[1] * d[1]);
      if (args.dim == 3) g = g * f.axis(d[2] * d[2]);
    } else {
      g = f.g(r2, s.aux);
    }
    put(s.re, s.im, g);
  };
  // A staged source and the tile's node nj (ni its lattice index, nx its position): screened, and
  // decided by the rule where the screen cannot.
  const auto evaluate = [&](const StagedSource& s, const long long (&ni)[3], const float (&nj)[3], const double (&nx)[3],
                            bool& ex, auto&& put) {
    float sq[3], r2f;
    const lattice::Screened v = lattice::screen_pair(args.screen, s.t, nj, sq, r2f);
    if (v == lattice::Screened::Out) return;
    if (v == lattice::Screened::Excluded) {
      ex = true;
      return;
    }
    if (Single && v == lattice::Screened::In) {
      put(s.re, s.im, single_term(sq, r2f, s.aux));
      return;
    }
    rule(args.sources[s.index], ni, nx, ex, put);
  };
  // Gather: this thread's node, its sums in registers.
  const auto add = [&](double re, double im, double g) {
    sum[0].add(grid_steps(args.grid, re * g));
    if (args.comps == 2) sum[1].add(grid_steps(args.grid, im * g));
    ++terms;
  };
  const auto visit = [&](const StagedSource& s) { evaluate(s, i, j, node, excluded, add); };
  // Scatter: the source's stencil clipped to the tile (and the lattice), each node's steps added to
  // the tile's shared sums. A warp's lanes hold consecutive sources, mostly of one bin, whose
  // stencils start at the same node: each lane walks its stencil from its own place in it (its lane
  // number, modulo the stencil's nodes), so that the warp's atomics at one instant go to different
  // nodes instead of 32 to one (the sums are integers: the same bits in any order). MRI 256³'s
  // scatter 36 -> 31 ms on the H200: the shared address was not most of its time.
  const int lane = tid & 31;
  const auto scatter = [&](const StagedSource& s) {
    int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (int k = 0; k < args.dim; ++k) {
      const int rel = static_cast<int>(s.t.rel[k]);
      lo[k] = max(0, static_cast<int>(ceilf(s.t.f[k] - args.stencil[k])) + rel);
      hi[k] = min(static_cast<int>(min(static_cast<long long>(kTile), args.shape[k] - tile0[k])) - 1,
                  static_cast<int>(floorf(s.t.f[k] + args.stencil[k])) + rel);
    }
    const int span[3] = {hi[0] - lo[0] + 1, hi[1] - lo[1] + 1, hi[2] - lo[2] + 1};
    if (span[0] <= 0 || span[1] <= 0 || span[2] <= 0) return;
    const int nodes = span[0] * span[1] * span[2], first = lane % nodes;
    int x = lo[0] + first % span[0], y = lo[1] + first / span[0] % span[1], z = lo[2] + first / (span[0] * span[1]);
    for (int q = 0; q < nodes; ++q) {
      if (q > 0 && ++x > hi[0]) {  // the next node, x fastest, wrapping to the stencil's first
        x = lo[0];
        if (++y > hi[1]) {
          y = lo[1];
          if (++z > hi[2]) z = lo[2];
        }
      }
      const int at = x + kTile * (y + kTile * z);
      const long long ni[3] = {tile0[0] + x, tile0[1] + y, tile0[2] + z};
      const float nj[3] = {static_cast<float>(x), static_cast<float>(y), static_cast<float>(z)};
      double nx[3] = {0, 0, 0};
      for (int k = 0; k < args.dim; ++k) nx[k] = args.origin[k] + static_cast<double>(ni[k]) * args.spacing[k];
      bool ex = false;
      evaluate(s, ni, nj, nx, ex, [&](double re, double im, double g) {
        const long long v[2] = {grid_steps(args.grid, re * g), args.comps == 2 ? grid_steps(args.grid, im * g) : 0};
        for (int c = 0; c < args.comps; ++c) {
          if constexpr (Single) atomicAdd(shared_sum(c, at), static_cast<unsigned long long>(v[c]));
          else add_steps(reinterpret_cast<DeviceFixedSum*>(shared_sum(c, at)), v[c]);
        }
        ++terms;
      });
      if (ex) s_ex[at] = 1;
    }
  };

  // The tile's units in the host's order (work_items): rows of bins along z, then y, then (compact)
  // the runs of a row along x or (regular) its bins one by one.
  const long long* rz = args.runs[2] + t[2] * kMaxRuns * 2;
  const long long* ry = args.runs[1] + t[1] * kMaxRuns * 2;
  const long long* rx = args.runs[0] + t[0] * kMaxRuns * 2;
  unsigned long long nx = 0;
  if constexpr (Regular) {
    nx = run_bins(rx);
  } else {
    for (int c = 0; c < kMaxRuns && rx[2 * c] >= 0; ++c) ++nx;
  }
  const unsigned long long ny = run_bins(ry), units = run_bins(rz) * ny * nx;
  const std::int64_t shape[3] = {args.shape[0], args.shape[1], args.shape[2]};
  // Every bound below is the block's, so every thread reaches every barrier.
  unsigned long long pos = 0;  // the tile's sources before this chunk of units
  for (unsigned long long chunk = 0; chunk < units && pos < item.end; chunk += static_cast<unsigned long long>(threads)) {
    unsigned long long first = 0, len = 0;
    const unsigned long long u = chunk + static_cast<unsigned long long>(tid);
    if (u < units) {
      const unsigned long long xi = u % nx, yz = u / nx;
      const long long by = run_bin(ry, yz % ny), bz = run_bin(rz, yz / ny);
      const long long row = args.nb[0] * (by + args.nb[1] * bz);
      if constexpr (Regular) {
        const long long bin = row + run_bin(rx, xi);
        first = static_cast<unsigned long long>(bin) * args.depth;
        len = args.count[bin];
      } else {
        first = args.start[row + rx[2 * xi]];  // the seed's range access: a row's run of bins, one range
        len = args.start[row + rx[2 * xi + 1] + 1] - first;
      }
    }
    unsigned long long total;
    const unsigned long long offset = block_exclusive_sum(len, s_warp, tid, threads, total);
    s_first[tid] = first;
    s_pos[tid] = pos + offset;
    __syncthreads();
    const int n_units = static_cast<int>(min(static_cast<unsigned long long>(threads), units - chunk));
    const unsigned long long lo = max(pos, static_cast<unsigned long long>(item.first));
    const unsigned long long hi = min(pos + total, static_cast<unsigned long long>(item.end));
    for (unsigned long long e = lo; e < hi; e += static_cast<unsigned long long>(threads)) {
      const unsigned long long q = e + static_cast<unsigned long long>(tid);
      if (q < hi) {
        int a = 0, b = n_units;  // the last unit starting at or before q: s_pos[a] ≤ q < s_pos[b]
        while (b - a > 1) {
          const int mid = (a + b) / 2;
          if (s_pos[mid] <= q) a = mid;
          else b = mid;
        }
        const unsigned long long index = s_first[a] + (q - s_pos[a]);
        const lattice::Source& src = args.sources[index];
        StagedSource st;
        const float sf[3] = {src.f[0], src.f[1], src.f[2]};
        const std::int64_t sb[3] = {src.b[0], src.b[1], src.b[2]};
        st.t = lattice::tile_source(sf, sb, tile0, shape, args.periodic, args.dim, kTile);
        st.index = index;
        st.re = src.re;
        st.im = src.im;
        st.aux = src.aux;
        if constexpr (Scatter) scatter(st);  // its own source: no staging, no wait
        else s_src[tid] = st;
      }
      if constexpr (!Scatter) {
        __syncthreads();
        const int n = static_cast<int>(min(static_cast<unsigned long long>(threads), hi - e));
        if (mine)
          for (int q2 = 0; q2 < n; ++q2) visit(s_src[q2]);
        __syncthreads();
      }
    }
    pos += total;
  }

  if constexpr (Scatter) {
    __syncthreads();  // every thread's atomics before the nodes read their sums
    for (int c = 0; c < 2; ++c) {
      if constexpr (Single) {
        sum[c].v = static_cast<long long>(*shared_sum(c, tid));
      } else {
        sum[c].lo = shared_sum(c, tid)[0];
        sum[c].hi = shared_sum(c, tid)[1];
      }
    }
    excluded = s_ex[tid] != 0;
  }
  if (terms) atomicAdd(args.terms, terms);
  if (!mine) return;
  // Added, not stored: a split tile's items meet here (integers, so in any order the same bits).
  const std::uint64_t at = static_cast<std::uint64_t>(i[0] + args.shape[0] * (i[1] + args.shape[1] * i[2]));
  for (int c = 0; c < args.comps; ++c) {
    const std::uint64_t slot = at * static_cast<std::uint64_t>(args.comps) + static_cast<std::uint64_t>(c);
    if constexpr (Single) {
      if (sum[c].v) atomicAdd(static_cast<unsigned long long*>(args.sums) + slot, static_cast<unsigned long long>(sum[c].v));
    } else if ((sum[c].lo | sum[c].hi) != 0) {
      add_sum(static_cast<DeviceFixedSum*>(args.sums) + slot, sum[c].lo, sum[c].hi);
    }
  }
  if (args.coulomb && excluded) args.excluded[at] = 1;
}

// Progress over the passes of a run: items done of all of them.
struct Progress {
  std::size_t done = 0, total = 0;
};

template <bool Single, bool Regular, bool Scatter, class F>
void gather(const LatticePlan& plan, const F& f, const GatherArgs& args, std::size_t items, dim3 block, Progress& progress) {
  // In batches when progress is reported (and a cancel taken) along the way; else in one launch,
  // whose last wave is the run's only partial one (MRI 256³'s scatter in 32 launches of 614 blocks,
  // 2.3 waves each: 34 ms of kernels, ncu, 2026-11-29).
  constexpr std::size_t kBatches = 32;
  const std::size_t batch =
      std::max<std::size_t>(1, plan.progress ? (items + kBatches - 1) / kBatches : items);
  for (std::size_t first = 0; first < items; first += batch) {
    GatherArgs a = args;
    a.items = args.items + first;
    const unsigned blocks = static_cast<unsigned>(std::min(batch, items - first));
    lattice_gather_kernel<F, Single, Regular, Scatter><<<blocks, block>>>(a, f);
    TWOBODY_CUDA_CHECK(cudaGetLastError());
    progress.done += blocks;
    if (plan.progress) {
      TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
      plan.progress(static_cast<double>(progress.done) / static_cast<double>(progress.total));  // may throw: a cancel
    }
  }
  TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
}

// What every pass reads: the lattice, the function's constants, the sum grid, the runs of bins.
GatherArgs geometry_args(const LatticePlan& plan, const std::array<lattice::AxisBins, 3>& axis, std::vector<long long> (&runs)[3]) {
  const Lattice& L = plan.stat->lattice;
  const LatticeFunction& fn = plan.stat->function;
  GatherArgs args{};
  for (int k = 0; k < 3; ++k) {
    args.tiles_per[k] = (L.shape[k] + kTile - 1) / kTile;
    args.nb[k] = axis[k].nb;
    args.shape[k] = L.shape[k];
    args.origin[k] = L.origin[k];
    args.spacing[k] = L.spacing[k];
    args.period[k] = L.period(k);
    args.periodic[k] = L.periodic[k];
    args.h32[k] = static_cast<float>(L.spacing[k]);
    runs[k] = tile_runs(axis[k], L.shape[k], args.tiles_per[k]);
  }
  args.dim = L.dim;
  args.comps = plan.components;
  args.cutoff = fn.cutoff;
  args.cutoff2 = fn.cutoff * fn.cutoff;
  args.exclusion2 = fn.exclusion * fn.exclusion;
  args.coulomb = fn.kind == LatticeKernel::CoulombSwitched;
  args.ball = fn.support == Support::Ball;
  args.grid = DeviceSumGrid(plan.grid);
  args.screen = lattice::make_pair_screen(plan, kTile);
  return args;
}

}  // namespace

void run_lattice_on_device(const LatticePlan& plan, LatticeMap& out) {
  const Lattice& L = plan.stat->lattice;
  const bool single = plan.stat->precision == Precision::Single;
  const int comps = plan.components;
  TWOBODY_CUDA_CHECK(cudaFree(nullptr));  // the context, if this process has none yet
  plan.lap("device start-up");
  const std::array<lattice::AxisBins, 3> axis = lattice::axis_bins(plan);
  const std::uint64_t nodes = L.nodes();
  const std::size_t sum_bytes = single ? sizeof(long long) : sizeof(DeviceFixedSum);
  const std::size_t free_bytes = available_device_bytes();
  (void)cudaGetLastError();  // an earlier run's handled failure, still in the slot a launch's check reads
  // (the sums, single's float32 values beside them, and the exclusion mask)
  const double map_bytes =
      static_cast<double>(nodes) * static_cast<double>(comps * (sum_bytes + (single ? sizeof(float) : 0)) + 1);
  const bool regular = plan.stat->binning == LatticeBinning::Regular;
  std::vector<long long> runs[3];
  GatherArgs args = geometry_args(plan, axis, runs);
  const LatticeTraversal traversal = choose_lattice_traversal(plan, args.screen);
  for (int k = 0; k < 3; ++k) args.stencil[k] = traversal.stencil[k];
  const DeviceBuffer<long long> runs_x(runs[0]), runs_y(runs[1]), runs_z(runs[2]);
  const long long* const device_runs[3] = {runs_x.get(), runs_y.get(), runs_z.get()};
  plan.lap("tiles' runs of bins");
  // The passes: compact bins made on the device; or made on the host (when the device cannot hold
  // the binning beside the map); or regular bins (past a capped depth, the CPU's overflow below).
  std::vector<std::unique_ptr<LatticePass>> passes;
  // Seed 002's overflow of regular bins' capped depth, on the CPU beside the GPU, added after.
  std::future<cpu::LatticeSums> cpu_overflow;
  const bool on_device = bins_on_device(plan, axis, 0.8 * static_cast<double>(free_bytes) - map_bytes);
  if (on_device) {
    passes.push_back(device_pass(plan, axis, device_runs, args.tiles_per, args.nb));
    plan.lap("binning on the device");
  } else {
    const lattice::Binned bins = lattice::bin_sources(plan);
    plan.lap("binning");
    // The map's sums and mask, and the compact sources (regular bins check their own beside the map).
    const double need = map_bytes + (regular ? 0.0 : static_cast<double>(bins.sources.size()) * sizeof(lattice::Source) +
                                                      static_cast<double>(bins.start.size()) * sizeof(std::uint64_t));
    if (need > 0.8 * static_cast<double>(free_bytes)) {
      char text[256];  // (no fmt here: nvcc's host pass rejects its headers)
      std::snprintf(text, sizeof text, "a lattice map of %llu nodes needs %.3g GB on the device, which has %.3g GB free: "
                    "use the CPU backend, a coarser lattice or single precision",
                    static_cast<unsigned long long>(nodes), need / 1e9, static_cast<double>(free_bytes) / 1e9);
      throw Error(ErrorKind::Resource, text);
    }
    if (!regular) {
      passes.push_back(compact_pass(bins.sources, bins.start, runs, args.tiles_per, args.nb));
    } else {
      const RegularBins r = regular_bins(bins, plan.stat->bin_depth, 0.8 * static_cast<double>(free_bytes) - map_bytes, free_bytes);
      if (!r.spill.empty()) cpu_overflow = start_cpu_overflow(plan, r, axis);
      passes.push_back(regular_pass(r, runs, args.tiles_per, args.nb));
      out.spilled = r.spill.size();
    }
  }
  DeviceBuffer<unsigned char> sums(nodes * static_cast<std::uint64_t>(comps) * sum_bytes);
  DeviceBuffer<unsigned char> excluded(args.coulomb ? nodes : 0);
  DeviceBuffer<unsigned long long> terms(1);
  sums.zero();
  excluded.zero();
  terms.zero();
  TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
  plan.lap(on_device ? "map's sums" : "work items and upload");
  args.runs[0] = runs_x.get();
  args.runs[1] = runs_y.get();
  args.runs[2] = runs_z.get();
  args.sums = sums.get();
  args.excluded = excluded.get();
  args.terms = terms.get();
  // Single: the map's host memory made and faulted in on the host's threads while the GPU
  // gathers, so that its way back only copies (MRI 256³: "values and download" 14–18 ms for 134 MB
  // over the bus, ~6 ms of it; the first touch of the 268 MB map the suspect).
  const unsigned long long slots = nodes * static_cast<unsigned long long>(comps);
  std::future<void> host_map;
  if (single)
    host_map = std::async(std::launch::async, [&out, slots] {
      out.values.resize(slots);  // not zeroed: the way back writes all of it
      fault_in(out.values.data(), slots * sizeof(double));
    });
  const dim3 block(kTile, kTile, L.dim == 3 ? kTile : 1);
  Progress progress;
  for (const auto& p : passes) progress.total += p->n_items;
  for (const auto& p : passes) {
    GatherArgs a = args;
    a.sources = p->sources.get();
    a.start = p->start.get();
    a.count = p->count.get();
    a.depth = p->depth;
    a.items = p->items.get();
    lattice::visit_lattice_function(plan.stat->function, [&](const auto& f) {
      if (traversal.scatter && !p->regular) single ? gather<true, false, true>(plan, f, a, p->n_items, block, progress)
                                                   : gather<false, false, true>(plan, f, a, p->n_items, block, progress);
      else if (single) p->regular ? gather<true, true, false>(plan, f, a, p->n_items, block, progress)
                                  : gather<true, false, false>(plan, f, a, p->n_items, block, progress);
      else p->regular ? gather<false, true, false>(plan, f, a, p->n_items, block, progress)
                      : gather<false, false, false>(plan, f, a, p->n_items, block, progress);
    });
  }
  plan.lap(traversal.scatter ? "scatter" : "gather");
  std::uint64_t host_terms = 0;
  if (cpu_overflow.valid()) {
    const cpu::LatticeSums extra = cpu_overflow.get();  // (rethrows the CPU's errors)
    plan.lap("the CPU's overflow, beyond the gather");
    add_cpu_overflow(extra, sums.get(), excluded.get(), slots);
    host_terms = extra.terms;
    plan.lap("overflow added");
  }

  if (single) {
    host_map.get();
    single_values_back(reinterpret_cast<const long long*>(sums.get()), args.coulomb ? excluded.get() : nullptr, slots, comps,
                       plan.grid.exponent, out.values.data());
    out.excluded.assign(args.coulomb ? nodes : 0, 0);
    if (args.coulomb) excluded.download(out.excluded.data(), nodes);
    lattice::finish_mask(out);
    out.terms = terms.download().at(0) + host_terms;
    plan.lap("values and download");
    return;
  }
  // Double: the 128-bit integers back, each rounded once by the CPU's code; through the pinned
  // staging buffers (the driver's pageable copy took 339 ms for MRI 256³'s 537 MB on the H200).
  const auto host = std::make_unique_for_overwrite<unsigned char[]>(sums.size());  // not zeroed: all of it is written
  download_bytes(host.get(), sums.get(), sums.size());
  std::vector<std::uint8_t> mask(excluded.size());
  if (!mask.empty()) download_bytes(mask.data(), excluded.get(), mask.size());
  out.terms = terms.download().at(0) + host_terms;
  plan.lap("download");
  lattice::write_wide_values(plan, host.get(), mask, out);
  plan.lap("values");
}

}  // namespace twobody::cuda
