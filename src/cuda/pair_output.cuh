#pragma once
// What a pair produces on the GPU, shared by every traversal agent (brute-force tiles, grid cells):
// the float32 verdict against the guard bands, the float64 settlement of pairs inside a band, and
// the three outputs (type I count in registers, type II privatised shared histograms, type III
// pair list). A traversal decides which pairs to visit; this decides what each is worth.
//
//   Reduce and PairList: one range, its four band thresholds in registers.
//   PairList: the direct output buffer of pair_pool.hpp (pages claimed by one atomic, drained and
//   resumed when the pool is full). Traversals mark each anchor's pairs in range as bits over 32
//   partners and hand them over warp-wide (emit_hits), which writes them in a fixed order.
//   Histogram: the float-bits table of fast_path.hpp in shared memory (two or three shared loads
//   per pair, whatever the number of bins). Counts go to `copies` privatised sub-histograms (lane
//   % copies, seed 000 Algorithm 4) laid out with an odd stride, so that lanes adding to the same
//   bin of their own copies hit different banks; they are summed into the global 64-bit histogram
//   often enough that the 32-bit shared counters never overflow.
//   Histogram with Statistic::mean_separation (Means): every pair counted in a bin also gets its
//   float64 key, and Σ w s and Σ w log s (s its natural value) go to per-block double arrays in
//   shared memory when they fit beside the histogram, else straight to global memory.
//   Histogram of a binned pair function (Exact with bin(a, b): 2-D (r_p, π) or (s, μ) bins): one
//   range, the reach [0, cutoff), whose band only says "certainly beyond"; every other pair is
//   binned by the function in float64. Sub-histograms in shared memory as above when they fit (no
//   bin table), else, and always with jackknife regions, 64-bit atomics in global memory per pair.
//   PerPoint (per-point reductions): one range as for Reduce. Each anchor's partners in range are
//   counted (and their weights summed) in registers, one slot per anchor a thread holds, and added
//   to the global 64-bit array once per tile or unit (flush_anchors); each partner's go to the
//   global array by atomics, lanes that add to the same partner at once adding together.
#include <concepts>
#include <cstdint>

#include "twobody/detail/cuda/kernel_shape.hpp"
#include "twobody/detail/cuda/pair_kernel_args.cuh"
#include "twobody/detail/engine/binned_pair_functions.hpp"
#include "twobody/detail/cuda/pair_pool.hpp"
#include "twobody/detail/exact/fast_path.hpp"

