#pragma once
// Counting tiles: the brute-force agent for Euclidean counts in one range (type I) and histograms
// of bins of equal width in r (type II), unweighted, up to three dimensions. Same tiles as
// pair_kernel.cuh (kPerThread anchors a thread in registers against a shared partner tile), but
// each pair's verdict costs a handful of instructions instead of ~15 (count) or ~28 (histogram),
// and the few pairs near an edge are found per group of 32 partners, not per pair:
//
//   count: s' = (|a|² − T) + |b|² − 2a·b, one add and three FMAs (−2a and |a|² − T held per
//          anchor; b and |b|² one 16-byte shared load per partner, shared by the anchors). Its
//          sign bit is the verdict (one LEA.HI a pair); the smallest |s'| of the group (one FMNMX)
//          says whether any pair lies within the band E of the edge (counting_bounds.hpp), and
//          only then is the group visited again, its pairs inside the band settled in float64.
//   histogram: d² from differences (its error shrinks with d, so narrow bins near zero stay
//          decidable), d = sqrt.approx(d²), and with q = (d − lo)/w as the FMAs' exact product:
//          v = fma_rd(d, 1/w, 1.5·2²³) holds ⌊q⌋ in its low bits (no conversion instruction), and
//          one IMAD turns bits(v) into the byte address of the lane's counter; two more FMAs put
//          q ± δ in fixed point and one LOP3 ORs the XOR of their bits into the anchor's word,
//          which reaches 2^F only if some pair of the group lies within δ of an edge
//          (counting_bounds.hpp, equal_width_guard). Seven instructions a pair after the square
//          root, against ten when the guard was |round(x) − x| tested and OR-ed into a bit mask per
//          pair (bench/RESULTS.md, session 10). After each group of 32 partners the warp visits
//          each anchor whose word was marked again in one step (lane t on partner t), queues the
//          pairs within δ, and moves them to their float64 bins 64 at a time, out of line (with
//          thousands of bins, PairFlags: a bit a pair instead). The bin's counter is one shared atomic without bank
//          conflicts: copies are interleaved bin-major (word k·H + lane % H), so lanes of different
//          copies never share a bank (copies_model.hpp chooses H).
//
// Tiles that are not full (ragged ends) hold sentinels at infinity (count: |b|² or |a|² − T;
// histogram: partners at +inf, anchors at −inf, so that Clamp must be on): outside every bin,
// and certain. Tiles on the diagonal of an
// auto-correlation go pair by pair with the same arithmetic and the index test j > i.
#include <cstdint>

#include "twobody/detail/cuda/counting_tiles_common.cuh"
#include "twobody/detail/cuda/counting_tiles_count.cuh"

