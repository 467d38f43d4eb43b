#pragma once
// The k-NN tiles' selection (gram_knn.cu), after FAISS's WarpSelect and cuVS's fused k-NN: a
// query's candidates pass a threshold in the tile's epilogue, wait in a buffer of 32 in shared
// memory, and a full buffer is sorted by one warp (bitonic, in registers) and merged into the
// query's list in device memory, every entry's new place being its rank in the other list. An
// entry is (upper key, lower key, partner row) with the keys of exact/gram_bounds.hpp's
// gram_knn_bound, rounded outward to float32; the list is sorted by (upper, row) and holds at most
// `cap` entries. U, the list's k-th upper key, bounds the true k-th key from above, so a partner
// whose lower key exceeds U is never among the k nearest: the threshold admits only partners whose
// lower key can be <= U, and an entry the full list drops is remembered by its lower key
// (`dropped`): if that is <= the final U, the list may have lost a candidate and the query falls
// back. Buffered entries of the current tile hold s̃ until the tile's end (or a merge) turns them
// into keys, so that the epilogue's inner loop only compares.
#include <cstddef>
#include <cstdint>

#include "twobody/detail/cuda/gram_knn_rows.hpp"
#include "twobody/detail/cuda/gram_tile_core.cuh"
#include "twobody/detail/exact/gram_bounds.hpp"

namespace twobody::cuda::gram_knn {

using gram_core::kStride;
using gram_core::kThreads;
using gram_core::kTile;
using gram_core::kWarps;

constexpr int kPending = 32;                // a query's buffer: one entry a lane when it is merged
constexpr std::uint32_t kNoRow = 0xffffffffu;  // with key +inf: after every real entry

// A query at the end of its sweep.
struct QueryEnd {
  float bound;    // U: the k-th smallest upper key (+inf with fewer than k entries)
  float dropped;  // the smallest lower key of the entries the list had no room for (+inf: none)
  unsigned filled;
};

struct KnnArgs {
  gram_core::GramArgs g;  // the mainloop's rows; norm_a/norm_b: the rounded rows' N̂
  const GramKnnBlock *blk_a, *blk_b;
  std::uint32_t tiles_b;
  std::uint32_t first_tile;  // the launch's first query tile
  bool self;
  bool cosine;  // keys 2·(1 − a·b) of normalised rows (exact::gram_cosine_knn_bound), no norm-gap pruning
  unsigned k, cap;
  float *list_up, *list_lo;  // per launch row: cap entries
  std::uint32_t* list_row;
  QueryEnd* ends;
  unsigned long long* counters;  // [0] partner tiles swept, [1] skipped by the norm gap
};

struct KnnShared {
  std::uint16_t sa[2][kTile * kStride];  // the mainloop's stages (gram_core::gram_mainloop)
  std::uint16_t sb[2][kTile * kStride];
  float buf_up[kTile][kPending];  // upper key (or s̃ from `fresh` on)
  float buf_lo[kTile][kPending];
  std::uint32_t buf_row[kTile][kPending];
  float theta[kTile];    // admission this tile: s̃ <= theta
  float bound[kTile];    // U
  float dropped[kTile];
  int pending[kTile];    // buffered (counts past kPending when appends failed: those were not written)
  int fresh[kTile];      // buffered entries before it hold keys, from it s̃ of this tile
  int filled[kTile];     // entries in the list
  int rank_count[kWarps][kPending + 1];
  exact::GramKnnBound tile_bound;  // of the current tile
  exact::GramKnnBound far;         // C of the query tile with the farthest partner (the norm gap's test)
  GramKnnBlock query_block;        // the query tile's bound inputs
  int tile;                        // the current partner tile, -1 once the sweep is over
  int up, down, turn;              // the sweep's next tiles each way, and which way is next
  unsigned long long swept, pruned;
};

// Two blocks a multiprocessor (the mainloop's registers allow no more), 2 x 95 KB.
static_assert(sizeof(KnnShared) <= 97 * 1024, "the k-NN tiles' shared memory");

// The entries' order: by upper key, then by row (rows are distinct, so the order is total).
__device__ __forceinline__ bool before(float u, std::uint32_t j, float v, std::uint32_t l) {
  return u < v || (u == v && j < l);
}

// A buffered s̃ of the current tile as an entry's keys (outward to float32).
__device__ __noinline__ void keys_of(const exact::GramKnnBound& b, float s, float& up, float& lo) {
  up = __double2float_ru(exact::gram_key_upper(b, s));
  lo = __double2float_rd(exact::gram_key_lower(b, s));
}

// The warp's 32 entries (one a lane) sorted by (up, row): a bitonic network over the lanes.
__device__ __forceinline__ void warp_sort(float& up, float& lo, std::uint32_t& row) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int size = 2; size <= 32; size <<= 1)
#pragma unroll
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      const float ou = __shfl_xor_sync(0xffffffffu, up, stride), ol = __shfl_xor_sync(0xffffffffu, lo, stride);
      const std::uint32_t orow = __shfl_xor_sync(0xffffffffu, row, stride);
      const bool ascending = (lane & size) == 0, low = (lane & stride) == 0;
      // The low lane of an ascending pair keeps the smaller entry, of a descending one the larger.
      if (before(ou, orow, up, row) == (low == ascending)) {
        up = ou;
        lo = ol;
        row = orow;
      }
    }
}