namespace twobody::cuda {

// AnchorSlots: anchors a thread holds at once (PerPoint counts each in its own registers): 1 for the
// grid agent, kPerThread for the brute-force one, whose thread holds anchors i0 + r·kThreads + tid
// (i0 a multiple of kAnchors), so that anchor i is in slot (i / kThreads) % kPerThread.
// Means: the mean separation sums beside the histogram (a flag, so that histograms without them
// keep their branch-free counting).
template <int D, OutputMode Mode, bool Weighted, class Proxy, class Exact, bool Regions = false, int AnchorSlots = 1,
          bool Means = false>
struct PairOutput {
  static constexpr bool kHist = Mode == OutputMode::Histogram;
  static constexpr bool kPerPoint = Mode == OutputMode::PerPoint;
  static constexpr bool kList = Mode == OutputMode::PairList;
  static constexpr bool kBinned = binned_pair_function<Exact>;
  // Counts alone: a certain table entry is the whole of a pair's worth (count_certain).
  static constexpr bool kCountsOnly = kHist && !Weighted && !Means && !kBinned;
  static_assert(!Regions || kHist, "jackknife regions are counted for histograms");
  // Binned pair functions count regions pair by pair in global memory (accept_global), not per lane.
  static_assert(!kBinned || (kHist && !Regions), "binned pair functions: histograms, regions at run time");
  static_assert(!Means || kHist, "mean separations are summed per histogram bin");
  static_assert(AnchorSlots == 1 || AnchorSlots == kPerThread, "anchor slots: the grid's one or the tiles' kPerThread");
  const PairKernelArgs<Proxy, Exact>& args;
  BandPair* s_bands = nullptr;
  double* s_wh = nullptr;
  unsigned* s_hist = nullptr;
  std::uint16_t* s_cells = nullptr;
  unsigned* my_hist = nullptr;
  // Regions: the lane's sub-histogram counts the pairs of its current unit only; at the unit's end
  // (end_unit) they go to the block's histogram and to the anchor's region in one add per bin,
  // so the anchor's region costs nothing per pair. A pair whose partner lies in another region
  // adds to that region per pair (s_regp). Block-wide arrays, read and cleared with atomicExch.
  unsigned long long* s_reg_tot = nullptr;  // nbins
  unsigned long long* s_rega = nullptr;     // regions x nbins, anchors' regions
  unsigned* s_regp = nullptr;               // regions x nbins, partners' other regions
  double* s_regw = nullptr;                 // regions x nbins, weighted (per pair, both terms)
  int my_region = 0;
  // Means: Σ w s and Σ w log s per bin, the block's in shared memory or the global arrays.
  double* s_sum = nullptr;
  double* s_log_sum = nullptr;
  float lo0, hi0, lo1, hi1;
  unsigned long long n_settled = 0, r_count = 0;
  double r_wsum = 0.0;
  // PerPoint: each anchor slot's partners in range since its last flush (< 2^32: a tile holds
  // kChunk partners, a grid unit at most the partner set), and their weights.
  unsigned a_count[kPerPoint ? AnchorSlots : 1] = {};
  double a_wsum[kPerPoint && Weighted ? AnchorSlots : 1] = {};
  // PairList: the warp's page, and its unit's pairs: produced so far in this launch (emitted) and
  // known written (from the task's skip on: the pairs earlier launches wrote, then this one's);
  // stopped when the pool ran out. The same in every lane of the warp.
  PageCursor page;
  unsigned long long emitted = 0, written = 0;
  bool stopped = false;

  // Lays the output's shared memory out from `smem` and loads the bin table (the caller syncs).
  // `slots` groups of `copies` sub-histograms: one group per block (slots = 1, flush_block), or
  // one per warp (slots = warps, flush_warp), for traversals whose warps never meet at a barrier.
  __device__ PairOutput(const PairKernelArgs<Proxy, Exact>& a, unsigned char* smem, int tid, int nthreads, int slots = 1)
      : args(a), lo0(kHist ? a.lo0 : a.range_lo0), hi0(a.range_hi0), lo1(a.range_lo1), hi1(a.range_hi1) {
    const int nb = a.nbins;
    // (Counted in global memory, a binned pair function keeps nothing here: copies is 0.)
    const bool shared_counts = kHist && !in_global();
    s_bands = reinterpret_cast<BandPair*>(smem);
    s_wh = reinterpret_cast<double*>(s_bands + (kHist && !kBinned ? nb + 1 : 0));
    s_hist = reinterpret_cast<unsigned*>(s_wh + (kHist && Weighted && shared_counts ? nb : 0));
    s_cells = reinterpret_cast<std::uint16_t*>(s_hist + (kHist ? a.hist_stride * a.copies * slots : 0));
    if constexpr (kHist && !kBinned) {
      for (int k = tid; k <= nb; k += nthreads) s_bands[k] = a.bands[k];
      for (int k = tid; k < a.ncells; k += nthreads) s_cells[k] = a.cells[k];
    }
    if constexpr (kHist) {
      for (int k = tid; k < a.hist_stride * a.copies * slots; k += nthreads) s_hist[k] = 0;
      if constexpr (Weighted)
        if (shared_counts)
          for (int k = tid; k < nb; k += nthreads) s_wh[k] = 0.0;
    }
    if constexpr (Regions) {
      const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(s_cells + a.ncells);
      s_reg_tot = reinterpret_cast<unsigned long long*>((end + 7) / 8 * 8);
      s_rega = s_reg_tot + nb;
      s_regw = reinterpret_cast<double*>(s_rega + a.regions * nb);
      s_regp = reinterpret_cast<unsigned*>(s_regw + (Weighted ? a.regions * nb : 0));
      for (int k = tid; k < nb; k += nthreads) s_reg_tot[k] = 0;
      for (int k = tid; k < a.regions * nb; k += nthreads) {
        s_rega[k] = 0;
        s_regp[k] = 0;
        if constexpr (Weighted) s_regw[k] = 0.0;
      }
    }
    if constexpr (Means) {
      const std::uintptr_t end = Regions ? reinterpret_cast<std::uintptr_t>(s_regp + a.regions * nb)
                                         : reinterpret_cast<std::uintptr_t>(s_cells + a.ncells);
      s_sum = a.sums_shared ? reinterpret_cast<double*>((end + 7) / 8 * 8) : a.sep_sums;
      s_log_sum = a.sums_shared ? s_sum + nb : a.log_sep_sums;
      if (a.sums_shared)
        for (int k = tid; k < 2 * nb; k += nthreads) s_sum[k] = 0.0;
    }
    const int slot = slots > 1 ? tid / 32 : 0;
    if constexpr (kBinned) {
      if (a.copies > 0) my_hist = s_hist + (slot * a.copies + tid % 32 % a.copies) * a.hist_stride;
    } else {
      my_hist = s_hist + (slot * a.copies + tid % 32 % a.copies) * a.hist_stride;
    }
  }

