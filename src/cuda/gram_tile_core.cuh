#pragma once
// What the FP16 Gram tiles' kernels share (gram_tiles.cu: counts; gram_pairs.cu: pair lists;
// gram_knn.cu): the arguments, the cp.async/mma.sync mainloop, the distance model of the bound and
// the rule's float64 keys (squared distance and cosine). gram_tiles.cu's opening comment gives the fragment layouts and the tile shape.
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/cuda/gram_knn_rows_device.hpp"
#include "twobody/detail/cuda/gram_rows.hpp"
#include "twobody/detail/cuda/gram_rows_device.hpp"
#include "twobody/detail/exact/gram_bounds.hpp"
#include "twobody/error.hpp"

namespace twobody::cuda::gram_core {

constexpr int kTile = kGramRowBlock;  // 128 rows of A x 128 rows of B
constexpr int kChunk = kGramChunk;    // 32 coordinates a stage
constexpr int kStride = kChunk + 8;   // halves a staged row: 20 words, so a fragment load's 8 rows hit distinct banks
constexpr std::size_t kStageBytes = 2 * 2 * kTile * kStride * sizeof(std::uint16_t);  // the kernels' sa and sb
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr unsigned long long kAllWritten = ~0ull;  // a warp of a resumed tile with nothing left to write

enum class GramOutput { Total, PerPoint, Distances, Pairs };

struct GramArgs {
  const std::uint16_t* ha;  // FP16 rows, n_padded x dim_padded
  const std::uint16_t* hb;
  const float *norm_a, *norm_b;    // N
  const float *inv_a, *inv_b;      // 1/σ
  const double *bmax_a, *bmax_b;   // per 128-row block: max n
  const double *bmin_a, *bmin_b;   //                    min σ
  // The bound in distance space (use_distance_space): per 128-row block the k-NN's terms, and
  // norm_a, norm_b then the rounded rows' N̂; null: the bound E of the norms and scales above.
  const GramKnnBlock *dblk_a, *dblk_b;
  // With them, per row: ρ (the FP16 rounding) and n (norm_upper): the settle queue's first look.
  const double *rho_a, *rho_b, *nup_a, *nup_b;
  const std::uint32_t *order_a, *order_b;  // each Gram row's index in its set (gram_rows.hpp)
  const double *rows_a, *rows_b;   // the rule's rows, in the sets' order (settlement)
  std::uint32_t na, nb;
  int dim, dim_padded;
  bool is_auto;
  // The cosine distance (gram_rows.hpp: make_cosine_gram_rows): N = 1, s̃ = 2·fl32(1 − D) against
  // twice the key range (exact::gram_cosine_range, gram_cosine_bound), the rule's key 1 − a·b.
  bool cosine;
  exact::GramFormat format;
  double lo, hi;  // keys in [lo, hi)
  exact::GramRange range;
  std::uint32_t first_tile;
  unsigned long long* total;
  unsigned long long* count_a;
  unsigned long long* count_b;  // = count_a for a self-join
  uint2* queue;
  unsigned long long* queued;
  unsigned long long capacity;
  unsigned long long* settled_inline;
  float* distances;  // GramOutput::Distances: s̃ and G, na x nb each
  float* products;
  // GramOutput::Pairs (gram_pairs.cu): certain-in and undecided pairs into `pairs`, a launch's
  // tiles given by `task_tile` (I * tiles_b + J; null: the slab's grid) with, per warp,
  // `task_skip` pairs already written by earlier launches (kAllWritten: all of them).
  uint2* pairs;
  unsigned long long* pair_count;
  unsigned long long pair_capacity;
  const unsigned long long* task_tile;
  const unsigned long long* task_skip;
  std::uint32_t tiles_b;
  unsigned long long* stopped;     // warps stopped by a full buffer: count, and their
  ulonglong2* stopped_list;        // (tile * 8 + warp, pairs written)
};

__device__ __forceinline__ void cp_async16(void* to, const void* from) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(to));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(from) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
// d = a·b from a zero accumulator: a partial sum's first MMA (no 4 zeroing moves a fragment).
__device__ __forceinline__ void mma_f16_from_zero(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(0.f));
}
__device__ __forceinline__ void mma_f16(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// Four 8 x 8 matrices of halves from shared memory: lanes 8q .. 8q + 7 give the addresses of matrix
// q's rows (16 bytes each); register q then holds the lane's fragment of matrix q, row lane / 4,
// columns 2(lane % 4) .. +1 — the mma operands' layout. One instruction for four 32-bit loads a
// lane (ncu, 2026-11-29: the mainloop's 24 shared loads a k-step were a seventh of the kernel's
// instructions). Rows of kStride halves (80 bytes) put 8 rows' 16 bytes in distinct banks.
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const std::uint16_t* row) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s)
               : "memory");
}

