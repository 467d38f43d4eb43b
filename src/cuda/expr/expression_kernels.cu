// The kernels of pair expressions, one a reduction, built at the library's build time into LTO-IR
// (not into the library's own cubin: src/CMakeLists.txt embeds the fatbin) and linked at run time
// by nvJitLink with the expression's functions (expr/emit_pair_cuda.cpp, compiled by NVRTC): the
// link inlines the expression into each kernel. Traversal: brute-force tiles, a block of 128
// anchors (a thread each) against a run of 512 partners, every lane of a warp on the same partner
// at once, so a partner's row is one broadcast load and a partner's own outputs (per point, auto's
// second point) are one warp-aggregated atomic. Outputs as the CPU's sinks give them
// (cpu/output_sinks.hpp, cpu/value_sinks.hpp): integer counts, exact sums on the run's grid
// (exact_sum_atomics.cuh), minima and maxima as ordered bits, so no order of the threads changes
// a bit. NaN is no value: in no bin, counted and summed nowhere.
#include "twobody/detail/cuda/expr/expression_launch.hpp"
#include "twobody/detail/engine/key_edges.hpp"
#include "twobody/extend/portable_math.hpp"

// twobody::portable for the generated code (emit_common.cpp's kDeviceDialect).
extern "C" __device__ double tb_exp(double x) { return twobody::portable::exp(x); }
extern "C" __device__ double tb_log(double x) { return twobody::portable::log_any(x); }
extern "C" __device__ double tb_pow(double x, double y) { return twobody::portable::pow(x, y); }

// The expression, linked in at run time (expr/pair_abi.hpp): a side's scalars loaded into slots
// once a point, then the pair's value.
extern "C" __device__ void tb_load_a(const twobody::expr::TbPairArgs* args, unsigned long long i, double* slots);
extern "C" __device__ void tb_load_b(const twobody::expr::TbPairArgs* args, unsigned long long j, double* slots);
extern "C" __device__ double tb_pair_loaded(const twobody::expr::TbPairArgs* args, unsigned long long i,
                                            unsigned long long j, const double* a_slots, const double* b_slots);
extern "C" __device__ void tb_pair_tile(const twobody::expr::TbPairArgs* args, unsigned long long i0,
                                        unsigned long long j0, double* out);