  // Binned pair functions whose counts go to global memory pair by pair (accept_global).
  __device__ __forceinline__ bool in_global() const {
    if constexpr (kBinned) return args.hist_global;
    return false;
  }

  // The float32 verdict on a proxy: bin >= 0, -1 outside, -2 to be settled in float64. A binned
  // pair function's proxy decides only "certainly beyond the reach"; its bins are float64's.
  __device__ __forceinline__ int classify(float s) const {
    if constexpr (kBinned) {
      return s < hi1 ? -2 : -1;
    } else if constexpr (kHist) {
      return classify_table(s_bands, s_cells, args.ncells, lo0, args.base_bits, args.shift, args.nbins, s);
    } else {
      const bool in = (s >= hi0) & (s < lo1);
      const bool near = (s >= lo0) & (s < hi1);
      return in ? 0 : (near ? -2 : -1);
    }
  }

  // One accepted pair (bin k, anchor i, partner j; rb: the partner's region, or -1 to look it up).
  __device__ __forceinline__ void accept(int k, std::uint32_t i, std::uint32_t j, double wprod, int rb = -1) {
    if constexpr (Means) add_separation(k, i, j, wprod);
    if constexpr (kBinned)
      if (args.hist_global) return accept_global(k, i, j, wprod);
    if constexpr (kHist) {
      atomicAdd(&my_hist[k], 1u);
      if constexpr (Weighted) atomicAdd(&s_wh[k], wprod);
      if constexpr (Regions) {
        // Seed 003's inverse jackknife: each pair once, into its anchor's region (end_unit) and,
        // when different, its partner's.
        if (rb < 0) rb = args.B.region[j];
        if (rb != my_region) atomicAdd(&s_regp[rb * args.nbins + k], 1u);
        if constexpr (Weighted) {
          atomicAdd(&s_regw[my_region * args.nbins + k], wprod);
          if (rb != my_region) atomicAdd(&s_regw[rb * args.nbins + k], wprod);
        }
      }
    } else if constexpr (Mode == OutputMode::Reduce) {
      ++r_count;
      if constexpr (Weighted) r_wsum += wprod;
    } else if constexpr (kPerPoint) {
      count_point(i, j);
    } else {
      // PairList: traversals mark their pairs as bits and write them warp-wide (emit_hits), in the
      // fixed order a resumed unit relies on; a pair from one lane alone has no place in it.
      static_assert(kList);
      __trap();
    }
  }

  // A binned pair's bin straight into the global arrays: counts, weighted sums and, with regions
  // (args.regions > 0), T[r][k] for the region of each point (once when both share it), as
  // RegionHistogramSink does. The float64 bin already cost more than these atomics.
  __device__ __forceinline__ void accept_global(int k, std::uint32_t i, std::uint32_t j, double wprod) {
    atomicAdd(&args.counts[k], 1ull);
    if constexpr (Weighted) atomicAdd(&args.wsums[k], wprod);
    if (args.regions > 0) {
      const std::size_t nb = static_cast<std::size_t>(args.nbins);
      const std::size_t ra = static_cast<std::size_t>(args.A.region[i]), rb = static_cast<std::size_t>(args.B.region[j]);
      atomicAdd(&args.region_counts[ra * nb + k], 1ull);
      if (rb != ra) atomicAdd(&args.region_counts[rb * nb + k], 1ull);
      if constexpr (Weighted) {
        atomicAdd(&args.region_wsums[ra * nb + k], wprod);
        if (rb != ra) atomicAdd(&args.region_wsums[rb * nb + k], wprod);
      }
    }
  }

