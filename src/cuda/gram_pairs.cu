// Pair lists (Euclidean and cosine) on the FP16 Gram tiles (gram_tiles.hpp: run_gram_pairs). The tiles are
// gram_tiles.cu's (gram_tile_core.cuh); the epilogue emits instead of counting. Each warp walks
// its 64 x 32 pairs in one fixed order (fragment m, n, element q; lanes by index within a step);
// per step a ballot of the certain-in and undecided pairs gives each lane its rank, and the warp
// claims the step's slots with one atomicAdd. A slot is (i | undecided << 31, j) in the sets'
// indices (rows < 2^31: choose_vector_path). When the buffer cannot take a step's pairs the warp
// writes what fits, records (tile, warp, pairs written) and stops; the host launches the stopped
// tiles again, each warp skipping the pairs it wrote. After every launch settle_pairs computes
// every buffered pair's float64 key by the rule (stored order, no FMA), keeps the certain ones and
// the undecided ones in range, and compacts them as PairRecords for the host.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/cuda/gram_tile_core.cuh"
#include "twobody/detail/cuda/gram_tiles.hpp"
#include "twobody/detail/cuda/warp_slots.cuh"

namespace twobody::cuda {

namespace {

using namespace gram_core;

constexpr std::uint32_t kUndecided = 0x80000000u;

__global__ void __launch_bounds__(kThreads, 2) gram_pair_tiles(GramArgs g) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  std::uint32_t I, J;
  unsigned long long skip = 0;  // this warp's pairs written by earlier launches
  if (g.task_tile) {
    const unsigned long long t = g.task_tile[blockIdx.x];
    I = static_cast<std::uint32_t>(t / g.tiles_b);
    J = static_cast<std::uint32_t>(t % g.tiles_b);
    skip = g.task_skip[blockIdx.x * static_cast<unsigned long long>(kWarps) + warp];
  } else {
    I = g.first_tile + blockIdx.y;
    J = blockIdx.x;
  }
  if (g.is_auto && J < I) return;  // below the diagonal: the transposed tile's pairs
  __shared__ alignas(16) std::uint16_t sa[2][kTile * kStride];
  __shared__ alignas(16) std::uint16_t sb[2][kTile * kStride];
  __shared__ exact::GramTileThresholds s_th;
  extern __shared__ __align__(16) float fold_sums[];  // gram_fold_bytes(g) of them (read as float2)
  const int gq = lane / 4, t4 = lane % 4;
  const int wm = (warp / 4) * 64, wn = (warp % 4) * 32;
  const std::size_t row0 = static_cast<std::size_t>(I) * kTile, col0 = static_cast<std::size_t>(J) * kTile;
  float c[4][4][4];
  gram_mainloop(g, row0, col0, wm, wn, sa, sb, c, [&] {
    if (threadIdx.x == 0) s_th = tile_thresholds(g, I, J);  // (read after the mainloop's barriers)
  }, fold_sums);
  if (skip == kAllWritten) return;  // (no barrier follows)

  float ni[4][2], inv_i[4][2], nj[4][2], inv_j[4][2];
  tile_norms(g, row0, col0, wm, wn, ni, inv_i, nj, inv_j);
  const exact::GramTileThresholds th = s_th;
  const bool interior = tile_is_interior(g, I, J, row0, col0);
  // The verdicts first (unrolled: the fragments stay in registers), as two masks over the
  // warp's fixed order of elements e = (4m + n)·4 + q; then the emission, one rolled loop over e
  // (unrolled, its ballots, atomics and stores made the kernel ~10 000 instructions).
  unsigned long long emit_bits = 0, undecided_bits = 0;
#pragma unroll
  for (int m = 0; m < 4; ++m)
#pragma unroll
    for (int n = 0; n < 4; ++n)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int rh = q >> 1, cq = q & 1;
        const std::uint32_t i = static_cast<std::uint32_t>(row0) + wm + m * 16 + gq + 8 * rh;
        const std::uint32_t j = static_cast<std::uint32_t>(col0) + wn + n * 8 + 2 * t4 + cq;
        if (interior || (i < g.na && j < g.nb && !(g.is_auto && j <= i))) {
          const float s = gram_distance(c[m][n][q], ni[m][rh], nj[n][cq], inv_i[m][rh], inv_j[n][cq]);
          const exact::GramVerdict v = exact::gram_verdict(s, th);
          const unsigned long long bit = 1ull << ((m * 4 + n) * 4 + q);
          if (v != exact::GramVerdict::Out) emit_bits |= bit;
          if (v == exact::GramVerdict::Undecided) undecided_bits |= bit;
        }
      }
  unsigned long long emitted = 0;  // the warp's pairs before this step, in its order
  for (int e = 0; e < 64; ++e) {
    const bool emit = (emit_bits >> e) & 1;
    const WarpSlots w = claim_warp_slots(emit, skip, emitted, g.pair_count);  // (warp-uniform, as below)
    if (!w.need) continue;
    if (w.writes(emit)) {
      const unsigned long long at = w.at();
      const int m = e / 16, n = (e / 4) % 4, q = e % 4;
      const std::size_t i = row0 + wm + m * 16 + gq + 8 * (q >> 1), j = col0 + wn + n * 8 + 2 * t4 + (q & 1);
      const bool undecided = (undecided_bits >> e) & 1;
      if (at < g.pair_capacity) g.pairs[at] = make_uint2(g.order_a[i] | (undecided ? kUndecided : 0u), g.order_b[j]);
    }
    if (w.overflows(g.pair_capacity)) {
      // The buffer is full: this warp stops after the pairs that fit, to be resumed there.
      if (lane == 0) {
        const unsigned long long s = atomicAdd(g.stopped, 1ull);
        const unsigned long long tile = static_cast<unsigned long long>(I) * g.tiles_b + J;
        g.stopped_list[s] = make_ulonglong2(tile * kWarps + warp, w.resume_at(emitted, g.pair_capacity));
      }
      return;
    }
  }
}

