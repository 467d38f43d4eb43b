// Exact k-NN on the FP16 Gram tiles (gram_knn.hpp). A block of 8 warps owns 128 queries (a tile
// of the norm-sorted rows) and sweeps the partner tiles outward from the one of nearest norms, in
// turn upward and downward; each tile's 128 x 128 Gram products come from the joins' mainloop
// (gram_core::gram_mainloop), and the epilogue gives each pair s̃ from the rounded rows' norms N̂,
// compares it with its query's threshold, and buffers the few that pass (gram_knn_select.cuh:
// buffers, warp merges, the lists in device memory). A direction ends when the norm gap alone puts
// every pair beyond every query's U (rows sorted by norm: the gap only grows that way). After the
// sweep a second kernel gives each query a warp: the list's entries with lower key <= U are the
// candidates, their keys computed by the rule (float64, stored order, no FMA: the CPU's key bit
// for bit) on the original rows, and the k smallest by (key, index) found by rank. Queries whose
// list dropped a possible candidate are flagged for the float64 kernel. Queries go in launches of
// whole waves of blocks (progress and cancellation between them).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/cuda/gram_knn.hpp"
#include "twobody/detail/cuda/gram_knn_select.cuh"
#include "twobody/error.hpp"

namespace twobody::cuda {

namespace {

using namespace gram_knn;
using gram_core::GramArgs;

// Thread 0: the sweep's first tile. Self: the query tile itself. Cross: the first partner tile
// whose largest norm reaches the queries' smallest (the norms nearest the queries'). And what
// next_tile reads at every tile: the query tile's bound inputs, the norm gap's C.
__device__ void start_sweep(const KnnArgs& p, KnnShared& s, std::uint32_t I) {
  int j0 = static_cast<int>(I);
  if (!p.self) {
    const double n = p.blk_a[I].n_min;
    int lo = 0, hi = static_cast<int>(p.tiles_b) - 1;
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      if (p.blk_b[mid].n_max < n)
        lo = mid + 1;
      else
        hi = mid;
    }
    j0 = lo;
  }
  s.query_block = p.blk_a[I];
  s.far = exact::gram_knn_bound(p.g.format, p.g.dim, 0, 0, 0, 0, s.query_block.n_max, p.blk_b[p.tiles_b - 1].n_max);
  s.up = j0;
  s.down = j0 - 1;
  s.turn = 0;
  s.swept = 0;
  s.pruned = 0;
}

// Warp 0: the next partner tile (s.tile, -1 when none is left), its bound, and every query's
// threshold for it. A tile whose norm gap from the query tile puts every pair's key beyond the
// largest U of the block's queries ends its direction: the tiles past it lie farther still, and
// U only falls. (C from the largest norms of both sets keeps the test monotone along the way.)
__device__ void next_tile(const KnnArgs& p, KnnShared& s, std::uint32_t I) {
  const int lane = threadIdx.x % 32;
  const std::size_t row0 = static_cast<std::size_t>(I) * kTile;
  float umax = 0;
  for (int r = lane; r < kTile; r += 32)
    if (row0 + r < p.g.na) umax = fmaxf(umax, s.bound[r]);
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) umax = fmaxf(umax, __shfl_xor_sync(0xffffffffu, umax, off));
  if (lane == 0) {
    const GramKnnBlock bi = s.query_block;
    const int tiles_b = static_cast<int>(p.tiles_b);
    int J = -1;
    while (J < 0 && (s.up < tiles_b || s.down >= 0)) {
      const bool go_up = s.up < tiles_b && (s.turn == 0 || s.down < 0);
      const int at = go_up ? s.up : s.down;
      const GramKnnBlock bj = p.blk_b[at];
      const double gap = go_up ? exact::outward_down(bj.n_min - bi.n_max) : exact::outward_down(bi.n_min - bj.n_max);
      // (Cosine rows all have norms near 1: no gap to prune by, and s.far is a distance's C.)
      if (!p.cosine && exact::gram_gap_exceeds(s.far, gap, umax)) {
        s.pruned += go_up ? static_cast<unsigned long long>(tiles_b - at) : static_cast<unsigned long long>(at + 1);
        if (go_up)
          s.up = tiles_b;
        else
          s.down = -1;
        continue;
      }
      J = at;
      if (go_up)
        ++s.up;
      else
        --s.down;
      s.turn ^= 1;
      ++s.swept;
      s.tile_bound = p.cosine ? exact::gram_cosine_knn_bound(p.g.format, p.g.dim, bi.m_max, bj.m_max, bi.rho_max,
                                                             bj.rho_max, bi.n_max, bj.n_max, bi.n_min, bj.n_min)
                              : block_knn_bound(p.g.format, p.g.dim, bi, bj);
    }
    s.tile = J;
  }
  __syncwarp();
  if (s.tile >= 0)
    for (int r = lane; r < kTile; r += 32) s.theta[r] = __double2float_ru(exact::gram_key_admits(s.tile_bound, s.bound[r]));
}

