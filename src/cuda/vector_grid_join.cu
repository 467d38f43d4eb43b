// The vector grid's refine (vector_grid.hpp). Persistent warps take units from the queue
// (vector_grid_index.cuh), heaviest first. A unit's qn query rows (one cell, <= 32) share the
// warp: each query gets G = 32 / Q' lanes (Q' the power of two >= qn; GDS-Join's k threads a
// query), which split its partners, lane s taking partners p0 + s, p0 + s + G, ... The lanes split
// partners, not coordinates: the rule's sum runs over k in stored order, and a sum split across
// lanes would round differently. A query's row sits in registers (the kernel is instantiated for
// rows of at most 16, 32 and 64 coordinates); a partner's coordinates are read in order from the
// rows sorted by cell (a run of cells is one contiguous range, read by the unit's other queries
// too). key = sum_k (q_k - p_k)^2, each operation rounded, no FMA (--fmad=false): the CPU's bits.
//
// Pairs: per step (G partners of every query) a ballot ranks the hits, one atomicAdd claims their
// slots in the pair buffer, as in gram_pairs.cu. When the buffer cannot take a step the warp
// writes what fits, records (unit, pairs of the unit written) and stops; warps take no new unit
// once the buffer is full. The next launch first resumes the recorded units (each skipping the
// pairs it wrote: a unit emits its pairs in one fixed order) and the units that were waiting,
// then goes on down the queue: no pair is lost or written twice whatever the buffer's size.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/cuda/vector_grid.hpp"
#include "twobody/detail/cuda/vector_grid_index.cuh"
#include "twobody/detail/cuda/warp_slots.cuh"