namespace twobody::cuda {
namespace {

constexpr unsigned kFull = 0xffffffffu;

__device__ __forceinline__ double no_value() { return __longlong_as_double(0x7ff8000000000000ll); }

// Visits the block's pairs: visit(i, j, ok, value) for every partner j of the block's run, on every
// lane (ok false where lane i has no pair with j: no anchor, auto's j <= i, or on the grid the
// orientation the run does not keep), so warps stay whole. Returns false, visiting nothing, when
// the whole block is below auto's diagonal.
template <class Visit>
__device__ __forceinline__ bool visit_block(const ExprLaunch& L, Visit&& visit) {
  if (L.items) {
    const ExprBlock b = L.items[blockIdx.x];
    // A warp without anchors (a cell of few points) has no pair: it skips the partners.
    if (b.a0 + (threadIdx.x & ~31u) >= b.a1) return true;
    const unsigned long long i = b.a0 + threadIdx.x;
    const bool anchor = i < b.a1;
    const unsigned oi = anchor && L.order ? L.order[i] : 0u;
    double sa[twobody::expr::kTbSideSlots], sb[twobody::expr::kTbSideSlots];
    if (anchor) tb_load_a(&L.f, i, sa);
    for (unsigned long long j = b.b0; j < b.b1; ++j) {
      const bool ok = anchor && (!b.triangle || j > i) && (!L.order || L.order[j] > oi);
      tb_load_b(&L.f, j, sb);
      visit(i, j, ok, ok ? tb_pair_loaded(&L.f, i, j, sa, sb) : no_value());
    }
    return true;
  }
  const unsigned long long first = L.i0 + static_cast<unsigned long long>(blockIdx.y) * kExprAnchors;
  const unsigned long long i = first + threadIdx.x;
  const bool anchor = i < L.i1;
  const unsigned long long j0 = L.j_first + static_cast<unsigned long long>(blockIdx.x) * kExprPartners;
  const unsigned long long j1 = j0 + kExprPartners < L.nb ? j0 + kExprPartners : L.nb;
  if (L.is_auto && j1 <= first + 1) return false;
  if (first + (threadIdx.x & ~31u) >= L.i1) return true;  // a warp past the last anchor
  double sa[twobody::expr::kTbSideSlots], sb[twobody::expr::kTbSideSlots];
  if (anchor) tb_load_a(&L.f, i, sa);
  for (unsigned long long j = j0; j < j1; ++j) {
    const bool ok = anchor && (!L.is_auto || j > i);
    tb_load_b(&L.f, j, sb);  // the same j on every lane: one broadcast read a scalar
    visit(i, j, ok, ok ? tb_pair_loaded(&L.f, i, j, sa, sb) : no_value());
  }
  return true;
}

__device__ __forceinline__ bool in_range(const ExprLaunch& L, double v) { return v >= L.edges[0] && v < L.edges[L.nbins]; }

__device__ __forceinline__ unsigned long long warp_sum(unsigned long long x) {
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(kFull, x, o);
  return x;
}
__device__ __forceinline__ __int128 warp_sum(__int128 x) {
  auto u = static_cast<unsigned __int128>(x);
  unsigned long long lo = static_cast<unsigned long long>(u), hi = static_cast<unsigned long long>(u >> 64);
  for (int o = 16; o > 0; o >>= 1) {
    const unsigned long long l2 = __shfl_xor_sync(kFull, lo, o), h2 = __shfl_xor_sync(kFull, hi, o);
    const unsigned long long s = lo + l2;
    hi = hi + h2 + (s < lo ? 1ull : 0ull);
    lo = s;
  }
  return static_cast<__int128>((static_cast<unsigned __int128>(hi) << 64) | lo);
}
__device__ __forceinline__ unsigned long long warp_min(unsigned long long x) {
  for (int o = 16; o > 0; o >>= 1) {
    const unsigned long long y = __shfl_xor_sync(kFull, x, o);
    x = y < x ? y : x;
  }
  return x;
}
__device__ __forceinline__ unsigned long long warp_max(unsigned long long x) {
  for (int o = 16; o > 0; o >>= 1) {
    const unsigned long long y = __shfl_xor_sync(kFull, x, o);
    x = y > x ? y : x;
  }
  return x;
}

// value_sinks.hpp's ordered_bits: −0 below +0, one integer comparison a minimum.
__device__ __forceinline__ unsigned long long ordered_bits(double x) {
  const auto u = static_cast<unsigned long long>(__double_as_longlong(x));
  return (u >> 63) ? ~u : u | (1ull << 63);
}

// The block's sums into one (thread 0's result; every thread calls it).
__device__ __forceinline__ void block_add(__int128 s, unsigned long long c, DeviceFixedSum* sum, unsigned long long* count) {
  __shared__ __int128 sums[kExprAnchors / 32];
  __shared__ unsigned long long counts[kExprAnchors / 32];
  s = warp_sum(s);
  c = warp_sum(c);
  const int warp = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) {
    sums[warp] = s;
    counts[warp] = c;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kExprAnchors / 32; ++w) {
      s += sums[w];
      c += counts[w];
    }
    if (sum && s != 0) add_sum(sum, s);
    if (c) atomicAdd(count, c);
  }
}

}  // namespace
}  // namespace twobody::cuda

using twobody::cuda::ExprLaunch;
using namespace twobody::cuda;  // (the kernels' names are extern "C": they stay outside the namespace)

// The largest |value| (NaN skipped, inf kept): the exact sums' grid.
extern "C" __global__ void __launch_bounds__(kExprAnchors) tb_expr_max_abs(const __grid_constant__ ExprLaunch L) {
  double m = 0;
  if (!visit_block(L, [&](unsigned long long, unsigned long long, bool, double v) {
        const double a = fabs(v);
        m = a > m ? a : m;
      }))
    return;
  unsigned long long bits = static_cast<unsigned long long>(__double_as_longlong(m));  // m >= 0: bits order as values
  bits = warp_max(bits);
  if (threadIdx.x % 32 == 0 && bits) atomicMax(L.max_bits, bits);
}

