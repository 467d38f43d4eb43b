// The FP16 Gram tiles (gram_tiles.hpp). A block of 8 warps takes 128 rows of A x 128 rows of B
// (a self-join: tiles J >= I only, and inside a diagonal tile j > i); warp w owns rows
// 64·(w / 4) .. +63 and columns 32·(w % 4) .. +31: 4 x 4 fragments of mma.m16n8k16 (FP16 in,
// float32 accumulate). The FP16 rows stream through shared memory 32 coordinates at a time, two
// stages deep by cp.async; MMAs beyond d are skipped, so the accumulation has ⌈d/16⌉ MMAs as the
// bound assumes, in partial sums of 32 MMAs from d = 2 048 (TuningPolicy::gram_fold_for,
// exact::gram_accumulation). Fragment layouts (PTX ISA, m16n8k16 .f16, g = lane / 4, t = lane % 4):
//   A (row-major 16 x 16): a0 (g, 2t..2t+1), a1 (g+8, 2t..), a2 (g, 2t+8..), a3 (g+8, 2t+8..)
//   B (col-major 16 x 8):  b0 (k 2t..2t+1, n g), b1 (k 2t+8..2t+9, n g)
//   C (16 x 8):            c0 (g, 2t), c1 (g, 2t+1), c2 (g+8, 2t), c3 (g+8, 2t+1)
// with the lower column in the lower 16 bits: both operands are K-contiguous rows, so four
// fragment registers are one ldmatrix.x4 (gram_tile_core.cuh). Epilogue per element: s̃ = fl32(fl32(N_i + N_j) −
// 2D), D = G/(σ_iσ_j) (powers of two: exact), against the tile's thresholds from E_tile (the
// tile's largest norms and smallest scales), or for Euclidean rows with their terms (N̂ then the
// rounded rows' norms) from the bound in distance space (gram_tile_core.cuh: use_distance_space).
// Certain pairs are counted in registers; undecided ones go to a queue (their Gram rows) that a
// settle kernel drains after every slab of tile rows: a first look on the FP16 rows in float64
// where the rows carry their terms, then the rule (stored order, no FMA) on the float64 rows. A
// full queue never loses a pair: the tile settles it itself, by the rule. Rows may come sorted by
// norm: the rule's rows and the counts take the sets' indices (`order`).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/cuda/gram_tile_core.cuh"
#include "twobody/detail/cuda/gram_tiles.hpp"

