#pragma once
// A warp's step of a resumable pair list (gram_pairs.cu, vector_grid_join.cu): the lanes with a
// pair this step take consecutive slots, in lane order, from one atomicAdd on the list's counter,
// after the pairs of the warp's fixed order an earlier launch already wrote (`skip`). When the
// buffer cannot take them the warp records where it stopped (resume_at) and ends, to be launched
// again from there: no pair is lost or written twice.
namespace twobody::cuda {

struct WarpSlots {
  unsigned long long base = 0;   // the step's first slot
  unsigned long long need = 0;   // slots claimed; 0: nothing to write this step
  unsigned long long fresh = 0;  // the step's first ranks, written by an earlier launch
  unsigned k = 0;                // the step's pairs
  unsigned rank = 0;             // this lane's rank among them
  // Whether this lane (holding a pair: `mine`) writes it, and to which slot.
  __device__ bool writes(bool mine) const { return mine && need && rank >= fresh; }
  __device__ unsigned long long at() const { return base + (rank - fresh); }
  __device__ bool overflows(unsigned long long capacity) const { return base + need > capacity; }
  // The warp's pairs written in all once it stops at a full buffer (`emitted`: as claim left it).
  __device__ unsigned long long resume_at(unsigned long long emitted, unsigned long long capacity) const {
    const unsigned long long fit = base < capacity ? capacity - base : 0;
    return emitted - k + fresh + fit;
  }
};

// One step, every lane of the warp together: `emit` this lane's pair, `emitted` the warp's pairs
// before the step (advanced past this one's), `counter` the list's slot counter.
__device__ __forceinline__ WarpSlots claim_warp_slots(bool emit, unsigned long long skip, unsigned long long& emitted,
                                                      unsigned long long* counter) {
  WarpSlots s;
  const unsigned lane = threadIdx.x % 32;
  const unsigned mask = __ballot_sync(0xffffffffu, emit);
  if (!mask) return s;
  s.k = __popc(mask);
  s.rank = __popc(mask & ((1u << lane) - 1));
  s.fresh = skip > emitted ? min(skip - emitted, static_cast<unsigned long long>(s.k)) : 0;
  emitted += s.k;
  s.need = s.k - s.fresh;
  if (s.need == 0) return s;
  unsigned long long base = 0;
  if (lane == 0) base = atomicAdd(counter, s.need);
  s.base = __shfl_sync(0xffffffffu, base, 0);
  return s;
}

}  // namespace twobody::cuda