namespace twobody::cuda {

namespace {

constexpr int kRefineThreads = 128;
// Units a slab at most (a progress call between slabs: with a progress callback, at least 16 slabs).
constexpr std::uint64_t kSlabUnits = std::uint64_t(1) << 20;

struct RefineArgs {
  const double* __restrict__ qa;  // the first set's rows in cell order
  const double* __restrict__ pb;  // the partners' (= qa for a self-join)
  const std::uint32_t* order_a;
  const std::uint32_t* order_b;
  const VectorGridUnit* units;
  const std::uint32_t* queue;
  int dim;
  bool self;
  double lo, hi;
  unsigned long long first, count;  // this launch's queue positions [first, first + count)
  // Counters: [0] queue units taken, [1] carried units taken, [2] pairs claimed, [3] warps stopped,
  // [4] the buffer is full (0 or 1).
  unsigned long long* counters;
  const ulonglong2* carried;  // (queue position, pairs written) of units a full buffer stopped
  unsigned long long n_carried;
  unsigned long long* total;
  unsigned long long* count_a;
  unsigned long long* count_b;  // = count_a for a self-join
  PairRecord* pairs;            // null: counts only
  unsigned long long capacity;
  ulonglong2* stopped;
};

template <int DMAX>
__global__ void __launch_bounds__(kRefineThreads) grid_refine(RefineArgs g) {
  const int lane = threadIdx.x % 32;
  unsigned long long mine = 0;
  for (;;) {
    unsigned long long pos = 0, skip = 0;
    int have = 0;
    if (lane == 0) {
      const bool full = g.pairs && atomicAdd(g.counters + 4, 0ull) != 0;
      if (!full && g.n_carried) {
        const unsigned long long c = atomicAdd(g.counters + 1, 1ull);
        if (c < g.n_carried) {
          pos = g.carried[c].x;
          skip = g.carried[c].y;
          have = 1;
        }
      }
      if (!full && !have) {
        const unsigned long long t = atomicAdd(g.counters, 1ull);
        if (t < g.count) {
          pos = g.first + t;
          have = 1;
        }
      }
    }
    have = __shfl_sync(0xffffffffu, have, 0);
    if (!have) break;
    pos = __shfl_sync(0xffffffffu, pos, 0);
    skip = __shfl_sync(0xffffffffu, skip, 0);
    const VectorGridUnit u = g.units[g.queue[pos]];

    const int qn = u.qn;
    int qp = 1;
    while (qp < qn) qp <<= 1;
    const int lanes_a_query = 32 / qp, query = lane % qp, slice = lane / qp;
    const bool active = query < qn;
    const std::uint32_t i = u.q0 + static_cast<std::uint32_t>(query);
    double q[DMAX];
    const double* qrow = g.qa + static_cast<std::size_t>(active ? i : u.q0) * static_cast<std::size_t>(g.dim);
#pragma unroll
    for (int k = 0; k < DMAX; ++k) q[k] = k < g.dim ? qrow[k] : 0.0;
    const std::uint32_t oi = g.order_a[active ? i : u.q0];

    unsigned long long row = 0, emitted = 0;
    const std::uint32_t steps = (u.p1 - u.p0 + static_cast<std::uint32_t>(lanes_a_query) - 1) / lanes_a_query;
    for (std::uint32_t s = 0; s < steps; ++s) {
      const std::uint32_t j = u.p0 + s * static_cast<std::uint32_t>(lanes_a_query) + static_cast<std::uint32_t>(slice);
      bool hit = false;
      double key = 0;
      if (active && j < u.p1 && !(u.triangle && j <= i)) {
        const double* p = g.pb + static_cast<std::size_t>(j) * static_cast<std::size_t>(g.dim);
        double acc = 0;
#pragma unroll
        for (int k = 0; k < DMAX; ++k) {
          if (k < g.dim) {
            const double t = q[k] - p[k];
            acc += t * t;
          }
        }
        key = acc;
        hit = key >= g.lo && key < g.hi;
      }
      row += hit;
      if (hit && g.count_b) atomicAdd(g.count_b + g.order_b[j], 1ull);
      if (!g.pairs) continue;  // (uniform: the rest is the pair list's)
      const WarpSlots w = claim_warp_slots(hit, skip, emitted, g.counters + 2);
      if (!w.need) continue;
      if (w.writes(hit)) {
        const unsigned long long at = w.at();
        if (at < g.capacity) {
          const std::uint64_t x = oi, y = g.order_b[j];
          g.pairs[at] = g.self && y < x ? PairRecord{y, x, sqrt(key)} : PairRecord{x, y, sqrt(key)};
        }
      }
      if (w.overflows(g.capacity)) {
        // The buffer is full: this unit stops after the pairs that fit, to be resumed there.
        if (lane == 0) {
          const unsigned long long at = atomicAdd(g.counters + 3, 1ull);
          g.stopped[at] = make_ulonglong2(pos, w.resume_at(emitted, g.capacity));
          atomicExch(g.counters + 4, 1ull);
        }
        return;  // (the whole warp: the slots are the warp's)
      }
    }
    mine += row;
    if (g.count_a) {
      // The lanes of one query (lane bits above log2 Q') add up its partners, one atomic a query.
      for (int off = qp; off < 32; off <<= 1) row += __shfl_xor_sync(0xffffffffu, row, off);
      if (active && slice == 0 && row) atomicAdd(g.count_a + oi, row);
    }
  }
  if (g.pairs) return;
  for (int off = 16; off > 0; off >>= 1) mine += __shfl_xor_sync(0xffffffffu, mine, off);
  if (lane == 0 && mine) atomicAdd(g.total, mine);
}

// Blocks of the persistent grid for rows of `dim` coordinates: as many as the device holds at once.
unsigned long long resident_blocks(int dim) {
  int dev = 0, sms = 0, per_sm = 0;
  TWOBODY_CUDA_CHECK(cudaGetDevice(&dev));
  TWOBODY_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const void* k = dim <= 16 ? reinterpret_cast<const void*>(grid_refine<16>)
                  : dim <= 32 ? reinterpret_cast<const void*>(grid_refine<32>)
                              : reinterpret_cast<const void*>(grid_refine<64>);
  TWOBODY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, kRefineThreads, 0));
  return static_cast<unsigned long long>(std::max(per_sm, 1)) * static_cast<unsigned long long>(sms);
}

// No more blocks than the units can use (every warp may stop once: `resident` bounds the
// stopped list).
void launch(const RefineArgs& g, unsigned long long resident) {
  constexpr unsigned long long kWarps = kRefineThreads / 32;
  const unsigned long long units = g.count + g.n_carried;
  const unsigned blocks = static_cast<unsigned>(std::clamp<unsigned long long>((units + kWarps - 1) / kWarps, 1, resident));
  if (g.dim <= 16) grid_refine<16><<<blocks, kRefineThreads>>>(g);
  else if (g.dim <= 32) grid_refine<32><<<blocks, kRefineThreads>>>(g);
  else grid_refine<64><<<blocks, kRefineThreads>>>(g);
  TWOBODY_CUDA_CHECK_LAUNCH("grid_refine");
}

}  // namespace