// Entries of the sorted buffer (up, row)[0, c) before (x, xr).
__device__ __forceinline__ int rank_in_buffer(const float* up, const std::uint32_t* row, int c, float x, std::uint32_t xr) {
  int lo = 0, hi = c;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (before(up[mid], row[mid], x, xr))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// Query r's buffer merged into its list (launch row `lrow`), by the whole warp: the buffer sorted;
// each list entry moves to its index plus the buffer entries before it (the list is walked from
// its end, so an entry only lands on places already read), each buffer entry to its index plus the
// list entries before it (a histogram of the list's ranks, scanned); places from cap on are dropped.
__device__ inline void merge(const KnnArgs& p, KnnShared& s, int r, std::size_t lrow) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int c = min(s.pending[r], kPending), fresh = s.fresh[r], m = s.filled[r];
  const int k = static_cast<int>(p.k), cap = static_cast<int>(p.cap);
  float up = INFINITY, lo = INFINITY;
  std::uint32_t row = kNoRow;
  if (lane < c) {
    row = s.buf_row[r][lane];
    if (lane >= fresh) {
      keys_of(s.tile_bound, s.buf_up[r][lane], up, lo);
    } else {
      up = s.buf_up[r][lane];
      lo = s.buf_lo[r][lane];
    }
  }
  warp_sort(up, lo, row);
  int* count = s.rank_count[warp];
  __syncwarp();
  s.buf_up[r][lane] = up;
  s.buf_row[r][lane] = row;
  count[lane] = 0;
  if (lane == 0) count[kPending] = 0;
  __syncwarp();
  float* lu = p.list_up + lrow * p.cap;
  float* ll = p.list_lo + lrow * p.cap;
  std::uint32_t* lr = p.list_row + lrow * p.cap;
  float kth = NAN, drop = INFINITY;
  for (int t0 = (m - 1) & ~31; t0 >= 0; t0 -= 32) {
    const int t = t0 + lane;
    float eu = INFINITY, el = INFINITY;
    std::uint32_t er = kNoRow;
    int rank = 0;
    if (t < m) {
      eu = lu[t];
      el = ll[t];
      er = lr[t];
      rank = rank_in_buffer(s.buf_up[r], s.buf_row[r], c, eu, er);
      atomicAdd(&count[rank], 1);
    }
    __syncwarp();  // the chunk read before any of it is overwritten
    if (t < m) {
      const int at = t + rank;
      if (at >= cap) {
        drop = fminf(drop, el);
      } else if (rank > 0) {
        lu[at] = eu;
        ll[at] = el;
        lr[at] = er;
      }
      if (at == k - 1) kth = eu;
    }
    __syncwarp();
  }
  int before_me = count[lane];  // list entries of rank <= lane: before buffer entry `lane`
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const int v = __shfl_up_sync(0xffffffffu, before_me, off);
    if (lane >= off) before_me += v;
  }
  if (lane < c) {
    const int at = lane + before_me;
    if (at >= cap) {
      drop = fminf(drop, lo);
    } else {
      lu[at] = up;
      ll[at] = lo;
      lr[at] = row;
    }
    if (at == k - 1) kth = up;
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) drop = fminf(drop, __shfl_xor_sync(0xffffffffu, drop, off));
  const unsigned has = __ballot_sync(0xffffffffu, !isnan(kth));
  const float u = has ? __shfl_sync(0xffffffffu, kth, __ffs(has) - 1) : s.bound[r];
  __syncwarp();
  if (lane == 0) {
    s.bound[r] = u;
    s.dropped[r] = fminf(s.dropped[r], drop);
    s.filled[r] = min(cap, m + c);
    s.pending[r] = 0;
    s.fresh[r] = 0;
    s.theta[r] = __double2float_ru(exact::gram_key_admits(s.tile_bound, u));
  }
  __syncwarp();
}

// Query r's entries buffered in this tile turned from s̃ into keys (the tile's bound), by its warp.
__device__ __forceinline__ void settle_fresh(KnnShared& s, int r) {
  const int lane = threadIdx.x % 32;
  const int c = min(s.pending[r], kPending), f = s.fresh[r];
  if (lane >= f && lane < c) keys_of(s.tile_bound, s.buf_up[r][lane], s.buf_up[r][lane], s.buf_lo[r][lane]);
  __syncwarp();
  if (lane == 0) s.fresh[r] = c;
  __syncwarp();
}

}  // namespace twobody::cuda::gram_knn