// The launch's `used` buffered pairs settled and compacted into `out` (counters: [0] pairs kept,
// [1] undecided pairs settled, [2] certain-in pairs the rule puts out: the bound broken, never
// expected).
__global__ void __launch_bounds__(kThreads) settle_pairs(GramArgs g, unsigned long long used, PairRecord* out,
                                                         unsigned long long* counters) {
  const int lane = threadIdx.x % 32;
  const unsigned below = (1u << lane) - 1;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * kThreads;
  unsigned long long settled = 0, broken = 0;
  // Whole warps iterate together (the ballot): t0 is the warp's first slot this round.
  for (unsigned long long t0 = blockIdx.x * static_cast<unsigned long long>(kThreads) + (threadIdx.x - lane); t0 < used;
       t0 += stride) {
    const unsigned long long t = t0 + lane;
    bool keep = false;
    PairRecord r{};
    if (t < used) {
      const uint2 p = g.pairs[t];
      const bool undecided = (p.x & kUndecided) != 0;
      std::uint32_t i = p.x & ~kUndecided, j = p.y;
      const double key = pair_key(g, i, j);
      keep = key >= g.lo && key < g.hi;
      settled += undecided;
      broken += !undecided && !keep;
      if (g.is_auto && i > j) {  // the norm sort's order: auto pairs keep i < j
        const std::uint32_t x = i;
        i = j;
        j = x;
      }
      r = PairRecord{i, j, g.cosine ? key : sqrt(key)};  // the value: cpu::natural_of_vector_key
    }
    const unsigned mask = __ballot_sync(0xffffffffu, keep);
    if (!mask) continue;
    unsigned long long base = 0;
    if (lane == 0) base = atomicAdd(counters, static_cast<unsigned long long>(__popc(mask)));
    base = __shfl_sync(0xffffffffu, base, 0);
    if (keep) out[base + __popc(mask & below)] = r;
  }
  for (int off = 16; off > 0; off >>= 1) {
    settled += __shfl_xor_sync(0xffffffffu, settled, off);
    broken += __shfl_xor_sync(0xffffffffu, broken, off);
  }
  if (lane == 0 && settled) atomicAdd(counters + 1, settled);
  if (lane == 0 && broken) atomicAdd(counters + 2, broken);
}

// The tiles of the next launch from the warps a full buffer stopped: per tile, each warp's pairs
// written (kAllWritten for the warps that finished), tiles in increasing order.
void resume_tasks(const std::vector<ulonglong2>& stopped, std::vector<unsigned long long>& tiles,
                  std::vector<unsigned long long>& skips) {
  std::map<unsigned long long, std::size_t> at;
  for (const ulonglong2& s : stopped) at.emplace(s.x / kWarps, 0);
  tiles.clear();
  for (auto& [tile, k] : at) {
    k = tiles.size();
    tiles.push_back(tile);
  }
  skips.assign(tiles.size() * kWarps, kAllWritten);
  for (const ulonglong2& s : stopped) skips[at[s.x / kWarps] * kWarps + s.x % kWarps] = s.y;
}

}  // namespace

GramPairsResult run_gram_pairs(const VectorJoinInput& in, const GramRows& ga, const GramRows* gb, std::size_t buffer_pairs,
                               const std::function<void(std::vector<PairRecord>&)>& take) {
  const bool cross = gb && !in.is_auto;
  const DeviceGramRows da(ga, in.a);
  const DeviceGramRows db = cross ? DeviceGramRows(*gb, in.b) : DeviceGramRows();
  return run_gram_pairs(in, da, cross ? &db : nullptr, buffer_pairs, take);
}