// reduce::Sum: the values' exact sum and their count.
extern "C" __global__ void __launch_bounds__(kExprAnchors) tb_expr_sum(const __grid_constant__ ExprLaunch L) {
  __int128 s = 0;
  unsigned long long c = 0;
  if (!visit_block(L, [&](unsigned long long, unsigned long long, bool, double v) {
        if (v == v) {
          s += grid_steps(L.grid, v);
          ++c;
        }
      }))
    return;
  block_add(s, c, L.sum, L.counts);
}

// reduce::Count: the pairs whose value is in range (a predicate's true pairs).
extern "C" __global__ void __launch_bounds__(kExprAnchors) tb_expr_count(const __grid_constant__ ExprLaunch L) {
  unsigned long long c = 0;
  if (!visit_block(L, [&](unsigned long long, unsigned long long, bool, double v) { c += in_range(L, v) ? 1 : 0; }))
    return;
  block_add(0, c, nullptr, L.counts);
}

// reduce::Histogram: the values' bins (find_bin), counted in shared memory when they fit.
extern "C" __global__ void __launch_bounds__(kExprAnchors) tb_expr_histogram(const __grid_constant__ ExprLaunch L) {
  extern __shared__ unsigned long long shared_words[];
  double* edges_here = reinterpret_cast<double*>(shared_words);
  const int padded = 1 << L.steps;
  unsigned* counts_here = reinterpret_cast<unsigned*>(edges_here + (L.shared_edges ? padded : 0));
  const double* edges = L.shared_edges ? edges_here : L.edges;
  if (L.shared_edges)
    for (int k = threadIdx.x; k < padded; k += blockDim.x) edges_here[k] = L.edges[k];
  if (L.shared_counts)
    for (int k = threadIdx.x; k < L.nbins; k += blockDim.x) counts_here[k] = 0;
  __syncthreads();
  const bool any = visit_block(L, [&](unsigned long long, unsigned long long, bool, double v) {
    const int b = twobody::find_bin(edges, L.nbins, L.steps, v);
    if (b < 0) return;
    if (L.shared_counts) atomicAdd(&counts_here[b], 1u);
    else atomicAdd(&L.counts[b], 1ull);
  });
  if (!any || !L.shared_counts) return;
  __syncthreads();
  for (int k = threadIdx.x; k < L.nbins; k += blockDim.x)
    if (counts_here[k]) atomicAdd(&L.counts[k], static_cast<unsigned long long>(counts_here[k]));
}

// reduce::PerPoint: per point, its partners whose value is in range; anchors_only: the anchors'
// counts alone, or with item_counts each grid block's (the pair list's first pass).
extern "C" __global__ void __launch_bounds__(kExprAnchors) tb_expr_per_point_count(const __grid_constant__ ExprLaunch L) {
  unsigned long long mine = 0;
  unsigned long long i_last = 0;
  if (!visit_block(L, [&](unsigned long long i, unsigned long long j, bool, double v) {
        const bool in = in_range(L, v);
        mine += in ? 1 : 0;
        i_last = i;
        if (L.anchors_only) return;
        const unsigned n = __reduce_add_sync(kFull, in ? 1u : 0u);
        if (threadIdx.x % 32 == 0 && n) atomicAdd(&L.count_b[j], static_cast<unsigned long long>(n));
      }))
    return;
  if (L.item_counts) {
    block_add(0, mine, nullptr, &L.item_counts[blockIdx.x]);
    return;
  }
  if (mine) atomicAdd(&L.count_a[i_last], mine);
}