  // Means: the pair's separation from its float64 key (a binned pair function's own: r_p or s,
  // Corrfunc's rpavg and savg), the CPU's SeparationSums::add in double.
  __device__ __forceinline__ void add_separation(int k, std::uint32_t i, std::uint32_t j, double wprod) {
    if constexpr (Means) {
      double s = 0.0;
      if constexpr (kBinned)
        on_float64<D>(args, i, j, [&](const double* a, const double* b) { return args.exact.bin(a, b, s); });
      else
        s = args.exact.natural_of(float64_key<D>(args, i, j));
      const double w = Weighted ? wprod : 1.0;
      atomicAdd(&s_sum[k], w * s);
      atomicAdd(&s_log_sum[k], w * log(s));
    }
  }

  // PerPoint: one pair in range. The anchor's slot is chosen by a compare per slot, not an index,
  // so that the slots stay in registers; the partner's entry is added to at once, by one lane for
  // all the lanes of the warp that add to the same partner now (a shuffled or shared partner
  // meets every anchor of the warp together).
  __device__ __forceinline__ void count_point(std::uint32_t i, std::uint32_t j) {
    const int slot = AnchorSlots == 1 ? 0 : static_cast<int>(i / kThreads) % AnchorSlots;
#pragma unroll
    for (int q = 0; q < AnchorSlots; ++q) {
      if (q == slot) {
        ++a_count[q];
        if constexpr (Weighted) a_wsum[q] += args.B.w[j];
      }
    }
    const unsigned peers = __match_any_sync(__activemask(), j);
    if (static_cast<int>(threadIdx.x % 32) == __ffs(peers) - 1)
      atomicAdd(&args.point_counts_b[j], static_cast<unsigned long long>(__popc(peers)));
    if constexpr (Weighted) atomicAdd(&args.point_wsums_b[j], args.A.w[i]);
  }
  // PerPoint: the anchors' counts (and sums) to the global arrays, then cleared; anchors[q] is
  // slot q's anchor (a slot without pairs has no anchor to add to). Per tile or unit.
  __device__ __forceinline__ void flush_anchors(const std::uint32_t* anchors) {
    if constexpr (kPerPoint) {
#pragma unroll
      for (int q = 0; q < AnchorSlots; ++q) {
        if (a_count[q] == 0) continue;
        atomicAdd(&args.point_counts_a[anchors[q]], static_cast<unsigned long long>(a_count[q]));
        a_count[q] = 0;
        if constexpr (Weighted) {
          atomicAdd(&args.point_wsums_a[anchors[q]], a_wsum[q]);
          a_wsum[q] = 0.0;
        }
      }
    }
  }