VectorGridResult run_vector_grid(const VectorJoinInput& in, const VectorGridGeometry& geo, const TuningPolicy& policy) {
  VectorGridResult out;
  if (in.cosine) throw Error(ErrorKind::Internal, "the vector grid joins Euclidean distances only");
  if (!in.device_a || (!in.is_auto && !in.device_b)) throw Error(ErrorKind::Internal, "the vector grid needs the rows on the device");
  const bool self = in.is_auto;
  const auto t0 = std::chrono::steady_clock::now();
  DeviceVectorGrid grid;
  grid.a = sort_vector_grid_set(in.device_a, in.na, in.dim, geo);
  if (!self) grid.b = sort_vector_grid_set(in.device_b, in.nb, in.dim, geo);
  list_vector_grid_units(grid, geo, self, policy.vector_grid_piece, policy.vector_grid_max_units);
  TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
  out.index_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.chunks = grid.chunks;
  out.units = grid.n_units;
  out.candidates = grid.candidates;
  if (!grid.refusal.empty()) {
    out.refusal = grid.refusal;
    return out;
  }
  const DeviceVectorGridSet& b = self ? grid.a : grid.b;

  RefineArgs g{};
  g.qa = grid.a.rows.get();
  g.pb = b.rows.get();
  g.order_a = grid.a.order.get();
  g.order_b = b.order.get();
  g.units = grid.units.get();
  g.queue = grid.queue.get();
  g.dim = in.dim;
  g.self = self;
  g.lo = in.lo;
  g.hi = in.hi;
  DeviceBuffer<unsigned long long> counters(5), total(1);
  total.zero();
  g.counters = counters.get();
  g.total = total.get();
  DeviceBuffer<unsigned long long> count_a(in.output == VectorJoinOutput::PerPoint ? in.na : 0);
  DeviceBuffer<unsigned long long> count_b(in.output == VectorJoinOutput::PerPoint && !self ? in.nb : 0);
  if (in.output == VectorJoinOutput::PerPoint) {
    count_a.zero();
    count_b.zero();
    g.count_a = count_a.get();
    g.count_b = self ? count_a.get() : count_b.get();
  }
  const bool list = in.output == VectorJoinOutput::Pairs;
  if (list && !in.take) throw Error(ErrorKind::Internal, "a vector grid pair list without a taker");
  out.buffer_pairs = list ? std::max<std::size_t>(policy.vector_grid_pairs, 1) : 0;
  DeviceBuffer<PairRecord> pairs(out.buffer_pairs);
  const unsigned long long resident = resident_blocks(in.dim), warps = resident * (kRefineThreads / 32);
  DeviceBuffer<ulonglong2> stopped(list ? warps : 0), carried_dev(list ? warps : 0);
  g.pairs = list ? pairs.get() : nullptr;
  g.capacity = out.buffer_pairs;
  g.stopped = stopped.get();

  const auto t1 = std::chrono::steady_clock::now();
  std::vector<PairRecord> batch;
  std::vector<ulonglong2> carried, was_carried;
  const std::uint64_t slab_units = in.progress ? std::clamp<std::uint64_t>((grid.n_units + 15) / 16, 1, kSlabUnits) : kSlabUnits;
  for (std::uint64_t slab = 0; slab < grid.n_units; slab += slab_units) {
    const std::uint64_t end = std::min<std::uint64_t>(grid.n_units, slab + slab_units);
    std::uint64_t head = slab;
    carried.clear();
    for (;;) {
      counters.zero();
      g.first = head;
      g.count = end - head;
      g.n_carried = carried.size();
      if (!carried.empty()) {
        if (carried.size() > carried_dev.size()) carried_dev = DeviceBuffer<ulonglong2>(carried.size());
        carried_dev.upload(carried);
      }
      g.carried = carried_dev.get();
      launch(g, resident);
      ++out.launches;
      if (!list) break;
      unsigned long long c[4];
      counters.download(c, 4);
      const unsigned long long used = std::min<unsigned long long>(c[2], out.buffer_pairs);
      if (used > 0) {
        batch.resize(used);
        pairs.download(batch.data(), used);
        out.total += used;
        ++out.batches;
        in.take(batch);
      }
      head += std::min<unsigned long long>(c[0], g.count);
      // Next: the units this launch stopped, then the carried ones no warp took, then the queue.
      was_carried.swap(carried);
      carried.resize(c[3]);
      if (c[3]) stopped.download(carried.data(), c[3]);
      for (std::size_t t = std::min<unsigned long long>(c[1], was_carried.size()); t < was_carried.size(); ++t)
        carried.push_back(was_carried[t]);
      if (head >= end && carried.empty()) break;
      ++out.resumed;
    }
    if (in.progress) {
      TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
      in.progress(static_cast<double>(end) / static_cast<double>(grid.n_units));
    }
  }
  TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
  out.kernel_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  if (!list) total.download(reinterpret_cast<unsigned long long*>(&out.total), 1);
  if (in.output == VectorJoinOutput::PerPoint) {
    out.count_a.resize(in.na);
    count_a.download(reinterpret_cast<unsigned long long*>(out.count_a.data()), in.na);
    if (!self) {
      out.count_b.resize(in.nb);
      count_b.download(reinterpret_cast<unsigned long long*>(out.count_b.data()), in.nb);
    }
  }
  return out;
}

}  // namespace twobody::cuda