// The tile's epilogue: s̃ of each of the thread's 64 pairs against its query's threshold; the few
// that pass are buffered. A pair whose buffer is full is kept; the warps then merge the full
// buffers (thresholds fall) and the kept pairs are offered again, until none is left. Ends with
// the tile's buffered s̃ turned into keys and a barrier.
__device__ __forceinline__ void offer_tile(const KnnArgs& p, KnnShared& s, float (&c)[4][4][4], std::size_t row0,
                                           std::size_t col0, std::size_t lrow0) {
  const GramArgs& g = p.g;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, gq = lane / 4, t4 = lane % 4;
  const int wm = (warp / 4) * 64, wn = (warp % 4) * 32;
  {
    float ni[4][2], inv_i[4][2], nj[4][2], inv_j[4][2];
    gram_core::tile_norms(g, row0, col0, wm, wn, ni, inv_i, nj, inv_j);
#pragma unroll
    for (int m = 0; m < 4; ++m)
#pragma unroll
      for (int n = 0; n < 4; ++n)
#pragma unroll
        for (int q = 0; q < 4; ++q)
          c[m][n][q] = gram_core::gram_distance(c[m][n][q], ni[m][q >> 1], nj[n][q & 1], inv_i[m][q >> 1], inv_j[n][q & 1]);
  }
  // A pair buffered (or not a pair: padding, the query itself) becomes NaN, which no threshold
  // passes; one that fails its threshold would fail it again (thresholds only fall).
  const std::uint32_t i0 = static_cast<std::uint32_t>(row0), j0 = static_cast<std::uint32_t>(col0);
  for (;;) {
    float th[4][2];
#pragma unroll
    for (int m = 0; m < 4; ++m)
#pragma unroll
      for (int h = 0; h < 2; ++h) th[m][h] = s.theta[wm + m * 16 + gq + 8 * h];
    bool kept = false;
#pragma unroll
    for (int m = 0; m < 4; ++m)
#pragma unroll
      for (int n = 0; n < 4; ++n)
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const int rh = q >> 1;
          if (c[m][n][q] <= th[m][rh]) {
            const int r = wm + m * 16 + gq + 8 * rh;
            const std::uint32_t i = i0 + r, j = j0 + wn + n * 8 + 2 * t4 + (q & 1);
            bool done = true;
            if (i < g.na && j < g.nb && !(p.self && i == j)) {
              const int slot = atomicAdd(&s.pending[r], 1);
              if (slot < kPending) {
                s.buf_up[r][slot] = c[m][n][q];
                s.buf_row[r][slot] = j;
              } else {
                done = false;
              }
            }
            if (done)
              c[m][n][q] = NAN;
            else
              kept = true;
          }
        }
    if (!__syncthreads_or(kept)) break;
    for (int r = warp; r < kTile; r += kWarps)
      if (s.pending[r] >= kPending) merge(p, s, r, lrow0 + r);
    __syncthreads();
  }
  for (int r = warp; r < kTile; r += kWarps) settle_fresh(s, r);
  __syncthreads();
}