namespace twobody::cuda {

// A lane's counters in the block's sub-histograms ((nbins + 2) slots × `copies`, bin-major: word
// k·H + lane % H), addressed by the hot loop's slot_bits (counting tiles, FP64 tensor-core histograms).
struct LaneCounters {
  unsigned* s_hist;
  int copies, lane_copy;
  unsigned word_base;              // the word of slot_bits v: v·H + word_base
  unsigned byte_step, byte_base;  // its byte: v·4H + byte_base
  __device__ __forceinline__ unsigned* counter(unsigned v) const {
    return reinterpret_cast<unsigned*>(reinterpret_cast<unsigned char*>(s_hist) + (v * byte_step + byte_base));
  }
};
__device__ __forceinline__ LaneCounters lane_counters(unsigned* s_hist, int copies) {
  // The slot of a rounded position v is bits(v) − bits(magic) + 1 (0: below the first edge,
  // nbins + 1: beyond the last); the lane's word of it in one multiply-add, and its byte offset in
  // one too (a word index would cost a LEA a pair for the scaling by 4).
  // (Unsigned: the products wrap modulo 2^32 by definition and the sum is the small index.)
  const int lane_copy = (static_cast<int>(threadIdx.x) % 32) % copies;
  const unsigned word_base =
      static_cast<unsigned>(lane_copy) - (__float_as_uint(kRoundingMagic) - 1u) * static_cast<unsigned>(copies);
  // (Through an opaque move: seeing the common factor 4, the compiler would go back to the word
  // index and a LEA.)
  unsigned byte_base;
  asm("mov.b32 %0, %1;" : "=r"(byte_base) : "r"(4u * word_base));
  return {s_hist, copies, lane_copy, word_base, 4u * static_cast<unsigned>(copies), byte_base};
}

// Histogram: a pair the hot loop counted in its rounded bin although it lies within δ of an edge
// goes to its float64 bin (edges of equal width: the bin from the distance, checked against the
// float64 edges with two independent loads). Any lane may move any pair: the rounded bin is
// recomputed from the same float32 coordinates (the anchor's from global memory, the partner's
// from the shared tile), and the count leaves the settling lane's copy, which may wrap below zero
// for a while (the copies are summed modulo 2^32 at the flush).
// `v`: the hot loop's slot_bits of the pair.
template <int D, class Proxy, class Exact>
__device__ __noinline__ void move_slot_to_float64_bin(const PairKernelArgs<Proxy, Exact>& args,
                                                      const CountingTilesShape& shape, unsigned* s_hist, int copies,
                                                      unsigned word_base, unsigned v, std::uint32_t i, std::uint32_t j) {
  atomicSub(&s_hist[v * static_cast<unsigned>(copies) + word_base], 1u);
  const int k = equal_width_float64_bin<D>(args, shape.lo64, shape.inv_width64, i, j);
  if (k < 0) return;
  atomicAdd(&s_hist[static_cast<unsigned>(k + 1) * static_cast<unsigned>(copies) + word_base +
                    (__float_as_uint(kRoundingMagic) - 1u) * static_cast<unsigned>(copies)],
            1u);
}
template <int D, bool Clamp, class Proxy, class Exact>
__device__ __forceinline__ void move_to_float64_bin(const PairKernelArgs<Proxy, Exact>& args,
                                                    const CountingTilesShape& shape, const LaneCounters& hist, float4 b,
                                                    std::uint32_t i, std::uint32_t j) {
  using namespace counting_detail;
  float a[3] = {0.f, 0.f, 0.f};
#pragma unroll
  for (int d = 0; d < D; ++d) a[d] = args.A.x[d][i];
  const unsigned v = slot_bits(bin_distance<Clamp>(squared<D>(a, b), shape), shape);
  move_slot_to_float64_bin<D>(args, shape, hist.s_hist, hist.copies, hist.word_base, v, i, j);
}

// Histogram: the warp's queue of n pairs (i, j) near an edge, moved to their float64 bins, a pair a
// lane (the partner's float32 coordinates from global memory: the entries outlive the shared tile).
template <int D, bool Clamp, class Proxy, class Exact>
__device__ __forceinline__ void settle_queued_pairs(const PairKernelArgs<Proxy, Exact>& args,
                                                    const CountingTilesShape& shape, const LaneCounters& hist,
                                                    const uint2* queue, unsigned n, unsigned long long& n_settled) {
  __syncwarp();
  for (unsigned q = threadIdx.x % 32; q < n; q += 32) {
    const uint2 e = queue[q];
    float4 b = make_float4(0.f, 0.f, 0.f, 0.f);
    b.x = args.B.x[0][e.y];
    if constexpr (D > 1) b.y = args.B.x[1][e.y];
    if constexpr (D > 2) b.z = args.B.x[2][e.y];
    move_to_float64_bin<D, Clamp>(args, shape, hist, b, e.x, e.y);
    ++n_settled;
  }
  __syncwarp();
}

// Histogram: the pairs of a group that lie within δ of an edge (flagged[r] bit t: anchor r of this
// lane, partner g + t of the tile), moved to their float64 bins by the whole warp together. Lane by
// lane, the warp ran the settlement as often as its busiest lane had pairs, mostly with one lane
// active: at 8 192 bins (1.3% of pairs flagged) that was ~40 of the ~64 instructions a pair
// (ncu, H100). Here the warp's flagged pairs are numbered by a prefix sum across lanes, written to
// the warp's queue kSettleQueue at a time, and settled one a lane.
template <int D, bool Clamp, class Proxy, class Exact>
__device__ __forceinline__ void settle_flagged_pairs(const PairKernelArgs<Proxy, Exact>& args, const CountingTilesShape& shape,
                                                     const LaneCounters& hist, const float4* s_b, uint2* queue,
                                                     const unsigned (&flagged)[kPerThread],
                                                     const std::uint32_t (&ia)[kPerThread], std::uint32_t jt, int g,
                                                     std::uint32_t j1, unsigned long long& n_settled) {
  const int lane = threadIdx.x % 32;
  unsigned mine = 0;
#pragma unroll
  for (int r = 0; r < kPerThread; ++r) mine += __popc(flagged[r]);
  unsigned upto = mine;  // inclusive prefix sum over the lanes
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const unsigned v = __shfl_up_sync(0xffffffffu, upto, off);
    if (lane >= off) upto += v;
  }
  const unsigned total = __shfl_sync(0xffffffffu, upto, 31);
  const unsigned first = upto - mine;
  for (unsigned base = 0; base < total; base += kSettleQueue) {
    if (mine && first < base + kSettleQueue && upto > base) {
      unsigned e = first;
#pragma unroll
      for (int r = 0; r < kPerThread; ++r)
        for (unsigned m = flagged[r]; m; m &= m - 1, ++e)
          if (e >= base && e < base + kSettleQueue) queue[e - base] = make_uint2(ia[r], static_cast<unsigned>(g + __ffs(m) - 1));
    }
    __syncwarp();
    const unsigned n = ::min(static_cast<unsigned>(kSettleQueue), total - base);
    for (unsigned q = lane; q < n; q += 32) {
      const uint2 entry = queue[q];
      const std::uint32_t j = jt + entry.y;
      if (entry.x >= args.A.n || j >= j1) continue;  // sentinels are never flagged
      move_to_float64_bin<D, Clamp>(args, shape, hist, s_b[entry.y], entry.x, j);
      ++n_settled;
    }
    __syncwarp();
  }
}