// Coordinates k0 .. k0 + 31 of rows row0 .. row0 + 127 into shared memory (16 bytes a copy).
__device__ __forceinline__ void stage(std::uint16_t* to, const std::uint16_t* rows, std::size_t row0, int dim_padded, int k0) {
  for (int e = threadIdx.x; e < kTile * (kChunk / 8); e += kThreads) {
    const int r = e / (kChunk / 8), part = e % (kChunk / 8);
    cp_async16(to + r * kStride + part * 8, rows + (row0 + r) * static_cast<std::size_t>(dim_padded) + k0 + part * 8);
  }
}

// The rule's key: sum over k in stored order of (a_k − b_k)², each operation rounded (no FMA).
__device__ __forceinline__ double rule_key(const double* a, const double* b, int dim) {
  double s = 0;
  for (int k = 0; k < dim; ++k) {
    const double t = __dsub_rn(a[k], b[k]);
    s = __dadd_rn(s, __dmul_rn(t, t));
  }
  return s;
}

// The cosine rule's key of two normalised rows: 1 − the sum over k in stored order of a_k b_k,
// each operation rounded (no FMA), as the CPU's panel_keys.
__device__ __forceinline__ double rule_cosine_key(const double* a, const double* b, int dim) {
  double s = 0;
  for (int k = 0; k < dim; ++k) s = __dadd_rn(s, __dmul_rn(a[k], b[k]));
  return __dsub_rn(1.0, s);
}

// The rule's key of the pair of set indices (i, j): the metric's.
__device__ __forceinline__ double pair_key(const GramArgs& g, std::uint32_t i, std::uint32_t j) {
  const double* a = g.rows_a + static_cast<std::size_t>(i) * g.dim;
  const double* b = g.rows_b + static_cast<std::size_t>(j) * g.dim;
  return g.cosine ? rule_cosine_key(a, b, g.dim) : rule_key(a, b, g.dim);
}

// ‖ĥ_i − ĥ_j‖² of Gram rows i, j (ĥ = h/σ, exact in float64) summed in float64: the settle queue's
// first look (exact::gram_half_distance_bound). 16 bytes a load; the padding's zeros add nothing.
__device__ __forceinline__ double half_distance(const GramArgs& g, std::uint32_t i, std::uint32_t j) {
  const uint4* a = reinterpret_cast<const uint4*>(g.ha + static_cast<std::size_t>(i) * g.dim_padded);
  const uint4* b = reinterpret_cast<const uint4*>(g.hb + static_cast<std::size_t>(j) * g.dim_padded);
  const double si = g.inv_a[i], sj = g.inv_b[j];
  double s = 0;
  for (int k = 0; k < g.dim_padded / 8; ++k) {
    const uint4 x = a[k], y = b[k];
    const unsigned xs[4] = {x.x, x.y, x.z, x.w}, ys[4] = {y.x, y.y, y.z, y.w};
#pragma unroll
    for (int w = 0; w < 4; ++w)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const double u = static_cast<double>(__half2float(__ushort_as_half(static_cast<unsigned short>(xs[w] >> (16 * h))))) * si;
        const double v = static_cast<double>(__half2float(__ushort_as_half(static_cast<unsigned short>(ys[w] >> (16 * h))))) * sj;
        const double t = u - v;
        s += t * t;
      }
  }
  return s;
}