  // A worker's task k of the launch: its unit and, for pair lists, where this warp (`warp` of the
  // unit's warps) resumes it (pair_pool.hpp: resumed units first). Other outputs: unit k.
  __device__ __forceinline__ unsigned long long begin_task(unsigned long long k, int warp) {
    if constexpr (kList) {
      emitted = 0;
      written = args.list.skip_of(k, warp);
      stopped = false;
      return args.list.unit_of(k);
    }
    return k;
  }
  // PairList: whether this warp's unit ran out of pages (the traversal may stop early).
  __device__ __forceinline__ bool list_stopped() const { return kList && stopped; }
  // PairList: records a unit that ran out of pages, with the pairs each of its warps has written
  // (`written_by_warp`, one per warp of the unit; null: this warp's, a unit of one warp), for the
  // next launch. One thread calls it.
  __device__ void record_stopped(unsigned long long unit, const unsigned long long* written_by_warp = nullptr) const {
    if constexpr (kList) {
      const PairListBuffer& L = args.list;
      const unsigned long long k = atomicAdd(L.stopped, 1ull);
      if (k >= L.stopped_capacity) return;  // the host sees the count beyond capacity and fails
      L.stopped_unit[k] = unit;
      for (int w = 0; w < L.warps; ++w)
        L.stopped_skip[k * static_cast<unsigned>(L.warps) + static_cast<unsigned>(w)] = written_by_warp ? written_by_warp[w] : written;
    }
  }
  // PairList: writes this lane's pairs (i, j0 + t) for every bit t of `hits`, warp-wide: all 32 lanes
  // call it together. Pairs are numbered in rounds, each taking every lane's lowest remaining bit,
  // lanes in order, after the pairs of the unit's earlier calls: for a given unit the same numbers
  // every launch, so those below `written` are skipped. The rest go to the warp's page and, beyond
  // it, to pages claimed at once by one atomic; what the pool cannot take stops the unit there.
  __device__ __forceinline__ void emit_hits(unsigned hits, std::uint32_t i, std::uint32_t j0) {
    if constexpr (kList) {
      const PairListBuffer& L = args.list;
      const unsigned lane = threadIdx.x % 32;
      unsigned n = __popc(hits);
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) n += __shfl_xor_sync(0xffffffffu, n, off);
      if (n == 0) return;
      const unsigned long long before = emitted;
      emitted += n;
      if (stopped || emitted <= written) return;
      // This call's pairs numbered [skip, n) are new (written >= before while not stopped).
      const unsigned long long skip = written - before, m = n - skip;
      const unsigned long long room = page_room(page, L.page_size);
      const unsigned long long k = pages_to_claim(page, m, L.page_size);
      unsigned long long first = 0, granted = 0;
      if (k) {
        if (lane == 0) first = atomicAdd(L.next_page, k);
        first = __shfl_sync(0xffffffffu, first, 0);
        granted = pages_granted(first, k, L.pages);
      }
      const unsigned long long fit = ::min(m, room + granted * L.page_size);
      double a64[D] = {};
      if (hits && fit) {
#pragma unroll
        for (int d = 0; d < D; ++d) a64[d] = args.A.x64[d][i];
      }
      unsigned long long base = 0;  // pairs of earlier rounds
      for (unsigned left = fit ? hits : 0u;;) {
        const unsigned active = __ballot_sync(0xffffffffu, left != 0);
        if (!active) break;
        if (left) {
          const unsigned t = static_cast<unsigned>(__ffs(left) - 1);
          left &= left - 1;
          const unsigned long long q = base + static_cast<unsigned>(__popc(active & ((1u << lane) - 1u)));
          if (q >= skip && q - skip < fit) {
            const std::uint32_t j = j0 + t;
            double b64[D];
#pragma unroll
            for (int d = 0; d < D; ++d) b64[d] = args.B.x64[d][j];
            L.slots[slot_of(page, room, first, q - skip, L.page_size)] =
                PairSlot{i, j, args.exact.natural_of(args.exact.key(a64, b64))};
          }
        }
        base += static_cast<unsigned>(__popc(active));
      }
      page = advance(page, room, first, granted, fit, L.page_size);
      written += fit;
      stopped = fit < m;
    }
  }

  // The float64 rule, for pairs inside a guard band (binned pair functions: every pair in reach).
  __device__ __forceinline__ int settle(std::uint32_t i, std::uint32_t j) {
    ++n_settled;
    if constexpr (kBinned) return float64_bin<D>(args, i, j);
    else return find_bin_unpadded(args.edges64, args.nbins, args.steps, float64_key<D>(args, i, j));
  }