__global__ void __launch_bounds__(kThreads, 2) knn_tiles(KnnArgs p) {
  extern __shared__ __align__(16) unsigned char smem[];
  KnnShared& s = *reinterpret_cast<KnnShared*>(smem);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::uint32_t I = p.first_tile + blockIdx.x;
  const std::size_t row0 = static_cast<std::size_t>(I) * kTile;
  const std::size_t lrow0 = static_cast<std::size_t>(blockIdx.x) * kTile;  // the block's first row in the lists
  for (int r = threadIdx.x; r < kTile; r += kThreads) {
    s.theta[r] = INFINITY;
    s.bound[r] = INFINITY;
    s.dropped[r] = INFINITY;
    s.pending[r] = 0;
    s.fresh[r] = 0;
    s.filled[r] = 0;
  }
  if (threadIdx.x == 0) start_sweep(p, s, I);
  __syncthreads();
  if (warp == 0) next_tile(p, s, I);
  __syncthreads();
  while (s.tile >= 0) {
    const std::size_t col0 = static_cast<std::size_t>(s.tile) * kTile;
    float c[4][4][4];
    gram_core::gram_mainloop(p.g, row0, col0, (warp / 4) * 64, (warp % 4) * 32, s.sa, s.sb, c);
    offer_tile(p, s, c, row0, col0, lrow0);
    if (warp == 0) next_tile(p, s, I);
    __syncthreads();
  }
  for (int r = warp; r < kTile && row0 + r < p.g.na; r += kWarps) {
    if (s.pending[r] > 0) merge(p, s, r, lrow0 + r);
    if (lane == 0) p.ends[lrow0 + r] = QueryEnd{s.bound[r], s.dropped[r], static_cast<unsigned>(s.filled[r])};
  }
  if (threadIdx.x == 0) {
    atomicAdd(p.counters, s.swept);
    atomicAdd(p.counters + 1, s.pruned);
  }
}

struct RerankArgs {
  const float* list_lo;
  const std::uint32_t* list_row;
  const QueryEnd* ends;
  double* cand_key;  // per launch row: cap candidates
  std::uint32_t* cand_index;
  const std::uint32_t *order_a, *order_b;
  const double *rows_a, *rows_b;
  std::size_t first_row;  // the launch's first query row (sorted)
  std::size_t queries;    // real queries in the launch
  int dim;
  bool cosine;            // the rule's key 1 − a·b of normalised rows, else the squared distance
  unsigned k, cap;
  double* out_key;  // per launch row: k
  std::uint32_t* out_index;
  unsigned char* fallback;
  unsigned long long* candidates;
};

__device__ __forceinline__ bool key_before(double a, std::uint32_t i, double b, std::uint32_t j) {
  return a < b || (a == b && i < j);
}

// A warp a query: the candidates' keys by the rule and the k smallest (key, index) by rank, or the
// query flagged when its list may have dropped a candidate.
__global__ void __launch_bounds__(kThreads) knn_rerank(RerankArgs p) {
  const int lane = threadIdx.x % 32;
  const std::size_t q = static_cast<std::size_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (q >= p.queries) return;  // (whole warps)
  const QueryEnd e = p.ends[q];
  const int filled = static_cast<int>(e.filled), k = static_cast<int>(p.k);
  if (!(e.dropped > e.bound) || filled < k) {
    if (lane == 0) p.fallback[q] = 1;
    return;
  }
  const std::size_t dim = static_cast<std::size_t>(p.dim);
  const double* x = p.rows_a + static_cast<std::size_t>(p.order_a[p.first_row + q]) * dim;
  const float* lo = p.list_lo + q * p.cap;
  const std::uint32_t* rows = p.list_row + q * p.cap;
  double* ck = p.cand_key + q * p.cap;
  std::uint32_t* ci = p.cand_index + q * p.cap;
  const unsigned below = (1u << lane) - 1;
  int c = 0;
  for (int t0 = 0; t0 < filled; t0 += 32) {
    const int t = t0 + lane;
    const bool cand = t < filled && lo[t] <= e.bound;
    const unsigned mask = __ballot_sync(0xffffffffu, cand);
    if (cand) {
      const std::uint32_t j = p.order_b[rows[t]];
      const int at = c + __popc(mask & below);
      const double* y = p.rows_b + static_cast<std::size_t>(j) * dim;
      ck[at] = p.cosine ? gram_core::rule_cosine_key(x, y, p.dim) : gram_core::rule_key(x, y, p.dim);
      ci[at] = j;
    }
    c += __popc(mask);
  }
  if (c < k) {  // (cannot happen: the k entries of smallest upper key are candidates)
    if (lane == 0) p.fallback[q] = 1;
    return;
  }
  __syncwarp();
  for (int t = lane; t < c; t += 32) {
    const double key = ck[t];
    const std::uint32_t j = ci[t];
    int rank = 0;
    for (int u = 0; u < c; ++u) rank += key_before(ck[u], ci[u], key, j);
    if (rank < k) {
      p.out_key[q * p.k + rank] = key;
      p.out_index[q * p.k + rank] = j;
    }
  }
  if (lane == 0) {
    p.fallback[q] = 0;
    atomicAdd(p.candidates, static_cast<unsigned long long>(c));
  }
}