// The first look's verdict on Gram rows i, j (Euclidean, with the rows' terms: g.rho_a set).
__device__ __forceinline__ exact::GramVerdict first_look(const GramArgs& g, std::uint32_t i, std::uint32_t j) {
  const double s = half_distance(g, i, j);
  const exact::GramKnnBound b = exact::gram_half_distance_bound(g.dim, s, g.rho_a[i], g.rho_b[j], g.nup_a[i], g.nup_b[j]);
  return exact::gram_interval_verdict(exact::gram_key_lower(b, s), exact::gram_key_upper(b, s), g.range);
}

// A pair the full queue could not take, settled where it was found (rare).
__device__ __forceinline__ bool settle_here(const GramArgs& g, std::uint32_t i, std::uint32_t j) {
  atomicAdd(g.settled_inline, 1ull);
  const double key = pair_key(g, i, j);
  return key >= g.lo && key < g.hi;
}

// s̃ = fl32(fl32(N_i + N_j) − 2D), D = G·(1/σ_i)·(1/σ_j): the bound's model, operation by operation.
__device__ __forceinline__ float gram_distance(float g, float ni, float nj, float inv_i, float inv_j) {
  const float d = __fmul_rn(__fmul_rn(g, inv_i), inv_j);
  return __fmaf_rn(-2.f, d, __fadd_rn(ni, nj));
}

// The joins' partial sums (exact::GramFormat::fold): each thread's 64 running sums in dynamic
// shared memory as 32 pairs (c[m][n][0..1], [2..3]), pair p of thread t at p·kThreads + t (a
// warp's 32 threads: 256 consecutive bytes, two wavefronts without conflicts). 64 KB a block;
// with the two 20 KB stages two blocks still fit an SM (228 KB).
constexpr int kFoldFloats = 64 * kThreads;
constexpr std::size_t kFoldBytes = sizeof(float) * kFoldFloats;
static_assert(exact::kFp16GramFolded.fold % (kChunk / 16) == 0, "a partial sum spans whole stages");

// The joins' format with partial sums of `fold` MMAs (TuningPolicy::gram_fold_for; 0: one
// accumulator). A device whose blocks cannot take the running sums beside the two stages (under
// ~105 KB a block: not sm_90, but some later parts running this PTX) gets one accumulator: the
// format and the launch's memory both follow from this one decision.
inline exact::GramFormat gram_join_format(int fold) {
  if (fold < 0 || fold > exact::kMaxGramFold || fold % (kChunk / 16))
    throw Error(ErrorKind::Internal, "a Gram partial sum must span whole stages, at most kMaxGramFold MMAs");
  exact::GramFormat f = exact::fp16_gram(fold);
  if (fold > 0) {
    int device = 0, optin = 0;
    TWOBODY_CUDA_CHECK(cudaGetDevice(&device));
    TWOBODY_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    if (static_cast<std::size_t>(optin) < kFoldBytes + kStageBytes + 1024) f.fold = 0;  // (+ s_th and the reserve)
  }
  return f;
}

using exact::gram_folds;
// The dynamic shared memory a tile kernel's launch gives for the fold (0 when it does not fold).
inline std::size_t gram_fold_bytes(const GramArgs& g) { return gram_folds(g.format, g.dim) ? kFoldBytes : 0; }

// Lets a tile kernel take the fold's shared memory beyond the default 48 KB, when these tiles fold.
template <class Kernel>
inline void allow_fold(Kernel kernel, const GramArgs& g) {
  if (!gram_fold_bytes(g)) return;
  TWOBODY_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kFoldBytes)));
  TWOBODY_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
}

