#pragma once
// reduce::Histogram (and Histogram2D) on the GPU (type II).
//
//   The float-bits table of fast_path.hpp in shared memory (two or three shared loads per pair,
//   whatever the number of bins). Counts go to `copies` privatised sub-histograms (lane % copies,
//   seed 000 Algorithm 4) laid out with an odd stride, so that lanes adding to the same bin of
//   their own copies hit different banks; they are summed into the global 64-bit histogram often
//   enough that the 32-bit shared counters never overflow.
//   Means (Histogram::mean_separation): every pair counted in a bin also gets its float64 key, and
//   Σ w s and Σ w log s (s its natural value) go to per-block arrays in shared memory when they fit
//   beside the histogram, else straight to global memory. Every floating sum (these, the weighted
//   sums, the regions' weighted sums) is an exact sum: its terms on the run's grid, added as
//   integers (exact_sum_atomics.cuh), so that it equals the CPU's bit for bit.
//   A binned pair function (Exact with bin(a, b): 2-D (r_p, π) or (s, μ) bins): one range, the
//   reach [0, cutoff), whose band only says "certainly beyond"; every other pair is binned by the
//   function in float64. Sub-histograms in shared memory as above when they fit (no bin table),
//   else, and always with jackknife regions, 64-bit atomics in global memory per pair.
//   Regions (jackknife): the lane's sub-histogram counts the pairs of its current unit only; at the
//   unit's end (end_unit) they go to the block's histogram and to the anchor's region in one add per
//   bin, so the anchor's region costs nothing per pair. A pair whose partner lies in another region
//   adds to that region per pair (s_regp). Block-wide arrays, read and cleared with atomicExch.
#include "twobody/detail/cuda/output/output_common.cuh"
#include "twobody/extend/portable_math.hpp"

namespace twobody::cuda {

template <int D, bool Weighted, class Proxy, class Exact, bool Regions, bool Means>
struct HistogramOutput : OutputCommon<HistogramOutput<D, Weighted, Proxy, Exact, Regions, Means>, D, Proxy, Exact> {
  using Common = OutputCommon<HistogramOutput, D, Proxy, Exact>;
  using Common::args;
  using Common::lo0;
  using Common::hi1;
  static constexpr bool kBinned = Common::kBinned;
  static constexpr bool kCountsOnly = !Weighted && !Means && !kBinned;
  // Binned pair functions count regions pair by pair in global memory (accept_global), not per lane.
  static_assert(!kBinned || !Regions, "binned pair functions: regions at run time");
  BandPair* s_bands = nullptr;
  DeviceFixedSum* s_wh = nullptr;
  unsigned* s_hist = nullptr;
  std::uint16_t* s_cells = nullptr;
  unsigned* my_hist = nullptr;
  unsigned long long* s_reg_tot = nullptr;  // nbins
  unsigned long long* s_rega = nullptr;     // regions x nbins, anchors' regions
  unsigned* s_regp = nullptr;               // regions x nbins, partners' other regions
  DeviceFixedSum* s_regw = nullptr;         // regions x nbins, weighted (per pair, both terms)
  int my_region = 0;
  // Means: Σ w s and Σ w log s per bin, the block's in shared memory or the global arrays.
  DeviceFixedSum* s_sum = nullptr;
  DeviceFixedSum* s_log_sum = nullptr;