// Query tiles a launch: as many as device memory holds (at most 4 GiB and half of what is free),
// at most 8 waves of blocks and in whole waves when more than one, or the forced slab.
std::size_t launch_tiles(const GramKnnInput& in, std::size_t query_tiles, std::size_t concurrent) {
  const std::size_t free_b = available_device_bytes();
  const std::size_t k = static_cast<std::size_t>(in.k), cap = in.capacity;
  const std::size_t per_query = cap * (2 * sizeof(float) + sizeof(std::uint32_t) + sizeof(double) + sizeof(std::uint32_t)) +
                                k * (sizeof(double) + sizeof(std::uint32_t)) + sizeof(QueryEnd) + 1;
  const std::size_t budget = std::min<std::size_t>(free_b / 2, std::size_t(4) << 30);
  std::size_t tiles = std::clamp<std::size_t>(budget / (per_query * kTile), 1, std::min(query_tiles, 8 * concurrent));
  if (tiles > concurrent) tiles -= tiles % concurrent;
  if (in.slab_queries) tiles = std::clamp<std::size_t>(in.slab_queries / kTile, 1, tiles);
  return tiles;
}

}  // namespace

GramKnnResult run_gram_knn(const GramKnnInput& in, const GramRows& ga, const GramKnnRows& ka, const GramRows* gb,
                           const GramKnnRows* kb) {
  if (!in.is_auto && (!gb || !kb))
    throw Error(ErrorKind::Internal, "the Gram k-NN of two sets was handed one set's rows");
  const DeviceGramRows da(ga, in.a);
  const DeviceGramKnnRows dka(ka);
  const DeviceGramRows db = in.is_auto ? DeviceGramRows() : DeviceGramRows(*gb, in.b);
  const DeviceGramKnnRows dkb = in.is_auto ? DeviceGramKnnRows() : DeviceGramKnnRows(*kb);
  return run_gram_knn(in, da, dka, in.is_auto ? nullptr : &db, in.is_auto ? nullptr : &dkb);
}