namespace twobody::cuda {

namespace {

using namespace gram_core;

// A thread's undecided elements (bit (4m + n)·4 + q of `undecided`; its first element's row and
// column `i0`, `j0`) to the queue, or, when it is full, settled here. One loop after the 64
// unrolled elements rather than a copy in each: there, the queue and the float64 rule made the
// kernel 41 000 instructions, and a third of its warps' cycles went to fetching them (ncu,
// 2026-11-29). Inlined (once): a call would copy the kernel's arguments to the stack. Returns how
// many the tile settled in range (their per-point counts are added here).
template <GramOutput Out>
__device__ __forceinline__ unsigned queue_undecided(const GramArgs& g, unsigned long long undecided, std::size_t i0, std::size_t j0) {
  unsigned in = 0;
  while (undecided) {
    const int e = __ffsll(static_cast<long long>(undecided)) - 1;
    undecided &= undecided - 1;
    const int m = e / 16, n = (e / 4) % 4, q = e % 4;
    const std::uint32_t i = static_cast<std::uint32_t>(i0 + m * 16 + 8 * (q >> 1)), j = static_cast<std::uint32_t>(j0 + n * 8 + (q & 1));
    const std::uint32_t oi = g.order_a[i], oj = g.order_b[j];
    const unsigned long long at = atomicAdd(g.queued, 1ull);
    if (at < g.capacity) {
      g.queue[at] = make_uint2(i, j);  // (Gram rows: the first look reads their FP16 rows)
    } else if (settle_here(g, oi, oj)) {
      ++in;
      if constexpr (Out == GramOutput::PerPoint) {
        atomicAdd(g.count_a + oi, 1ull);
        atomicAdd(g.count_b + oj, 1ull);
      }
    }
  }
  return in;
}

template <GramOutput Out>
__global__ void __launch_bounds__(kThreads, 2) gram_tiles(GramArgs g) {
  const std::uint32_t I = g.first_tile + blockIdx.y, J = blockIdx.x;
  if (g.is_auto && J < I) return;  // below the diagonal: the transposed tile's pairs
  __shared__ alignas(16) std::uint16_t sa[2][kTile * kStride];
  __shared__ alignas(16) std::uint16_t sb[2][kTile * kStride];
  __shared__ exact::GramTileThresholds s_th;
  extern __shared__ __align__(16) float fold_sums[];  // gram_fold_bytes(g) of them (read as float2)
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int gq = lane / 4, t4 = lane % 4;
  const int wm = (warp / 4) * 64, wn = (warp % 4) * 32;
  const std::size_t row0 = static_cast<std::size_t>(I) * kTile, col0 = static_cast<std::size_t>(J) * kTile;
  float c[4][4][4];
  gram_mainloop(g, row0, col0, wm, wn, sa, sb, c, [&] {
    if (threadIdx.x == 0) s_th = tile_thresholds(g, I, J);  // (read after the mainloop's barriers)
  }, fold_sums);

  // The epilogue: rows row0 + wm + 16m + gq (+8), columns col0 + wn + 8n + 2t4 (+1).
  float ni[4][2], inv_i[4][2], nj[4][2], inv_j[4][2];
  tile_norms(g, row0, col0, wm, wn, ni, inv_i, nj, inv_j);
  const exact::GramTileThresholds th = s_th;
  const bool interior = tile_is_interior(g, I, J, row0, col0);
  unsigned row_count[4][2] = {}, col_count[4][2] = {};
  unsigned long long undecided = 0;  // bit (4m + n)·4 + q: element c[m][n][q]
#pragma unroll
  for (int m = 0; m < 4; ++m)
#pragma unroll
    for (int n = 0; n < 4; ++n)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int rh = q >> 1, cq = q & 1;
        const std::uint32_t i = static_cast<std::uint32_t>(row0) + wm + m * 16 + gq + 8 * rh;
        const std::uint32_t j = static_cast<std::uint32_t>(col0) + wn + n * 8 + 2 * t4 + cq;
        const float s = gram_distance(c[m][n][q], ni[m][rh], nj[n][cq], inv_i[m][rh], inv_j[n][cq]);
        if constexpr (Out == GramOutput::Distances) {
          if (i < g.na && j < g.nb) {
            const std::size_t at = static_cast<std::size_t>(g.order_a[i]) * g.nb + g.order_b[j];
            g.distances[at] = s;
            g.products[at] = c[m][n][q];
          }
          continue;
        }
        if (!interior && (i >= g.na || j >= g.nb || (g.is_auto && j <= i))) continue;
        const exact::GramVerdict v = exact::gram_verdict(s, th);
        if (v == exact::GramVerdict::In) {
          ++row_count[m][rh];
          ++col_count[n][cq];
        } else if (v == exact::GramVerdict::Undecided) {
          undecided |= 1ull << ((m * 4 + n) * 4 + q);
        }
      }
  if constexpr (Out == GramOutput::Distances) return;
  const unsigned settled_in = undecided ? queue_undecided<Out>(g, undecided, row0 + wm + gq, col0 + wn + 2 * t4) : 0u;

  unsigned total = settled_in;
#pragma unroll
  for (int m = 0; m < 4; ++m) total += row_count[m][0] + row_count[m][1];
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) total += __shfl_xor_sync(0xffffffffu, total, off);
  if (lane == 0 && total) atomicAdd(g.total, static_cast<unsigned long long>(total));
  if constexpr (Out == GramOutput::PerPoint) {
    // A row's counts are spread over the 4 lanes of its quad, a column's over the 8 quads.
#pragma unroll
    for (int m = 0; m < 4; ++m)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        unsigned v = row_count[m][h];
        v += __shfl_xor_sync(0xffffffffu, v, 1);
        v += __shfl_xor_sync(0xffffffffu, v, 2);
        if (t4 == 0 && v) atomicAdd(g.count_a + g.order_a[row0 + wm + m * 16 + gq + 8 * h], static_cast<unsigned long long>(v));
      }
#pragma unroll
    for (int n = 0; n < 4; ++n)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        unsigned v = col_count[n][h];
        v += __shfl_xor_sync(0xffffffffu, v, 4);
        v += __shfl_xor_sync(0xffffffffu, v, 8);
        v += __shfl_xor_sync(0xffffffffu, v, 16);
        if (gq == 0 && v) atomicAdd(g.count_b + g.order_b[col0 + wn + n * 8 + 2 * t4 + h], static_cast<unsigned long long>(v));
      }
  }
}

