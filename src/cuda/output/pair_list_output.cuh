#pragma once
// reduce::PairList on the GPU (type III): one range; the direct output buffer of pair_pool.hpp
// (pages claimed by one atomic, drained and resumed when the pool is full). Traversals mark each
// anchor's pairs in range as bits over 32 partners and hand them over warp-wide (emit_hits), which
// writes them in a fixed order.
#include "twobody/detail/cuda/output/output_common.cuh"
#include "twobody/detail/cuda/pair_pool.hpp"

namespace twobody::cuda {

template <int D, class Proxy, class Exact>
struct PairListOutput : OutputCommon<PairListOutput<D, Proxy, Exact>, D, Proxy, Exact> {
  using Common = OutputCommon<PairListOutput, D, Proxy, Exact>;
  using Common::args;
  using Common::n_settled;
  // The warp's page, and its unit's pairs: produced so far in this launch (emitted) and known
  // written (from the task's skip on: the pairs earlier launches wrote, then this one's); stopped
  // when the pool ran out. The same in every lane of the warp.
  PageCursor page;
  unsigned long long emitted = 0, written = 0;
  bool stopped = false;

  __device__ PairListOutput(const PairKernelArgs<Proxy, Exact>& a, unsigned char*, int, int, int = 1)
      : Common(a, a.range_lo0) {}

  __device__ __forceinline__ int classify(float s) const { return this->classify_range(s); }
  // Traversals mark their pairs as bits and write them warp-wide (emit_hits), in the fixed order a
  // resumed unit relies on; a pair from one lane alone has no place in it.
  __device__ __forceinline__ void accept(int, std::uint32_t, std::uint32_t, double, int = -1) { __trap(); }

  // A worker's task k of the launch: its unit and where this warp (`warp` of the unit's warps)
  // resumes it (pair_pool.hpp: resumed units first).
  __device__ __forceinline__ unsigned long long begin_task(unsigned long long k, int warp) {
    emitted = 0;
    written = args.list.skip_of(k, warp);
    stopped = false;
    return args.list.unit_of(k);
  }
  // Whether this warp's unit ran out of pages (the traversal may stop early).
  // (As `true && stopped`: the bool then reaches the block's vote as it did before the outputs were
  // split, the same machine code.)
  __device__ __forceinline__ bool list_stopped() const { return true && stopped; }
  // Records a unit that ran out of pages, with the pairs each of its warps has written
  // (`written_by_warp`, one per warp of the unit; null: this warp's, a unit of one warp), for the
  // next launch. One thread calls it.
  __device__ void record_stopped(unsigned long long unit, const unsigned long long* written_by_warp = nullptr) const {
    const PairListBuffer& L = args.list;
    const unsigned long long k = atomicAdd(L.stopped, 1ull);
    if (k >= L.stopped_capacity) return;  // the host sees the count beyond capacity and fails
    L.stopped_unit[k] = unit;
    for (int w = 0; w < L.warps; ++w)
      L.stopped_skip[k * static_cast<unsigned>(L.warps) + static_cast<unsigned>(w)] = written_by_warp ? written_by_warp[w] : written;
  }
  // Writes this lane's pairs (i, j0 + t) for every bit t of `hits`, warp-wide: all 32 lanes call it
  // together. Pairs are numbered in rounds, each taking every lane's lowest remaining bit, lanes in
  // order, after the pairs of the unit's earlier calls: for a given unit the same numbers every
  // launch, so those below `written` are skipped. The rest go to the warp's page and, beyond it, to
  // pages claimed at once by one atomic; what the pool cannot take stops the unit there.
  __device__ __forceinline__ void emit_hits(unsigned hits, std::uint32_t i, std::uint32_t j0) {
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

  // The settled count (warp sums, one atomic per warp); the page the warp ends on is the only one
  // it may leave partly filled.
  __device__ void finish(int tid) {
    for (int off = 16; off > 0; off >>= 1) n_settled += __shfl_down_sync(0xffffffffu, n_settled, off);
    if (tid % 32 == 0) {
      if (n_settled) atomicAdd(args.settled, n_settled);
      if (page.page != kNoPage) args.list.page_unused[page.page] = static_cast<std::uint32_t>(args.list.page_size - page.fill);
    }
  }
};

}  // namespace twobody::cuda