GramKnnResult run_gram_knn(const GramKnnInput& in, const DeviceGramRows& da, const DeviceGramKnnRows& ka,
                           const DeviceGramRows* db_or_null, const DeviceGramKnnRows* kb_or_null) {
  const std::size_t partners = in.is_auto ? in.na - 1 : in.nb;
  if (in.na >= (std::size_t(1) << 31) || in.nb >= (std::size_t(1) << 31) || in.k < 1 ||
      static_cast<std::size_t>(in.k) > partners || in.capacity < static_cast<std::size_t>(in.k) ||
      (!in.is_auto && (!db_or_null || !kb_or_null)))
    throw Error(ErrorKind::Internal, "the Gram k-NN was handed k = " + std::to_string(in.k) + " for " +
                                         std::to_string(in.na) + " x " + std::to_string(in.nb) + " rows");
  const DeviceGramRows& db = in.is_auto ? da : *db_or_null;
  const DeviceGramKnnRows& kb = in.is_auto ? ka : *kb_or_null;
  const std::size_t d = static_cast<std::size_t>(in.dim);
  if (da.n != in.na || db.n != in.nb || !da.prepared() || !db.prepared() || da.rule.size() != in.na * d ||
      db.rule.size() != in.nb * d || ka.blocks.size() != da.n_padded / kTile || kb.blocks.size() != db.n_padded / kTile)
    throw Error(ErrorKind::Internal, "the Gram k-NN needs both sets' Gram rows, rule rows and row terms on the device");
  GramKnnResult out;
  const std::size_t k = static_cast<std::size_t>(in.k), cap = in.capacity;
  out.capacity = cap;
  out.index.resize(in.na * k);
  out.key.resize(in.na * k);
  const std::vector<std::uint32_t> order_a = da.order.download();

  KnnArgs p{};
  p.g = gram_core::gram_args(da, db);
  p.g.norm_a = ka.norm2.get();
  p.g.norm_b = kb.norm2.get();
  p.blk_a = ka.blocks.get();
  p.blk_b = kb.blocks.get();
  p.tiles_b = static_cast<std::uint32_t>(db.n_padded / kTile);
  p.self = in.is_auto;
  p.cosine = in.cosine;
  p.k = static_cast<unsigned>(k);
  p.cap = static_cast<unsigned>(cap);

  const int smem = static_cast<int>(sizeof(KnnShared));
  TWOBODY_CUDA_CHECK(cudaFuncSetAttribute(knn_tiles, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int dev = 0, sms = 0, per_sm = 0;
  TWOBODY_CUDA_CHECK(cudaGetDevice(&dev));
  TWOBODY_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  TWOBODY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, knn_tiles, kThreads, smem));
  const std::size_t query_tiles = da.n_padded / kTile;
  const std::size_t tiles = launch_tiles(in, query_tiles, static_cast<std::size_t>(std::max(1, sms * std::max(per_sm, 1))));
  const std::size_t rows = tiles * kTile;
  out.slab_queries = rows;
  DeviceBuffer<float> list_up(rows * cap), list_lo(rows * cap);
  DeviceBuffer<std::uint32_t> list_row(rows * cap), cand_index(rows * cap), out_index(rows * k);
  DeviceBuffer<double> cand_key(rows * cap), out_key(rows * k);
  DeviceBuffer<QueryEnd> ends(rows);
  DeviceBuffer<unsigned char> fallback(rows);
  DeviceBuffer<unsigned long long> counters(3);  // tiles swept, pruned; candidates
  counters.zero();
  p.list_up = list_up.get();
  p.list_lo = list_lo.get();
  p.list_row = list_row.get();
  p.ends = ends.get();
  p.counters = counters.get();

  RerankArgs rr{};
  rr.list_lo = list_lo.get();
  rr.list_row = list_row.get();
  rr.ends = ends.get();
  rr.cand_key = cand_key.get();
  rr.cand_index = cand_index.get();
  rr.order_a = da.order.get();
  rr.order_b = db.order.get();
  rr.rows_a = da.rule.get();
  rr.rows_b = db.rule.get();
  rr.dim = in.dim;
  rr.cosine = in.cosine;
  rr.k = p.k;
  rr.cap = p.cap;
  rr.out_key = out_key.get();
  rr.out_index = out_index.get();
  rr.fallback = fallback.get();
  rr.candidates = counters.get() + 2;

  std::vector<double> keys(rows * k);
  std::vector<std::uint32_t> index(rows * k);
  std::vector<unsigned char> flags(rows);
  for (std::size_t first = 0; first < query_tiles; first += tiles) {
    const std::size_t n_tiles = std::min(tiles, query_tiles - first), row0 = first * kTile;
    const std::size_t queries = std::min(n_tiles * kTile, in.na - row0);
    const auto t0 = std::chrono::steady_clock::now();
    p.first_tile = static_cast<std::uint32_t>(first);
    knn_tiles<<<static_cast<unsigned>(n_tiles), kThreads, smem>>>(p);
    TWOBODY_CUDA_CHECK_LAUNCH("knn_tiles");
    rr.first_row = row0;
    rr.queries = queries;
    knn_rerank<<<static_cast<unsigned>((queries + kWarps - 1) / kWarps), kThreads>>>(rr);
    TWOBODY_CUDA_CHECK_LAUNCH("knn_rerank");
    TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
    out.kernel_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++out.launches;
    out_key.download(keys.data(), queries * k);
    out_index.download(index.data(), queries * k);
    fallback.download(flags.data(), queries);
    for (std::size_t q = 0; q < queries; ++q) {
      const std::size_t oi = order_a[row0 + q];
      if (flags[q]) {
        out.fallback.push_back(static_cast<std::uint32_t>(oi));
        continue;
      }
      std::copy_n(keys.data() + q * k, k, out.key.data() + oi * k);
      std::copy_n(index.data() + q * k, k, out.index.data() + oi * k);
    }
    if (in.progress) in.progress(static_cast<double>(first + n_tiles) / static_cast<double>(query_tiles));
  }
  std::sort(out.fallback.begin(), out.fallback.end());
  unsigned long long c[3];
  counters.download(c, 3);
  out.tiles = c[0];
  out.pruned = c[1];
  out.candidates = c[2];
  return out;
}

}  // namespace twobody::cuda