  // Lays the output's shared memory out from `smem` and loads the bin table (the caller syncs).
  // `slots` groups of `copies` sub-histograms: one group per block (slots = 1, flush_block), or
  // one per warp (slots = warps, flush_warp), for traversals whose warps never meet at a barrier.
  __device__ HistogramOutput(const PairKernelArgs<Proxy, Exact>& a, unsigned char* smem, int tid, int nthreads,
                             int slots = 1)
      : Common(a, a.lo0) {
    const int nb = a.nbins;
    // (Counted in global memory, a binned pair function keeps nothing here: copies is 0.)
    const bool shared_counts = !in_global();
    s_bands = reinterpret_cast<BandPair*>(smem);
    s_wh = reinterpret_cast<DeviceFixedSum*>(s_bands + (!kBinned ? nb + 1 : 0));
    s_hist = reinterpret_cast<unsigned*>(s_wh + (Weighted && shared_counts ? nb : 0));
    s_cells = reinterpret_cast<std::uint16_t*>(s_hist + a.hist_stride * a.copies * slots);
    if constexpr (!kBinned) {
      for (int k = tid; k <= nb; k += nthreads) s_bands[k] = a.bands[k];
      for (int k = tid; k < a.ncells; k += nthreads) s_cells[k] = a.cells[k];
    }
    for (int k = tid; k < a.hist_stride * a.copies * slots; k += nthreads) s_hist[k] = 0;
    if constexpr (Weighted)
      if (shared_counts)
        for (int k = tid; k < nb; k += nthreads) s_wh[k] = {0, 0};
    if constexpr (Regions) {
      const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(s_cells + a.ncells);
      s_reg_tot = reinterpret_cast<unsigned long long*>((end + 7) / 8 * 8);
      s_rega = s_reg_tot + nb;
      s_regw = reinterpret_cast<DeviceFixedSum*>(s_rega + a.regions * nb);
      s_regp = reinterpret_cast<unsigned*>(s_regw + (Weighted ? a.regions * nb : 0));
      for (int k = tid; k < nb; k += nthreads) s_reg_tot[k] = 0;
      for (int k = tid; k < a.regions * nb; k += nthreads) {
        s_rega[k] = 0;
        s_regp[k] = 0;
        if constexpr (Weighted) s_regw[k] = {0, 0};
      }
    }
    if constexpr (Means) {
      const std::uintptr_t end = Regions ? reinterpret_cast<std::uintptr_t>(s_regp + a.regions * nb)
                                         : reinterpret_cast<std::uintptr_t>(s_cells + a.ncells);
      s_sum = a.sums_shared ? reinterpret_cast<DeviceFixedSum*>((end + 7) / 8 * 8) : a.sep_sums;
      s_log_sum = a.sums_shared ? s_sum + nb : a.log_sep_sums;
      if (a.sums_shared)
        for (int k = tid; k < 2 * nb; k += nthreads) s_sum[k] = {0, 0};
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
    if constexpr (kBinned) return s < hi1 ? -2 : -1;
    else return classify_table(s_bands, s_cells, args.ncells, lo0, args.base_bits, args.shift, args.nbins, s);
  }

  // One accepted pair (bin k, anchor i, partner j; rb: the partner's region, or -1 to look it up).
  __device__ __forceinline__ void accept(int k, std::uint32_t i, std::uint32_t j, double wprod, int rb = -1) {
    if constexpr (Means) add_separation(k, i, j, wprod);
    if constexpr (kBinned)
      if (args.hist_global) return accept_global(k, i, j, wprod);
    atomicAdd(&my_hist[k], 1u);
    long long w = 0;
    if constexpr (Weighted) {
      w = grid_steps(args.pair_grid, wprod);
      add_steps(&s_wh[k], w);
    }
    if constexpr (Regions) {
      // Seed 003's inverse jackknife: each pair once, into its anchor's region (end_unit) and,
      // when different, its partner's.
      if (rb < 0) rb = args.B.region[j];
      if (rb != my_region) atomicAdd(&s_regp[rb * args.nbins + k], 1u);
      if constexpr (Weighted) {
        add_steps(&s_regw[my_region * args.nbins + k], w);
        if (rb != my_region) add_steps(&s_regw[rb * args.nbins + k], w);
      }
    }
  }

  // A binned pair's bin straight into the global arrays: counts, weighted sums and, with regions
  // (args.regions > 0), T[r][k] for the region of each point (once when both share it), as
  // RegionHistogramSink does. The float64 bin already cost more than these atomics.
  __device__ __forceinline__ void accept_global(int k, std::uint32_t i, std::uint32_t j, double wprod) {
    atomicAdd(&args.counts[k], 1ull);
    long long w = 0;
    if constexpr (Weighted) {
      w = grid_steps(args.pair_grid, wprod);
      add_steps(&args.wsums[k], w);
    }
    if (args.regions > 0) {
      const std::size_t nb = static_cast<std::size_t>(args.nbins);
      const std::size_t ra = static_cast<std::size_t>(args.A.region[i]), rb = static_cast<std::size_t>(args.B.region[j]);
      atomicAdd(&args.region_counts[ra * nb + k], 1ull);
      if (rb != ra) atomicAdd(&args.region_counts[rb * nb + k], 1ull);
      if constexpr (Weighted) {
        add_steps(&args.region_wsums[ra * nb + k], w);
        if (rb != ra) add_steps(&args.region_wsums[rb * nb + k], w);
      }
    }
  }

  // Means: the pair's separation from its float64 key (a binned pair function's own: r_p or s,
  // Corrfunc's rpavg and savg), the CPU's SeparationSums::add.
  __device__ __forceinline__ void add_separation(int k, std::uint32_t i, std::uint32_t j, double wprod) {
    double s = 0.0;
    if constexpr (kBinned)
      on_float64<D>(args, i, j, [&](const double* a, const double* b) { return args.exact.bin(a, b, s); });
    else
      s = args.exact.natural_of(float64_key<D>(args, i, j));
    const double w = Weighted ? wprod : 1.0;
    add_steps(&s_sum[k], grid_steps(args.sep_grid, w * s));
    // s = 0 (a coincident pair) adds log of the smallest normal double, as on the CPU, not −∞.
    add_steps(&s_log_sum[k], grid_steps(args.log_grid, w * portable::log(fmax(s, 2.2250738585072014e-308))));
  }

  // The table entry of a proxy (direct_lookup): a bin, nbins (outside) or uncertain.
  __device__ __forceinline__ std::uint32_t lookup(float s) const {
    // direct_lookup's clamp as two min/max instructions.
    const int u = __float_as_int(s), lo = static_cast<int>(args.base_bits), hi = static_cast<int>(args.top_bits);
    return s_cells[static_cast<std::uint32_t>(::min(::max(u, lo), hi) - lo) >> args.shift];
  }
  // Counts a certain entry (outside goes to the spare counter after the last bin, so that no
  // branch is needed); says whether the pair still has to be resolved.
  __device__ __forceinline__ bool count_certain(std::uint32_t v) {
    if constexpr (kCountsOnly) {
      if (v < kUncertain) atomicAdd(&my_hist[v], 1u);
      return v >= kUncertain;
    }
    return true;
  }
  // The fast verdict on a pair: most are decided by one table load and counted here; returns false
  // for the few the caller must resolve(). Traversals collect those and resolve them after a tile,
  // so that the slow path is expanded once, outside the unrolled loop (expanded at every pair it
  // multiplied the kernels' code past the instruction cache).
  __device__ __forceinline__ bool quick(float s, std::uint32_t i, std::uint32_t j, double wprod, int rb = -1) {
    if constexpr (kBinned) {
      return !(s < hi1);  // beyond the reach; resolve() bins the rest
    } else {
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
    }
  }

  // Adds the block's shared histograms into the global one and clears them (all threads, synced).
  __device__ void flush_block(int tid, int nthreads) {
    __syncthreads();
    for (int k = tid; k < args.nbins && !in_global(); k += nthreads) {
      unsigned long long c = 0;
      for (int h = 0; h < args.copies; ++h) {
        c += s_hist[h * args.hist_stride + k];
        s_hist[h * args.hist_stride + k] = 0;
      }
      if (c) atomicAdd(&args.counts[k], c);
      if constexpr (Weighted) {
        if (!is_zero(s_wh[k])) add_sum(&args.wsums[k], s_wh[k].lo, s_wh[k].hi);
        s_wh[k] = {0, 0};
      }
    }
    flush_sums(tid, nthreads);
    __syncthreads();
  }
  // Means: the block's separation sums into the global ones, cleared (after a barrier).
  __device__ void flush_sums(int tid, int nthreads) {
    if constexpr (Means) {
      if (!args.sums_shared) return;
      for (int k = tid; k < args.nbins; k += nthreads) {
        if (!is_zero(s_sum[k])) add_sum(&args.sep_sums[k], s_sum[k].lo, s_sum[k].hi);
        if (!is_zero(s_log_sum[k])) add_sum(&args.log_sep_sums[k], s_log_sum[k].lo, s_log_sum[k].hi);
        s_sum[k] = {0, 0};
        s_log_sum[k] = {0, 0};
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
    } else {
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
          if (!is_zero(s_regw[k])) add_sum(&args.region_wsums[k], s_regw[k].lo, s_regw[k].hi);
    }
  }
  // The block's weighted sums (and separation sums) into the global ones (all threads, at the end).
  __device__ void flush_weights(int tid, int nthreads) {
    if constexpr (Weighted || Means) {
      __syncthreads();
      if constexpr (Weighted)
        for (int k = tid; k < args.nbins && !in_global(); k += nthreads)
          if (!is_zero(s_wh[k])) add_sum(&args.wsums[k], s_wh[k].lo, s_wh[k].hi);
      flush_sums(tid, nthreads);
    }
  }
};

}  // namespace twobody::cuda