  // Histogram: the table entry of a proxy (direct_lookup): a bin, nbins (outside) or uncertain.
  __device__ __forceinline__ std::uint32_t lookup(float s) const {
    // direct_lookup's clamp as two min/max instructions.
    const int u = __float_as_int(s), lo = static_cast<int>(args.base_bits), hi = static_cast<int>(args.top_bits);
    return s_cells[static_cast<std::uint32_t>(::min(::max(u, lo), hi) - lo) >> args.shift];
  }
  // Histogram: counts a certain entry (outside goes to the spare counter after the last bin, so
  // that no branch is needed); says whether the pair still has to be resolved.
  __device__ __forceinline__ bool count_certain(std::uint32_t v) {
    if constexpr (kCountsOnly) {
      if (v < kUncertain) atomicAdd(&my_hist[v], 1u);
      return v >= kUncertain;
    }
    return true;
  }
  // The slow path: the band walk, then float64 inside a band.
  __device__ __forceinline__ void resolve(float s, std::uint32_t i, std::uint32_t j, double wprod, int rb = -1) {
    int k = classify(s);
    if (k == -2) k = settle(i, j);
    if (k >= 0) accept(k, i, j, wprod, rb);
  }
  // The fast verdict on a pair: most are decided by one table load (histograms) or two compares
  // (ranges) and counted here; returns false for the few the caller must resolve(). Traversals
  // collect those and resolve them after a tile, so that the slow path is expanded once, outside
  // the unrolled loop (expanded at every pair it multiplied the kernels' code past the
  // instruction cache).
  __device__ __forceinline__ bool quick(float s, std::uint32_t i, std::uint32_t j, double wprod, int rb = -1) {
    if constexpr (kBinned) {
      return !(s < hi1);  // beyond the reach; resolve() bins the rest
    } else if constexpr (kHist) {
      // (With thousands of bins most table cells hold a band and most pairs go to resolve().)
      const std::uint32_t v = lookup(s);
      if constexpr (Regions && !Weighted && !Means) {
        // As below, branch-free into the lane's own sub-histogram (it holds this unit's pairs;
        // end_unit reads its bins), and a partner in another region adds to that region.
        atomicAdd(&my_hist[::min(v, static_cast<std::uint32_t>(args.nbins) + 1u)], 1u);
        if (v < static_cast<std::uint32_t>(args.nbins) && rb != my_region) {
          if (rb < 0) rb = args.B.region[j];
          if (rb != my_region) atomicAdd(&s_regp[rb * args.nbins + static_cast<int>(v)], 1u);
        }
        return v < kUncertain;
      } else if constexpr (Weighted || Regions || Means) {
        if (v >= kUncertain) return false;
        if (v < static_cast<std::uint32_t>(args.nbins)) accept(static_cast<int>(v), i, j, wprod, rb);
      } else {
        // No branch: a pair left to resolve adds to the spare counter nbins + 1 instead.
        atomicAdd(&my_hist[::min(v, static_cast<std::uint32_t>(args.nbins) + 1u)], 1u);
        return v < kUncertain;
      }
      return true;
    } else {
      const bool in = (s >= hi0) & (s < lo1);
      if (in) accept(0, i, j, wprod);
      return in || !((s >= lo0) & (s < hi1));
    }
  }

  // Adds the block's shared histograms into the global one and clears them (all threads, synced).
  __device__ void flush_block(int tid, int nthreads) {
    if constexpr (kHist) {
      __syncthreads();
      for (int k = tid; k < args.nbins && !in_global(); k += nthreads) {
        unsigned long long c = 0;
        for (int h = 0; h < args.copies; ++h) {
          c += s_hist[h * args.hist_stride + k];
          s_hist[h * args.hist_stride + k] = 0;
        }
        if (c) atomicAdd(&args.counts[k], c);
        if constexpr (Weighted) {
          if (s_wh[k] != 0.0) atomicAdd(&args.wsums[k], s_wh[k]);
          s_wh[k] = 0.0;
        }
      }
      flush_sums(tid, nthreads);
      __syncthreads();
    }
  }
  // Means: the block's separation sums into the global ones, cleared (after a barrier).
  __device__ void flush_sums(int tid, int nthreads) {
    if constexpr (Means) {
      if (!args.sums_shared) return;
      for (int k = tid; k < args.nbins; k += nthreads) {
        if (s_sum[k] != 0.0) atomicAdd(&args.sep_sums[k], s_sum[k]);
        if (s_log_sum[k] != 0.0) atomicAdd(&args.log_sep_sums[k], s_log_sum[k]);
        s_sum[k] = 0.0;
        s_log_sum[k] = 0.0;
      }
    }
  }