// The queued pairs (Gram rows) of a slab (min(queued, capacity)); the host then zeroes the queue.
// Euclidean rows with their terms take a first look (first_look: the FP16 rows' distance summed in
// float64, 4 bytes a coordinate a pair); what it leaves undecided, and every cosine pair, the rule
// decides on the float64 rows (16 bytes a coordinate).
__global__ void __launch_bounds__(kThreads) settle_queue(GramArgs g, unsigned long long* settled, unsigned long long* looked) {
  const unsigned long long n = min(*g.queued, g.capacity);
  if (blockIdx.x == 0 && threadIdx.x == 0 && n) atomicAdd(settled, n);
  unsigned long long mine = 0, decided = 0;
  for (unsigned long long t = blockIdx.x * static_cast<unsigned long long>(kThreads) + threadIdx.x; t < n;
       t += static_cast<unsigned long long>(gridDim.x) * kThreads) {
    const uint2 p = g.queue[t];
    const exact::GramVerdict v = g.rho_a ? first_look(g, p.x, p.y) : exact::GramVerdict::Undecided;
    decided += v != exact::GramVerdict::Undecided;
    if (v == exact::GramVerdict::Out) continue;
    const std::uint32_t oi = g.order_a[p.x], oj = g.order_b[p.y];
    if (v == exact::GramVerdict::Undecided) {
      const double key = pair_key(g, oi, oj);
      if (!(key >= g.lo && key < g.hi)) continue;
    }
    ++mine;
    if (g.count_a) {
      atomicAdd(g.count_a + oi, 1ull);
      atomicAdd(g.count_b + oj, 1ull);
    }
  }
  for (int off = 16; off > 0; off >>= 1) {
    mine += __shfl_xor_sync(0xffffffffu, mine, off);
    decided += __shfl_xor_sync(0xffffffffu, decided, off);
  }
  if (threadIdx.x % 32 == 0 && mine) atomicAdd(g.total, mine);
  if (threadIdx.x % 32 == 0 && decided) atomicAdd(looked, decided);
}

}  // namespace

GramJoinResult run_gram_join(const VectorJoinInput& in, const GramRows& ga, const GramRows* gb, std::size_t queue_capacity) {
  const bool cross = gb && !in.is_auto;
  const DeviceGramRows da(ga, in.a);
  const DeviceGramRows db = cross ? DeviceGramRows(*gb, in.b) : DeviceGramRows();
  return run_gram_join(in, da, cross ? &db : nullptr, queue_capacity);
}