__device__ __forceinline__ unsigned dynamic_smem_bytes() {
  unsigned r;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r));
  return r;
}

// A partial sum added to the thread's running sums (`first`: copied, exactly); the next partial
// starts from a zero accumulator (mma_f16_from_zero). `add_to_c`: the end, c = running sum + c.
__device__ __forceinline__ void fold_partial(float (&c)[4][4][4], float* sums, bool first, bool add_to_c = false) {
  float2* pairs = reinterpret_cast<float2*>(sums);
#pragma unroll
  for (int m = 0; m < 4; ++m)
#pragma unroll
    for (int n = 0; n < 4; ++n)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float2& v = pairs[((m * 4 + n) * 2 + h) * kThreads + threadIdx.x];
        float &x = c[m][n][2 * h], &y = c[m][n][2 * h + 1];
        if (add_to_c) {
          const float2 r = v;
          x = __fadd_rn(r.x, x);
          y = __fadd_rn(r.y, y);
        } else {
          v = first ? make_float2(x, y) : make_float2(__fadd_rn(v.x, x), __fadd_rn(v.y, y));
        }
      }
}

struct NothingMeanwhile {
  __device__ void operator()() const {}
};

// The warp's 64 x 32 Gram products G of rows row0 + wm .. and columns col0 + wn .., in c[m][n]
// (the C fragments of 16-row block m and 8-column block n). `meanwhile` runs once while the
// first stage's copies are in flight (a tile's thresholds: computed before them, their square
// roots and steps held every block's first barrier, 3.5 % of the expo 10^6 x 128 run); what it
// writes to shared memory is visible after the mainloop (its barriers). When the format folds
// (gram_folds), every F MMAs the partial sums go to `sums` (kFoldBytes of dynamic shared memory)
// and restart from 0; G is then the running sum plus the last partial, as gram_accumulation
// assumes. A launch without that memory stops the kernel (a bound that would not hold).
template <class Meanwhile = NothingMeanwhile>
__device__ __forceinline__ void gram_mainloop(const GramArgs& g, std::size_t row0, std::size_t col0, int wm, int wn,
                                              std::uint16_t (*sa)[kTile * kStride], std::uint16_t (*sb)[kTile * kStride],
                                              float (&c)[4][4][4], const Meanwhile& meanwhile = {}, float* sums = nullptr) {
  const int lane = threadIdx.x % 32;
  const bool folds = gram_folds(g.format, g.dim);
  if (folds && (!sums || dynamic_smem_bytes() < kFoldBytes || g.format.fold % (kChunk / 16))) __trap();
  const int fold_stages = g.format.fold / (kChunk / 16);
  bool folded = false, restart = false;  // restart: the next MMA begins a partial sum
#pragma unroll
  for (int m = 0; m < 4; ++m)
#pragma unroll
    for (int n = 0; n < 4; ++n)
#pragma unroll
      for (int q = 0; q < 4; ++q) c[m][n][q] = 0.f;
  const int chunks = g.dim_padded / kChunk;
  stage(sa[0], g.ha, row0, g.dim_padded, 0);
  stage(sb[0], g.hb, col0, g.dim_padded, 0);
  cp_async_commit();
  meanwhile();
  for (int ch = 0; ch < chunks; ++ch) {
    const int buf = ch & 1;
    if (ch + 1 < chunks) {
      stage(sa[buf ^ 1], g.ha, row0, g.dim_padded, (ch + 1) * kChunk);
      stage(sb[buf ^ 1], g.hb, col0, g.dim_padded, (ch + 1) * kChunk);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
#pragma unroll
    for (int ks = 0; ks < kChunk / 16; ++ks) {
      if (ch * kChunk + ks * 16 >= g.dim) break;  // (block-uniform) only the MMAs that hold coordinates
      std::uint32_t a[4][4], b[4][2];
      // A's 16 x 16 block m: matrices (rows 0-7, k 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15)
      // = a0..a3. B's blocks n, n + 1: (n, k 0-7), (n, 8-15), (n + 1, 0-7), (n + 1, 8-15).
#pragma unroll
      for (int m = 0; m < 4; ++m)
        ldmatrix_x4(a[m], sa[buf] + (wm + m * 16 + lane % 16) * kStride + ks * 16 + (lane / 16) * 8);
#pragma unroll
      for (int n = 0; n < 4; n += 2) {
        std::uint32_t t[4];
        const int q = lane / 8;
        ldmatrix_x4(t, sb[buf] + (wn + (n + q / 2) * 8 + lane % 8) * kStride + ks * 16 + (q % 2) * 8);
        b[n][0] = t[0];
        b[n][1] = t[1];
        b[n + 1][0] = t[2];
        b[n + 1][1] = t[3];
      }
      if (restart) {  // (block-uniform; the first k-step after a fold)
#pragma unroll
        for (int m = 0; m < 4; ++m)
#pragma unroll
          for (int n = 0; n < 4; ++n) mma_f16_from_zero(c[m][n], a[m], b[n][0], b[n][1]);
        restart = false;
      } else {
#pragma unroll
        for (int m = 0; m < 4; ++m)
#pragma unroll
          for (int n = 0; n < 4; ++n) mma_f16(c[m][n], a[m], b[n][0], b[n][1]);
      }
    }
    // (block-uniform) a partial of F MMAs ends here and more MMAs follow
    if (folds && (ch + 1) % fold_stages == 0 && (ch + 1) * kChunk < g.dim) {
      fold_partial(c, sums, !folded);
      folded = restart = true;
    }
    __syncthreads();  // the next stage overwrites this buffer
  }
  if (folded) fold_partial(c, sums, false, true);
}

// Tile (I, J)'s verdict thresholds: the range's edges moved by the bound E of its largest norms and
// smallest scales (exact/gram_bounds.hpp), rounded outward to float32; or, on N̂ rows, those of the
// bound in distance space from its blocks' largest m, ρ and n.
__device__ __forceinline__ exact::GramTileThresholds tile_thresholds(const GramArgs& g, std::uint32_t I, std::uint32_t J) {
  if (g.dblk_a) {
    return exact::gram_knn_tile_thresholds(g.range, block_knn_bound(g.format, g.dim, g.dblk_a[I], g.dblk_b[J]));
  }
  const double ni = g.bmax_a[I], nj = g.bmax_b[J], si = g.bmin_a[I], sj = g.bmin_b[J];
  return exact::gram_tile_thresholds(g.range, g.cosine ? exact::gram_cosine_bound(g.format, g.dim, ni, nj, si, sj)
                                                       : exact::gram_distance_bound(g.format, g.dim, ni, nj, si, sj));
}

// The range of `in`'s keys [lo, hi) as the tiles compare it (the cosine distance's in 2·key).
inline exact::GramRange tile_range(double lo, double hi, bool cosine) {
  return cosine ? exact::gram_cosine_range(lo, hi) : exact::gram_range(lo, hi);
}

// Whether every pair of tile (I, J) is one the epilogue takes (no padding row or column, and not a
// self-join's diagonal tile): then it skips the per-element checks, a few instructions of the ~33
// an element that bound the kernel at d = 128 (ncu, 2026-11-29).
__device__ __forceinline__ bool tile_is_interior(const GramArgs& g, std::uint32_t I, std::uint32_t J, std::size_t row0,
                                                 std::size_t col0) {
  return row0 + kTile <= g.na && col0 + kTile <= g.nb && !(g.is_auto && I == J);
}

// The epilogue's per-row and per-column inputs of a warp's fragments: rows row0 + wm + 16m + gq
// (+8 for h = 1), columns col0 + wn + 8n + 2t4 (+1): N and 1/σ.
__device__ __forceinline__ void tile_norms(const GramArgs& g, std::size_t row0, std::size_t col0, int wm, int wn,
                                           float (&ni)[4][2], float (&inv_i)[4][2], float (&nj)[4][2],
                                           float (&inv_j)[4][2]) {
  const int lane = threadIdx.x % 32, gq = lane / 4, t4 = lane % 4;
#pragma unroll
  for (int m = 0; m < 4; ++m)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const std::size_t i = row0 + wm + m * 16 + gq + 8 * h;
      ni[m][h] = g.norm_a[i];
      inv_i[m][h] = g.inv_a[i];
    }
#pragma unroll
  for (int n = 0; n < 4; ++n)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const std::size_t j = col0 + wn + n * 8 + 2 * t4 + h;
      nj[n][h] = g.norm_b[j];
      inv_j[n][h] = g.inv_b[j];
    }
}