// The end of a histogram kernel's item: each slot's copies added to the global counts (slots
// 1 .. nbins) and zeroed. A copy may have wrapped below zero (a pair settled by another lane than
// the one that counted it): the copies are summed modulo 2^32, exact since the item's count is below.
template <class Proxy, class Exact>
__device__ __forceinline__ void flush_histogram_copies(const PairKernelArgs<Proxy, Exact>& args, unsigned* s_hist,
                                                       int nslots, int copies) {
  __syncthreads();
  for (int k = static_cast<int>(threadIdx.x); k < nslots; k += kThreads) {
    unsigned c = 0;
    for (int h = 0; h < copies; ++h) {
      c += s_hist[k * copies + h];
      s_hist[k * copies + h] = 0;
    }
    if (c && k >= 1 && k <= args.nbins) atomicAdd(&args.counts[k - 1], static_cast<unsigned long long>(c));
  }
}

// The tensor-core histograms' warp queue of pairs near an edge, moved to their float64 bins one a
// lane, in the lane's copy, and emptied. Sentinels: entries i beyond the set are skipped.
template <int D, bool Sentinels, class Proxy, class Exact, class Shape>
__device__ __forceinline__ void settle_warp_queue(const PairKernelArgs<Proxy, Exact>& args, const Shape& shape,
                                                  unsigned* s_hist, int copies, int lane_copy, int lane,
                                                  const uint2* s_queue, unsigned& queued, unsigned long long& n_settled) {
  __syncwarp();
  for (unsigned q = lane; q < queued; q += 32) {
    const uint2 e = s_queue[q];
    if (Sentinels && e.x >= args.A.n) continue;  // a sentinel's entry (an item that settles every pair)
    const int k = equal_width_float64_bin<D>(args, shape.lo64, shape.inv_width64, e.x, e.y);
    if (k >= 0) atomicAdd(&s_hist[(k + 1) * copies + lane_copy], 1u);
    ++n_settled;
  }
  __syncwarp();
  queued = 0;
}

