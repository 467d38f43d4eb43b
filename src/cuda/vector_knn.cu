// The float64 k-NN kernel (vector_knn.hpp). A block owns 64 queries and sweeps the partners 64 at
// a time: the tile's keys by the join kernel's arithmetic (vector_key_tiles.cuh) into shared
// memory, then each of its 8 warps offers the tile to its 8 queries. A query keeps its k best
// (key, index) sorted in device memory and the threshold tau = its k-th; a candidate before tau in
// (key, index) order goes to the query's buffer of 128, and a full buffer is sorted by the warp
// (bitonic, in shared memory) and merged with the list, every entry's place found by its rank in
// the other list. Tau only falls, so a candidate dropped is never among the k best; the order is
// total (indices are distinct), so the lists are the CPU's heaps' exactly, ties to the smaller index.
// The queries go in slabs whose lists fit device memory, the partners of a slab in launches of
// about 2^16 tiles, with the lists' state kept between launches (progress and cancellation).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/cuda/tuning_policy.hpp"
#include "twobody/detail/cuda/vector_key_tiles.cuh"
#include "twobody/detail/cuda/vector_knn.hpp"

namespace twobody::cuda {

namespace {

using vector_keys::kPer;
using vector_keys::kSide;
using vector_keys::kThreads;
using vector_keys::kTile;

constexpr int kWarps = kThreads / 32;
constexpr int kBuffer = 128;  // candidates a query holds before a merge (a power of 2, >= 64)
constexpr std::size_t kLaunchTiles = std::size_t(1) << 16;  // query tiles x partner tiles a launch
constexpr unsigned kNoIndex = 0xffffffffu;  // with key +inf: after every real entry

// A query's lists between launches.
struct QueryState {
  unsigned filled;   // entries of its best list (k once the sweep has seen k partners)
  unsigned pending;  // entries of its buffer
  unsigned side;     // which of its two best lists is the current one
};

struct KnnArgs {
  const double* a;
  const double* b;
  std::size_t na, nb;
  int dim;
  bool is_auto, cosine;
  const std::uint32_t* own;           // null, or each query's own index among the partners (is_auto)
  unsigned k;
  std::size_t first_query;            // the slab's first query
  std::size_t tile_begin, tile_end;   // partner tiles of this launch
  bool last;                          // the sweep's last launch: merge what is pending, write the lists
  double* best_key;                   // slab x 2k: query q's list `side` at [q * 2k + side * k]
  unsigned* best_j;
  double* buf_key;                    // slab x kBuffer
  unsigned* buf_j;
  QueryState* state;                  // slab
  double* out_key;                    // slab x k
  unsigned* out_j;
};

// The order of the lists: by key, then by index (as the CPU's std::pair<double, index>).
__device__ inline bool before(double ka, unsigned ja, double kb, unsigned jb) {
  return ka < kb || (ka == kb && ja < jb);
}

// Entries of the sorted list (key, j)[0, n) before (x, xj).
__device__ inline unsigned rank_in(const double* key, const unsigned* j, unsigned n, double x, unsigned xj) {
  unsigned lo = 0, hi = n;
  while (lo < hi) {
    const unsigned mid = (lo + hi) / 2;
    if (before(key[mid], j[mid], x, xj))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// One warp's shared memory for a merge: a buffer sorted.
struct SortArea {
  double key[kBuffer];
  unsigned j[kBuffer];
};

struct BlockShared {
  double tile[kTile * (kTile + 1)];  // the staged rows, then the tile's keys [query][partner]
  SortArea sort[kWarps];
  double tau_key[kTile];             // per query: its k-th entry, or (+inf, kNoIndex) until k
  unsigned tau_j[kTile];
  QueryState st[kTile];
};

// Query `r` of the block (slab row q): its buffer sorted and merged with its current list into
// `to_key`/`to_j` (the other list, or the output): each entry's place is its rank in its own list
// plus its rank in the other, and places from k on are dropped. Called by the whole warp.
__device__ void merge(const KnnArgs& g, BlockShared& s, SortArea& area, int r, std::size_t q, double* to_key,
                      unsigned* to_j) {
  const int lane = threadIdx.x % 32;
  const QueryState st = s.st[r];
  const unsigned c = st.pending, m = st.filled, k = g.k;
  for (int t = lane; t < kBuffer; t += 32) {
    const bool real = static_cast<unsigned>(t) < c;
    area.key[t] = real ? g.buf_key[q * kBuffer + t] : INFINITY;
    area.j[t] = real ? g.buf_j[q * kBuffer + t] : kNoIndex;
  }
  __syncwarp();
  for (int size = 2; size <= kBuffer; size *= 2)
    for (int stride = size / 2; stride > 0; stride /= 2) {
      for (int t = lane; t < kBuffer / 2; t += 32) {
        const int lo = 2 * stride * (t / stride) + t % stride, hi = lo + stride;
        const bool ascending = (lo & size) == 0;
        const bool hi_first = before(area.key[hi], area.j[hi], area.key[lo], area.j[lo]);
        if (hi_first == ascending) {
          const double kk = area.key[lo];
          const unsigned jj = area.j[lo];
          area.key[lo] = area.key[hi];
          area.j[lo] = area.j[hi];
          area.key[hi] = kk;
          area.j[hi] = jj;
        }
      }
      __syncwarp();
    }
  const double* cur_key = g.best_key + q * 2 * k + st.side * k;
  const unsigned* cur_j = g.best_j + q * 2 * k + st.side * k;
  for (unsigned t = lane; t < c; t += 32) {
    const unsigned at = t + rank_in(cur_key, cur_j, m, area.key[t], area.j[t]);
    if (at < k) {
      to_key[at] = area.key[t];
      to_j[at] = area.j[t];
      if (at == k - 1) {
        s.tau_key[r] = area.key[t];
        s.tau_j[r] = area.j[t];
      }
    }
  }
  for (unsigned t = lane; t < m; t += 32) {
    const unsigned at = t + rank_in(area.key, area.j, c, cur_key[t], cur_j[t]);
    if (at < k) {
      to_key[at] = cur_key[t];
      to_j[at] = cur_j[t];
      if (at == k - 1) {
        s.tau_key[r] = cur_key[t];
        s.tau_j[r] = cur_j[t];
      }
    }
  }
  __syncwarp();
  if (lane == 0) s.st[r] = QueryState{min(k, m + c), 0u, 1u - st.side};
  __syncwarp();
}

// The tile's partners j0 + [0, 64) offered to query r of the block (index i, slab row q): those
// before tau appended to its buffer, merged first if they would not fit. Called by the whole warp.
__device__ void offer(const KnnArgs& g, BlockShared& s, SortArea& area, int r, std::size_t q, std::size_t i,
                      std::size_t j0) {
  const int lane = threadIdx.x % 32;
  const unsigned lower = (1u << lane) - 1u;
  double key[2];
  unsigned j[2];
  bool real[2];
  for (int h = 0; h < 2; ++h) {
    const std::size_t jj = j0 + static_cast<std::size_t>(lane + 32 * h);
    key[h] = s.tile[r * (kTile + 1) + lane + 32 * h];
    j[h] = static_cast<unsigned>(jj);
    real[h] = jj < g.nb && !(g.is_auto && jj == i);
  }
  unsigned ballot[2], n = 0;
  for (int pass = 0; pass < 2; ++pass) {
    const double tk = s.tau_key[r];
    const unsigned tj = s.tau_j[r];
    n = 0;
    for (int h = 0; h < 2; ++h) {
      ballot[h] = __ballot_sync(0xffffffffu, real[h] && before(key[h], j[h], tk, tj));
      n += __popc(ballot[h]);
    }
    if (n == 0 || s.st[r].pending + n <= kBuffer) break;
    // Full: merge (tau falls), then offer again against the new tau.
    const unsigned other = 1u - s.st[r].side;
    __syncwarp();
    merge(g, s, area, r, q, g.best_key + q * 2 * g.k + other * g.k, g.best_j + q * 2 * g.k + other * g.k);
  }
  if (n == 0) return;
  const unsigned pending = s.st[r].pending;
  unsigned at = pending;
  for (int h = 0; h < 2; ++h) {
    if ((ballot[h] >> lane) & 1u) {
      const unsigned slot = at + __popc(ballot[h] & lower);
      g.buf_key[q * kBuffer + slot] = key[h];
      g.buf_j[q * kBuffer + slot] = j[h];
    }
    at += __popc(ballot[h]);
  }
  __syncwarp();
  if (lane == 0) s.st[r].pending = pending + n;
  __syncwarp();
}

__global__ void __launch_bounds__(kThreads) knn_tiles(KnnArgs g) {
  __shared__ BlockShared s;
  const std::size_t q0 = static_cast<std::size_t>(blockIdx.x) * kTile;  // the block's first slab row
  const std::size_t i0 = g.first_query + q0;                            // its first query
  for (int r = threadIdx.x; r < kTile; r += kThreads) {
    const QueryState st = g.state[q0 + r];
    s.st[r] = st;
    const std::size_t last = (q0 + r) * 2 * g.k + st.side * g.k + g.k - 1;
    s.tau_key[r] = st.filled == g.k ? g.best_key[last] : INFINITY;
    s.tau_j[r] = st.filled == g.k ? g.best_j[last] : kNoIndex;
  }
  const int warp = threadIdx.x / 32, tx = threadIdx.x % kSide, ty = threadIdx.x / kSide;
  SortArea& area = s.sort[warp];
  const auto as = reinterpret_cast<vector_keys::Staged>(s.tile);
  const auto bs = reinterpret_cast<vector_keys::Staged>(s.tile + vector_keys::kChunk * (kTile + 1));
  __syncthreads();
  for (std::size_t J = g.tile_begin; J < g.tile_end; ++J) {
    double acc[kPer][kPer];
    vector_keys::key_sums(acc, as, bs, g.a, g.na, g.b, g.nb, g.dim, i0, J * kTile, g.cosine);
    // (key_sums ends on a barrier: the staging area is free for the keys.)
#pragma unroll
    for (int r = 0; r < kPer; ++r)
#pragma unroll
      for (int c = 0; c < kPer; ++c)
        s.tile[(ty + kSide * r) * (kTile + 1) + tx + kSide * c] = g.cosine ? 1.0 - acc[r][c] : acc[r][c];
    __syncthreads();
    for (int r = warp; r < kTile && i0 + r < g.na; r += kWarps)
      offer(g, s, area, r, q0 + r, g.own ? g.own[i0 + r] : i0 + r, J * kTile);
    __syncthreads();
  }
  if (g.last) {
    for (int r = warp; r < kTile && i0 + r < g.na; r += kWarps)
      merge(g, s, area, r, q0 + r, g.out_key + (q0 + r) * g.k, g.out_j + (q0 + r) * g.k);
    __syncthreads();
  }
  for (int r = threadIdx.x; r < kTile; r += kThreads) g.state[q0 + r] = s.st[r];
}

}  // namespace

VectorKnnResult run_vector_knn(const VectorKnnInput& in) {
  if (in.nb >= kNoIndex)
    throw Error(ErrorKind::Resource, "the GPU k-NN indexes partners in 32 bits: " + std::to_string(in.nb) +
                                         " partners are too many (run it on the cpu)");
  if (in.k < 1 || in.k > kMaxDeviceNearest || static_cast<std::size_t>(in.k) > (in.is_auto ? in.nb - 1 : in.nb))
    throw Error(ErrorKind::Internal, "the GPU k-NN was handed k = " + std::to_string(in.k));
  VectorKnnResult out;
  const std::size_t dim = static_cast<std::size_t>(in.dim), k = static_cast<std::size_t>(in.k);
  DeviceBuffer<double> a(in.na * dim);
  a.upload(in.a, in.na * dim);
  // A self-k-NN of a subset of the set's rows (own_index) reads its partners apart.
  const bool separate = !in.is_auto || in.own_index;
  DeviceBuffer<double> b_own(separate && !in.device_b ? in.nb * dim : 0);
  if (separate && !in.device_b) b_own.upload(in.b, in.nb * dim);
  DeviceBuffer<std::uint32_t> own(in.own_index ? in.na : 0);
  if (in.own_index) own.upload(in.own_index, in.na);
  // A slab's lists in at most half the free memory and 2 GiB: 55 000 queries at k = 1024.
  const std::size_t free_b = available_device_bytes();
  const std::size_t per_query = (3 * k + kBuffer) * (sizeof(double) + sizeof(unsigned)) + sizeof(QueryState);
  const std::size_t budget = std::min<std::size_t>(free_b / 2, std::size_t(2) << 30);
  const std::size_t query_tiles = (in.na + kTile - 1) / kTile;
  std::size_t slab_tiles = std::clamp<std::size_t>(budget / per_query / kTile, 1, query_tiles);
  if (const std::size_t forced = TuningPolicy::current().knn_slab_queries)
    slab_tiles = std::clamp<std::size_t>(forced / kTile, 1, slab_tiles);
  const std::size_t slab = slab_tiles * kTile;
  DeviceBuffer<double> best_key(slab * 2 * k), buf_key(slab * kBuffer), out_key(slab * k);
  DeviceBuffer<unsigned> best_j(slab * 2 * k), buf_j(slab * kBuffer), out_j(slab * k);
  DeviceBuffer<QueryState> state(slab);
  KnnArgs g{};
  g.a = a.get();
  g.b = !separate ? a.get() : in.device_b ? in.device_b : b_own.get();
  g.own = own.get();
  g.na = in.na;
  g.nb = in.nb;
  g.dim = in.dim;
  g.is_auto = in.is_auto;
  g.cosine = in.cosine;
  g.k = static_cast<unsigned>(k);
  g.best_key = best_key.get();
  g.best_j = best_j.get();
  g.buf_key = buf_key.get();
  g.buf_j = buf_j.get();
  g.state = state.get();
  g.out_key = out_key.get();
  g.out_j = out_j.get();
  const std::size_t partner_tiles = (in.nb + kTile - 1) / kTile;
  const std::size_t per_launch = std::clamp<std::size_t>(kLaunchTiles / slab_tiles, 1, partner_tiles);
  const double work = static_cast<double>(query_tiles) * static_cast<double>(partner_tiles);
  std::size_t done = 0;
  out.index.resize(in.na * k);
  out.key.resize(in.na * k);
  out.slab_queries = slab;
  for (std::size_t first = 0; first < in.na; first += slab) {
    const std::size_t queries = std::min(slab, in.na - first), blocks = (queries + kTile - 1) / kTile;
    const auto t0 = std::chrono::steady_clock::now();
    state.zero();
    g.first_query = first;
    for (std::size_t t = 0; t < partner_tiles; t += per_launch) {
      g.tile_begin = t;
      g.tile_end = std::min(partner_tiles, t + per_launch);
      g.last = g.tile_end == partner_tiles;
      knn_tiles<<<static_cast<unsigned>(blocks), kThreads>>>(g);
      TWOBODY_CUDA_CHECK_LAUNCH("knn_tiles");
      ++out.launches;
      done += blocks * (g.tile_end - g.tile_begin);
      if (in.progress) {
        TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
        in.progress(static_cast<double>(done) / work);
      }
    }
    TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
    out.kernel_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out_key.download(out.key.data() + first * k, queries * k);
    out_j.download(out.index.data() + first * k, queries * k);
  }
  return out;
}

}  // namespace twobody::cuda