// The device copies of a set's rows (gram_rows_device.hpp: prepared there, or a GramRows uploaded).
using twobody::cuda::DeviceGramRows;

// The tiles' arguments from the rows of both sets (b = a for a self-join): the Gram rows, and the
// rule's rows for the settlement when the copies hold them.
inline GramArgs gram_args(const DeviceGramRows& a, const DeviceGramRows& b) {
  GramArgs g{};
  g.ha = a.half.get();
  g.hb = b.half.get();
  g.norm_a = a.norm2.get();
  g.norm_b = b.norm2.get();
  g.inv_a = a.inv_sigma.get();
  g.inv_b = b.inv_sigma.get();
  g.bmax_a = a.block_norm_max.get();
  g.bmax_b = b.block_norm_max.get();
  g.bmin_a = a.block_sigma_min.get();
  g.bmin_b = b.block_sigma_min.get();
  g.order_a = a.order.get();
  g.order_b = b.order.get();
  g.rows_a = a.rule.get();
  g.rows_b = b.rule.get();
  g.na = static_cast<std::uint32_t>(a.n);
  g.nb = static_cast<std::uint32_t>(b.n);
  g.dim = a.dim;
  g.dim_padded = a.dim_padded;
  g.format = exact::kFp16Gram;  // one accumulator; the joins set theirs (gram_join_format)
  return g;
}
// The joins' tiles on the bound in distance space (Euclidean only: the cosine distance keeps E):
// the rows' N̂ for norms and their blocks' terms for the thresholds (gram_knn_rows_device.hpp, of
// the same rows; kb null for a self-join). `g.cosine` must be set first.
inline void use_distance_space(GramArgs& g, const DeviceGramRows& da, const DeviceGramRows& db, const DeviceGramKnnRows* ka,
                               const DeviceGramKnnRows* kb) {
  if (g.cosine || !ka) return;
  if (!kb && &db != &da) throw Error(ErrorKind::Internal, "a cross join's bound in distance space needs both sets' row terms");
  const DeviceGramKnnRows& tb = kb ? *kb : *ka;
  if (ka->blocks.size() != da.n_padded / kTile || tb.blocks.size() != db.n_padded / kTile ||
      ka->norm2.size() != da.n_padded || tb.norm2.size() != db.n_padded || ka->rounding.size() != da.n ||
      tb.rounding.size() != db.n)
    throw Error(ErrorKind::Internal, "the row terms of the bound in distance space are not those of the Gram rows");
  g.norm_a = ka->norm2.get();
  g.norm_b = tb.norm2.get();
  g.dblk_a = ka->blocks.get();
  g.dblk_b = tb.blocks.get();
  g.rho_a = ka->rounding.get();
  g.rho_b = tb.rounding.get();
  g.nup_a = da.norm_up.get();
  g.nup_b = db.norm_up.get();
}

inline GramArgs gram_args(const DeviceGramRows& a, const DeviceGramRows& b, const GramRows&, const GramRows&) {
  return gram_args(a, b);
}

}  // namespace twobody::cuda::gram_core