namespace counting_detail {
// A thread's kPerThread anchors, i0 + r·kThreads + tid. Count: −2a and |a|² − T (a sentinel beyond
// the set); histogram: a.
struct CountingAnchors {
  float a[kPerThread][3];
  float ca[kPerThread];
  std::uint32_t ia[kPerThread];
};
template <int D, bool Hist, class Proxy, class Exact>
__device__ __forceinline__ void load_counting_anchors(const PairKernelArgs<Proxy, Exact>& args,
                                                      const CountingTilesShape& shape, std::uint32_t i0,
                                                      CountingAnchors& an) {
  const int tid = threadIdx.x;
#pragma unroll
  for (int r = 0; r < kPerThread; ++r) {
    an.ia[r] = i0 + r * kThreads + tid;
    const bool ok = an.ia[r] < args.A.n;
    double na = 0;
#pragma unroll
    for (int d = 0; d < 3; ++d) {
      const float x = d >= D ? 0.f : ok ? args.A.x[d][an.ia[r]] : Hist ? -kFarCoordinate : 0.f;
      na += static_cast<double>(x) * x;
      an.a[r][d] = Hist ? x : -2.f * x;
    }
    an.ca[r] = ok ? static_cast<float>(na - shape.t_hi) : kFarNorm;  // (count only)
  }
}

// The partner tile: partner jt + tid in s_b[tid] (count: b and |b|²; histogram: b), a sentinel from
// j1 on.
template <int D, bool Hist, class Proxy, class Exact>
__device__ __forceinline__ void stage_partner_tile(const PairKernelArgs<Proxy, Exact>& args, std::uint32_t jt,
                                                   std::uint32_t j1, float4* s_b) {
  const int tid = threadIdx.x;
  const std::uint32_t jl = jt + tid;
  float4 p = Hist ? make_float4(kFarCoordinate, kFarCoordinate, kFarCoordinate, 0.f) : make_float4(0.f, 0.f, 0.f, kFarNorm);
  if (jl < j1) {
    float b[3] = {0.f, 0.f, 0.f};
    double nb = 0;
#pragma unroll
    for (int d = 0; d < D; ++d) {
      b[d] = args.B.x[d][jl];
      nb += static_cast<double>(b[d]) * b[d];
    }
    p = make_float4(b[0], b[1], b[2], Hist ? 0.f : static_cast<float>(nb));
  }
  s_b[tid] = p;
}

// The float64 rule for one pair: bin (>= 0) or -1.
template <int D, class Proxy, class Exact>
__device__ __forceinline__ int settle_pair(const PairKernelArgs<Proxy, Exact>& args, std::uint32_t i, std::uint32_t j,
                                           unsigned long long& n_settled) {
  ++n_settled;
  return find_bin_unpadded(args.edges64, args.nbins, args.steps, float64_key<D>(args, i, j));
}

// Histogram, marked words: the marked anchors' 32 pairs again, one anchor a step with lane t on
// partner g + t (the anchor's coordinates shuffled from its lane): the lanes whose pair lies near an
// edge append it to the warp's queue, which is settled when full and at the end of the item, ~64
// pairs at a time. A marked anchor costs one warp step, not 32: looping over its own partners, the
// owner lane kept the warp for 32 serial steps, and settling each group's pairs at once made the
// warp wait for float64 loads that often (SDH at 256 bins fell from 1 428 to 912, 1 339 and 1 553
// Gpairs/s, bench/RESULTS.md session 10, runs 1–4).
template <int D, bool Clamp, class Proxy, class Exact>
__device__ __forceinline__ void queue_marked_anchors(const PairKernelArgs<Proxy, Exact>& args,
                                                     const CountingTilesShape& shape, const LaneCounters& hist,
                                                     const float4* s_b, uint2* s_queue, const CountingAnchors& an,
                                                     const unsigned (&marked)[kPerThread], std::uint32_t jt, int g,
                                                     std::uint32_t j1, unsigned& queued, unsigned long long& n_settled) {
  bool any = false;
#pragma unroll
  for (int r = 0; r < kPerThread; ++r) any |= marked[r] >= shape.guard_limit;
  if (!__any_sync(0xffffffffu, any)) return;
  const int lane = threadIdx.x % 32;
  const float4 b = s_b[g + lane];
  const std::uint32_t j = jt + g + lane;
  const unsigned below = (1u << lane) - 1u;
#pragma unroll
  for (int r = 0; r < kPerThread; ++r) {
    for (unsigned owners = __ballot_sync(0xffffffffu, marked[r] >= shape.guard_limit); owners; owners &= owners - 1) {
      const int src = __ffs(owners) - 1;
      float as[3];
#pragma unroll
      for (int d = 0; d < 3; ++d) as[d] = __shfl_sync(0xffffffffu, an.a[r][d], src);
      const std::uint32_t i = __shfl_sync(0xffffffffu, an.ia[r], src);
      const float dd = bin_distance<Clamp>(squared<D>(as, b), shape);
      const bool near = guard_bits(dd, shape) >= shape.guard_limit && i < args.A.n && j < j1;
      const unsigned bits = __ballot_sync(0xffffffffu, near);
      if (queued + __popc(bits) > static_cast<unsigned>(kSettleQueue)) {
        settle_queued_pairs<D, Clamp>(args, shape, hist, s_queue, queued, n_settled);
        queued = 0;
      }
      if (near) s_queue[queued + __popc(bits & below)] = make_uint2(i, j);
      queued += __popc(bits);
    }
  }
}

// Histogram: one group of 32 partners (s_b[g .. g + 31]) against the thread's anchors, each pair
// counted in its rounded slot; then the rare pairs within δ of an edge go to their float64 bins.
template <int D, bool Clamp, bool PairFlags, class Proxy, class Exact>
__device__ __forceinline__ void bin_group(const PairKernelArgs<Proxy, Exact>& args, const CountingTilesShape& shape,
                                          const LaneCounters& hist, const float4* s_b, uint2* s_queue,
                                          const CountingAnchors& an, std::uint32_t jt, int g, std::uint32_t j1,
                                          unsigned& queued, unsigned long long& n_settled) {
  // Per anchor, >= guard_limit if a pair is near an edge (PairFlags: bit t for partner t).
  unsigned marked[kPerThread];
#pragma unroll
  for (int r = 0; r < kPerThread; ++r) marked[r] = 0u;
#pragma unroll 4
  for (int t = 0; t < 32; ++t) {
    const float4 b = s_b[g + t];
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
      const float d = bin_distance<Clamp>(squared<D>(an.a[r], b), shape);
      atomicAdd(hist.counter(slot_bits(d, shape)), 1u);
      if constexpr (PairFlags)
        marked[r] |= guard_bits(d, shape) >= shape.guard_limit ? 1u << t : 0u;
      else
        marked[r] |= guard_bits(d, shape);
    }
  }
  // Rare: pairs of this group within the band go to their float64 bin. Anchors are unrolled (an
  // indexed register array would live in local memory).
  if constexpr (PairFlags) {
    // Exactly the flagged pairs, by the whole warp (out of line: the hot loop's code stays small).
    settle_flagged_pairs<D, Clamp>(args, shape, hist, s_b, s_queue, marked, an.ia, jt, g, j1, n_settled);
  } else {
    queue_marked_anchors<D, Clamp>(args, shape, hist, s_b, s_queue, an, marked, jt, g, j1, queued, n_settled);
  }
}