GramJoinResult run_gram_join(const VectorJoinInput& in, const DeviceGramRows& da, const DeviceGramRows* db_or_null,
                             std::size_t queue_capacity, const DeviceGramKnnRows* ka, const DeviceGramKnnRows* kb) {
  GramJoinResult out;
  const bool per_point = in.output == VectorJoinOutput::PerPoint;
  if (in.output == VectorJoinOutput::Pairs) throw Error(ErrorKind::Internal, "the Gram tiles' counts take no pairs");
  const DeviceGramRows& db = db_or_null && !in.is_auto ? *db_or_null : da;
  if (!da.prepared() || !db.prepared() || da.rule.size() != da.n * static_cast<std::size_t>(da.dim) ||
      db.rule.size() != db.n * static_cast<std::size_t>(db.dim))
    throw Error(ErrorKind::Internal, "the Gram tiles need both sets' Gram rows and rule rows on the device");
  if (per_point) {
    out.count_a.assign(in.na, 0);
    if (!in.is_auto) out.count_b.assign(in.nb, 0);
  }
  // Distances' keys are >= 0 (cosine keys may lie an ulp below 0).
  if (in.na == 0 || in.nb == 0 || (!in.cosine && !(in.hi > 0)) || !(in.lo < in.hi)) return out;

  out.queue_capacity = std::max<std::size_t>(queue_capacity, 1);
  DeviceBuffer<uint2> queue(out.queue_capacity);
  DeviceBuffer<unsigned long long> counters(5);  // total, queued, settled, settled inline, decided by the first look
  counters.zero();
  DeviceBuffer<unsigned long long> count_a(per_point ? in.na : 0), count_b(per_point && !in.is_auto ? in.nb : 0);
  count_a.zero();
  count_b.zero();

  GramArgs g = gram_args(da, db);
  g.format = gram_join_format(in.gram_fold);
  g.is_auto = in.is_auto;
  g.lo = in.lo;
  g.hi = in.hi;
  g.cosine = in.cosine;
  g.range = tile_range(in.lo, in.hi, in.cosine);
  use_distance_space(g, da, db, ka, in.is_auto ? nullptr : kb);
  g.total = counters.get();
  g.queued = counters.get() + 1;
  g.settled_inline = counters.get() + 3;
  g.queue = queue.get();
  g.capacity = out.queue_capacity;
  if (per_point) {
    g.count_a = count_a.get();
    g.count_b = in.is_auto ? count_a.get() : count_b.get();
  }

  const std::size_t tiles_a = da.n_padded / kTile, tiles_b = db.n_padded / kTile;
  // About 2^15 blocks a slab, as the float64 kernel; the queue is drained after each.
  const std::size_t slab = std::clamp<std::size_t>((std::size_t(1) << 15) / tiles_b, 1, 65535);
  const std::size_t fold = gram_fold_bytes(g);
  out.fold = fold ? g.format.fold : 0;
  allow_fold(gram_tiles<GramOutput::PerPoint>, g);
  allow_fold(gram_tiles<GramOutput::Total>, g);
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t first = 0; first < tiles_a; first += slab) {
    g.first_tile = static_cast<std::uint32_t>(first);
    const dim3 grid(static_cast<unsigned>(tiles_b), static_cast<unsigned>(std::min(slab, tiles_a - first)));
    if (per_point)
      gram_tiles<GramOutput::PerPoint><<<grid, kThreads, fold>>>(g);
    else
      gram_tiles<GramOutput::Total><<<grid, kThreads, fold>>>(g);
    TWOBODY_CUDA_CHECK_LAUNCH("gram_tiles");
    settle_queue<<<264, kThreads>>>(g, counters.get() + 2, counters.get() + 4);
    TWOBODY_CUDA_CHECK_LAUNCH("settle_queue");
    TWOBODY_CUDA_CHECK(cudaMemsetAsync(g.queued, 0, sizeof(unsigned long long), 0));
    if (in.progress) {
      TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
      in.progress(static_cast<double>(std::min(tiles_a, first + slab)) / static_cast<double>(tiles_a));
    }
  }
  TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
  out.kernel_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  unsigned long long c[5];
  counters.download(c, 5);
  out.total = c[0];
  out.settled = c[2] + c[3];
  out.settled_inline = c[3];
  out.first_look = c[4];
  if (per_point) {
    count_a.download(reinterpret_cast<unsigned long long*>(out.count_a.data()), in.na);
    if (!in.is_auto) count_b.download(reinterpret_cast<unsigned long long*>(out.count_b.data()), in.nb);
  }
  return out;
}

GramDistances gram_distances(const GramRows& ga, const GramRows& gb, int fold) {
  GramDistances out;
  const std::size_t pairs = ga.n * gb.n;
  if (pairs == 0) return out;
  const DeviceGramRows da(ga), db(gb);
  DeviceBuffer<float> d(pairs), p(pairs);
  GramArgs g = gram_args(da, db, ga, gb);
  g.format = gram_join_format(fold);
  g.distances = d.get();
  g.products = p.get();
  g.range = exact::gram_range(0, 1);  // (verdicts unused)
  const dim3 grid(static_cast<unsigned>(gb.n_padded / kTile), static_cast<unsigned>(ga.n_padded / kTile));
  allow_fold(gram_tiles<GramOutput::Distances>, g);
  gram_tiles<GramOutput::Distances><<<grid, kThreads, gram_fold_bytes(g)>>>(g);
  TWOBODY_CUDA_CHECK_LAUNCH("gram_tiles");
  TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
  out.distances = d.download();
  out.products = p.download();
  return out;
}

}  // namespace twobody::cuda