// reduce::PerPointValue: per point, the count of its partners with a value and their values'
// exact sum, least or largest.
extern "C" __global__ void __launch_bounds__(kExprAnchors) tb_expr_per_point_value(const __grid_constant__ ExprLaunch L) {
  unsigned long long count = 0, extreme = L.of == 1 ? ~0ull : 0ull, i_last = 0;
  __int128 sum = 0;
  if (!visit_block(L, [&](unsigned long long i, unsigned long long j, bool, double v) {
        const bool has = v == v;
        i_last = i;
        const unsigned n = __reduce_add_sync(kFull, has ? 1u : 0u);
        if (n == 0) return;  // (warp-uniform)
        if (L.of == 0) {
          const long long steps = has ? grid_steps(L.grid, v) : 0;
          sum += steps;
          const __int128 all = warp_sum(static_cast<__int128>(steps));
          if (threadIdx.x % 32 == 0) add_sum(&L.sums_b[j], all);
        } else {
          const unsigned long long o = has ? ordered_bits(v) : (L.of == 1 ? ~0ull : 0ull);
          if (has) extreme = L.of == 1 ? (o < extreme ? o : extreme) : (o > extreme ? o : extreme);
          const unsigned long long e = L.of == 1 ? warp_min(o) : warp_max(o);
          if (threadIdx.x % 32 == 0) {
            if (L.of == 1) atomicMin(&L.extreme_b[j], e);
            else atomicMax(&L.extreme_b[j], e);
          }
        }
        count += has ? 1 : 0;
        if (threadIdx.x % 32 == 0) atomicAdd(&L.count_b[j], static_cast<unsigned long long>(n));
      }))
    return;
  if (count == 0) return;
  atomicAdd(&L.count_a[i_last], count);
  if (L.of == 0) add_sum(&L.sums_a[i_last], sum);
  else if (L.of == 1) atomicMin(&L.extreme_a[i_last], extreme);
  else atomicMax(&L.extreme_a[i_last], extreme);
}

// reduce::PairList: the pairs whose value is in range, each at a place one atomic a warp step
// reserves (the host sorts them; its first pass sized the buffer, so none is lost).
extern "C" __global__ void __launch_bounds__(kExprAnchors) tb_expr_pairs(const __grid_constant__ ExprLaunch L) {
  const unsigned lane = threadIdx.x % 32;
  visit_block(L, [&](unsigned long long i, unsigned long long j, bool, double v) {
    const bool in = in_range(L, v);
    const unsigned mask = __ballot_sync(kFull, in);
    if (!mask) return;
    unsigned long long base = 0;
    if (lane == 0) base = atomicAdd(L.cursor, static_cast<unsigned long long>(__popc(mask)));
    base = __shfl_sync(kFull, base, 0);
    if (!in) return;
    const unsigned long long at = base + __popc(mask & ((1u << lane) - 1u));
    if (at < L.capacity) L.pairs[at] = ExprPair{i, j, v};
  });
}

// Matrix (the dense n1 x n2 of every entry's value, expression_matrix): a warp a tile of
// kTbTileRows rows x kExprMatrixColumns columns, a lane the rows against its kTbTileCols columns
// lane, lane + 32, ... (tb_pair_tile); consecutive lanes write consecutive addresses of a row.
extern "C" __global__ void __launch_bounds__(kExprMatrixColumns) tb_expr_matrix(const __grid_constant__ ExprLaunch L) {
  using twobody::expr::kTbTileCols;
  using twobody::expr::kTbTileRows;
  using twobody::expr::kTbTileStride;
  const unsigned lane = threadIdx.x % kTbTileStride, warp = threadIdx.x / kTbTileStride;
  const unsigned long long first = L.c0 + static_cast<unsigned long long>(blockIdx.x) * kExprMatrixColumns;
  const unsigned long long i0 = L.i0 + static_cast<unsigned long long>(blockIdx.y) * kExprMatrixRows + warp * kTbTileRows;
  if (first >= L.nb || i0 >= L.i1) return;
  double out[kTbTileRows * kTbTileCols];
  tb_pair_tile(&L.f, i0, first + lane, out);
  for (int r = 0; r < kTbTileRows && i0 + r < L.i1; ++r)
    for (int c = 0; c < kTbTileCols; ++c) {
      const unsigned long long j = first + lane + static_cast<unsigned long long>(c) * kTbTileStride;
      const double v = out[r * kTbTileCols + c];
      if (j < L.nb) L.matrix[(i0 + r - L.i0) * L.ld + (j - L.c0)] = v == v ? v : no_value();  // one NaN, as the CPU writes
    }
}