  // Adds this warp's own sub-histograms (slots = warps) into the global one and clears them
  // (all lanes of the warp). Weighted sums go straight to the block's shared array and are flushed
  // by flush_weights at the end.
  __device__ void flush_warp(int lane) {
    if constexpr (Regions) {
      // The lanes' counts belong to their unit until end_unit; only the shared arrays go now.
      __syncwarp();
      flush_region_arrays(lane, 32);
      __syncwarp();
    } else if constexpr (kHist) {
      if (in_global()) return;
      __syncwarp();
      unsigned* mine = my_hist - (lane % args.copies) * args.hist_stride;
      for (int k = lane; k < args.nbins; k += 32) {
        unsigned long long c = 0;
        for (int h = 0; h < args.copies; ++h) {
          c += mine[h * args.hist_stride + k];
          mine[h * args.hist_stride + k] = 0;
        }
        if (c) atomicAdd(&args.counts[k], c);
      }
      __syncwarp();
    }
  }
  // Regions: a unit starts (the lane's anchor region) and ends (its lane counts, which hold this
  // unit's pairs only, to the block's histogram and to the anchor's region).
  __device__ __forceinline__ void begin_unit(int region) { my_region = region; }
  __device__ void end_unit() {
    if constexpr (Regions) {
      for (int k = 0; k < args.nbins; ++k) {
        const unsigned c = my_hist[k];
        if (c) {
          my_hist[k] = 0;
          atomicAdd(&s_reg_tot[k], static_cast<unsigned long long>(c));
          atomicAdd(&s_rega[my_region * args.nbins + k], static_cast<unsigned long long>(c));
        }
      }
    }
  }
  // Regions: the block-wide arrays into the global ones, read and cleared atomically (any warp,
  // any time: warps share them).
  __device__ void flush_region_arrays(int first, int step) {
    if constexpr (Regions) {
      for (int k = first; k < args.nbins; k += step) {
        const unsigned long long c = atomicExch(&s_reg_tot[k], 0ull);
        if (c) atomicAdd(&args.counts[k], c);
      }
      for (int k = first; k < args.regions * args.nbins; k += step) {
        const unsigned long long c = atomicExch(&s_rega[k], 0ull) + atomicExch(&s_regp[k], 0u);
        if (c) atomicAdd(&args.region_counts[k], c);
      }
    }
  }
  // The block's region arrays into the global ones (all threads, at the end).
  __device__ void flush_regions(int tid, int nthreads) {
    if constexpr (Regions) {
      __syncthreads();
      flush_region_arrays(tid, nthreads);
      if constexpr (Weighted)
        for (int k = tid; k < args.regions * args.nbins; k += nthreads)
          if (s_regw[k] != 0.0) atomicAdd(&args.region_wsums[k], s_regw[k]);
    }
  }
  // The block's weighted sums (and separation sums) into the global ones (all threads, at the end).
  __device__ void flush_weights(int tid, int nthreads) {
    if constexpr (kHist && (Weighted || Means)) {
      __syncthreads();
      if constexpr (Weighted)
        for (int k = tid; k < args.nbins && !in_global(); k += nthreads)
          if (s_wh[k] != 0.0) atomicAdd(&args.wsums[k], s_wh[k]);
      flush_sums(tid, nthreads);
    }
  }

  // Per-thread totals: warp sums, then one atomic per warp (all lanes of every warp call this).
  __device__ void finish(int tid) {
    for (int off = 16; off > 0; off >>= 1) {
      n_settled += __shfl_down_sync(0xffffffffu, n_settled, off);
      if constexpr (Mode == OutputMode::Reduce) {
        r_count += __shfl_down_sync(0xffffffffu, r_count, off);
        if constexpr (Weighted) r_wsum += __shfl_down_sync(0xffffffffu, r_wsum, off);
      }
    }
    if (tid % 32 == 0) {
      if (n_settled) atomicAdd(args.settled, n_settled);
      // PairList: the page the warp ends on is the only one it may leave partly filled.
      if constexpr (kList)
        if (page.page != kNoPage) args.list.page_unused[page.page] = static_cast<std::uint32_t>(args.list.page_size - page.fill);
      if constexpr (Mode == OutputMode::Reduce) {
        if (r_count) atomicAdd(&args.counts[0], r_count);
        if constexpr (Weighted) atomicAdd(&args.wsums[0], r_wsum);
      }
    }
  }
};

}  // namespace twobody::cuda