// One pair's verdict with its float64 settlement, for diagonal tiles.
template <int D, bool Hist, bool Lo, bool Clamp, class Proxy, class Exact>
__device__ __forceinline__ void settle_diagonal_pair(const PairKernelArgs<Proxy, Exact>& args,
                                                     const CountingTilesShape& shape, const LaneCounters& hist,
                                                     const float (&a)[3], float ca, float4 b, std::uint32_t i,
                                                     std::uint32_t j, long long& fix, unsigned long long& n_settled) {
  // (Histograms only: the counts' diagonal is counting_tiles_count.cuh's, and the kernel's Reduce
  // instantiations return before they reach this.)
  if constexpr (Hist) {
    const float d = bin_distance<Clamp>(squared<D>(a, b), shape);
    int k = static_cast<int>(slot_bits(d, shape) - __float_as_uint(kRoundingMagic));
    if (guard_bits(d, shape) >= shape.guard_limit) k = settle_pair<D>(args, i, j, n_settled);
    if (k >= 0 && k < args.nbins) atomicAdd(&hist.s_hist[(k + 1) * hist.copies + hist.lane_copy], 1u);
  }
}
}  // namespace counting_detail

// Lo: a count whose range starts above zero (a second sign bit and band per pair). Clamp: a
// histogram with pairs below its first or beyond its last edge. PairFlags: a histogram whose guard
// holds many pairs (thousands of bins): a bit a pair near an edge, set in the hot loop (two more
// instructions a pair), instead of one marked word per anchor, whose revisit costs a warp step an
// anchor (cheaper while few anchors are marked: ~1% of the pairs near an edge or fewer).
template <int D, OutputMode Mode, bool Lo, bool Clamp, bool PairFlags, class Proxy, class Exact>
__global__ void __launch_bounds__(kThreads, Mode == OutputMode::Histogram ? 3 : 2)
    counting_tiles_kernel(__grid_constant__ const PairKernelArgs<Proxy, Exact> args, const CountingTilesShape shape) {
  static_assert(D >= 1 && D <= 3, "counting tiles hold a point in one float4");
  static_assert(Mode == OutputMode::Reduce || Mode == OutputMode::Histogram, "counts and histograms");
  if constexpr (Mode == OutputMode::Reduce) {
    count_tiles<D, Lo>(args, shape);
    return;
  }
  constexpr bool kHist = Mode == OutputMode::Histogram;
  using namespace counting_detail;
  extern __shared__ __align__(16) unsigned char smem[];
  float4* s_b = reinterpret_cast<float4*>(smem);
  unsigned* s_hist = reinterpret_cast<unsigned*>(s_b + kThreads);  // (nbins + 2) x copies, bin-major
  __shared__ unsigned long long s_item;
  const int tid = threadIdx.x;
  const int nslots = args.nbins + 2;
  const int copies = shape.copies;
  // Histogram: this warp's queue of pairs to settle, after the sub-histograms, on an 8-byte
  // boundary (the sub-histograms' words rounded up to even: an odd count with one copy would leave
  // the queue's 8-byte entries misaligned; counting_tiles_smem counts the pad).
  uint2* s_queue = reinterpret_cast<uint2*>(s_hist + ((nslots * copies + 1) & ~1)) + (tid / 32) * kSettleQueue;
  if constexpr (kHist)
    for (int k = tid; k < nslots * copies; k += kThreads) s_hist[k] = 0;
  const LaneCounters hist = lane_counters(s_hist, copies);

  unsigned long long n_settled = 0, total = 0;
  unsigned queued = 0;  // histogram, marked words: pairs in this warp's queue (the same in every lane)
  long long fix = 0;  // (counts' only: 0 here; the end is the count body's, so the machine code stays as measured)

  for (TileItem item; claim_tile_item(args, s_item, kAnchors, item);) {
    const std::uint32_t i0 = item.i0, j0 = item.j0, j1 = item.j1;
    if (args.is_auto && j1 <= i0 + 1) continue;
    CountingAnchors an;
    load_counting_anchors<D, kHist>(args, shape, i0, an);

    for (std::uint32_t jt = first_wanted_subtile(args.is_auto, i0, j0); jt < j1; jt += kThreads) {
      __syncthreads();
      stage_partner_tile<D, kHist>(args, jt, j1, s_b);
      __syncthreads();
      if (!args.is_auto || jt >= i0 + kAnchors) {
        // Every pair of the sub-tile is wanted (sentinels stand for missing points).
        for (int g = 0; g < kThreads; g += 32) {
          bin_group<D, Clamp, PairFlags>(args, shape, hist, s_b, s_queue, an, jt, g, j1, queued, n_settled);
        }
      } else {
        // On the diagonal: pair by pair, j > i, real points only.
        const int nj = static_cast<int>(min(static_cast<std::uint32_t>(kThreads), j1 - jt));
#pragma unroll 1
        for (int jj = 0; jj < nj; ++jj) {
          const float4 b = s_b[jj];
          const std::uint32_t j = jt + jj;
#pragma unroll
          for (int r = 0; r < kPerThread; ++r)
            if (an.ia[r] < args.A.n && j > an.ia[r])
              settle_diagonal_pair<D, kHist, Lo, Clamp>(args, shape, hist, an.a[r], an.ca[r], b, an.ia[r], j, fix,
                                                        n_settled);
        }
      }
    }

    if constexpr (kHist && !PairFlags) {
      // The queued pairs go before the item's sub-histograms are flushed.
      settle_queued_pairs<D, Clamp>(args, shape, hist, s_queue, queued, n_settled);
      queued = 0;
    }
    // 32-bit shared counters hold at most kAnchors x kChunk = 2^23 pairs: flushed every item.
    flush_histogram_copies(args, s_hist, nslots, copies);
  }

  total += static_cast<unsigned long long>(fix);  // modular: the grand total is right
  for (int off = 16; off > 0; off >>= 1) {
    n_settled += __shfl_down_sync(0xffffffffu, n_settled, off);
    total += __shfl_down_sync(0xffffffffu, total, off);
  }
  if (tid % 32 == 0) {
    if (n_settled) atomicAdd(args.settled, n_settled);
    if (!kHist && total) atomicAdd(&args.counts[0], total);
  }
}

// The counting tiles (launch: agent_launch.cuh's AgentLaunch): a range's lower edge above zero, a
// histogram's clamp and its flag bits a pair, as the dispatch chose.
template <int D, OutputMode M, class P, class F, class Launch>
void launch_counting_tiles(const AgentChoice& c, Launch& launch) {
  const char* name = "counting_tiles_kernel";
  if constexpr (M == OutputMode::Reduce) {
    launch(c.tiles.has_lo ? counting_tiles_kernel<D, M, true, false, false, P, F>
                          : counting_tiles_kernel<D, M, false, false, false, P, F>,
           kThreads, c.smem, name, c.tiles);
  } else if (c.pair_flags) {
    launch(c.tiles.clamp ? counting_tiles_kernel<D, M, false, true, true, P, F>
                         : counting_tiles_kernel<D, M, false, false, true, P, F>,
           kThreads, c.smem, name, c.tiles);
  } else {
    launch(c.tiles.clamp ? counting_tiles_kernel<D, M, false, true, false, P, F>
                         : counting_tiles_kernel<D, M, false, false, false, P, F>,
           kThreads, c.smem, name, c.tiles);
  }
}

}  // namespace twobody::cuda