GramPairsResult run_gram_pairs(const VectorJoinInput& in, const DeviceGramRows& da, const DeviceGramRows* db_or_null,
                               std::size_t buffer_pairs, const std::function<void(std::vector<PairRecord>&)>& take,
                               const DeviceGramKnnRows* ka, const DeviceGramKnnRows* kb) {
  GramPairsResult out;
  if (in.output != VectorJoinOutput::Pairs) throw Error(ErrorKind::Internal, "the Gram tiles' pair lists take pairs only");
  const DeviceGramRows& db = db_or_null && !in.is_auto ? *db_or_null : da;
  if (!da.prepared() || !db.prepared() || da.rule.size() != da.n * static_cast<std::size_t>(da.dim) ||
      db.rule.size() != db.n * static_cast<std::size_t>(db.dim))
    throw Error(ErrorKind::Internal, "the Gram tiles need both sets' Gram rows and rule rows on the device");
  out.buffer_pairs = std::max<std::size_t>(buffer_pairs, 1);
  // Distances' keys are >= 0 (cosine keys may lie an ulp below 0).
  if (in.na == 0 || in.nb == 0 || (!in.cosine && !(in.hi > 0)) || !(in.lo < in.hi)) return out;

  const std::size_t tiles_a = da.n_padded / kTile, tiles_b = db.n_padded / kTile;
  // About 2^15 blocks a slab, as the counts; a launch has at most that many blocks.
  const std::size_t slab = std::clamp<std::size_t>((std::size_t(1) << 15) / tiles_b, 1, 65535);
  const std::size_t max_blocks = slab * tiles_b;
  DeviceBuffer<uint2> pairs(out.buffer_pairs);
  DeviceBuffer<PairRecord> kept(out.buffer_pairs);
  DeviceBuffer<unsigned long long> counters(5);  // buffered, stopped; kept, settled, broken
  DeviceBuffer<ulonglong2> stopped_list(max_blocks * kWarps);
  DeviceBuffer<unsigned long long> task_tile(max_blocks), task_skip(max_blocks * kWarps);

  GramArgs g = gram_args(da, db);
  g.format = gram_join_format(in.gram_fold);
  g.is_auto = in.is_auto;
  g.lo = in.lo;
  g.hi = in.hi;
  g.cosine = in.cosine;
  g.range = tile_range(in.lo, in.hi, in.cosine);
  use_distance_space(g, da, db, ka, in.is_auto ? nullptr : kb);
  g.pairs = pairs.get();
  g.pair_count = counters.get();
  g.stopped = counters.get() + 1;
  g.pair_capacity = out.buffer_pairs;
  g.stopped_list = stopped_list.get();
  g.tiles_b = static_cast<std::uint32_t>(tiles_b);

  std::vector<PairRecord> batch;
  std::vector<ulonglong2> stopped;
  std::vector<unsigned long long> tiles, skips;
  unsigned long long broken = 0;
  allow_fold(gram_pair_tiles, g);
  const std::size_t fold = gram_fold_bytes(g);
  out.fold = fold ? g.format.fold : 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t first = 0; first < tiles_a; first += slab) {
    g.first_tile = static_cast<std::uint32_t>(first);
    g.task_tile = nullptr;
    g.task_skip = nullptr;
    dim3 grid(static_cast<unsigned>(tiles_b), static_cast<unsigned>(std::min(slab, tiles_a - first)));
    for (;;) {
      counters.zero();
      gram_pair_tiles<<<grid, kThreads, fold>>>(g);
      TWOBODY_CUDA_CHECK_LAUNCH("gram_pair_tiles");
      ++out.launches;
      unsigned long long c[2];
      counters.download(c, 2);
      const unsigned long long used = std::min<unsigned long long>(c[0], out.buffer_pairs);
      if (used > 0) {
        settle_pairs<<<static_cast<unsigned>(std::min<unsigned long long>((used + kThreads - 1) / kThreads, 1056)), kThreads>>>(
            g, used, kept.get(), counters.get() + 2);
        TWOBODY_CUDA_CHECK_LAUNCH("settle_pairs");
        unsigned long long s[3];
        TWOBODY_CUDA_CHECK(cudaMemcpy(s, counters.get() + 2, sizeof s, cudaMemcpyDeviceToHost));
        out.settled += s[1];
        broken += s[2];
        batch.resize(s[0]);
        if (s[0] > 0) kept.download(batch.data(), s[0]);
        ++out.batches;
        out.pairs += batch.size();
        if (!batch.empty()) take(batch);
      }
      if (c[1] == 0) break;
      // The buffer filled: the stopped warps' tiles again, each warp after the pairs it wrote.
      stopped.resize(c[1]);
      stopped_list.download(stopped.data(), stopped.size());
      resume_tasks(stopped, tiles, skips);
      task_tile.upload(tiles);
      task_skip.upload(skips);
      g.task_tile = task_tile.get();
      g.task_skip = task_skip.get();
      grid = dim3(static_cast<unsigned>(tiles.size()));
      ++out.resumed;
    }
    if (in.progress) in.progress(static_cast<double>(std::min(tiles_a, first + slab)) / static_cast<double>(tiles_a));
  }
  TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
  out.kernel_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (broken > 0)
    throw Error(ErrorKind::Internal, "the Gram tiles' bound was broken: " + std::to_string(broken) +
                                         " pairs certain to be in range are out by the rule");
  return out;
}

}  // namespace twobody::cuda
