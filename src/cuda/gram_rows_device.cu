// The Gram rows prepared on the device (gram_rows_device.hpp). Each step is a small kernel on the
// legacy stream, every value computed with the host reference's operations in the host's order
// (no FMA: the library's CUDA is compiled with --fmad=false, and the sums spell __dadd_rn):
//   promote    stored rows -> float64 rule rows (exact)
//   normalise  (cosine) one thread a row sums Σ x² in order (rows staged as in row_stats), its
//              square root the norm; then every coordinate divided by its row's norm
//   centre     one thread a (chunk of 4096 rows, column): the chunk summed row by row; then one
//              thread a column adds the chunks in order and divides (gram_centre's order)
//   row_stats  a block of 128 rows stages 32 coordinates at a time through shared memory
//              (coalesced), then each thread sums its own row in order: max |x'|, Σ x'², the
//              range test (the first bad row by atomicMin), σ, N, n
//   sort       cub::DeviceRadixSort::SortPairs on (n, index): stable, so equal norms keep the
//              index order, as std::stable_sort in sort_by_norm
//   write_rows a warp a row of the norm order: its FP16 coordinates two at a time (one 32-bit
//              store), zeros beyond d and for the padding rows, and N, 1/σ, n, σ, order
//   bounds     a block a block of 128 rows: max n and min σ
#include <cuda_fp16.h>

#include <algorithm>
#include <chrono>
#include <cub/device/device_radix_sort.cuh>
#include <limits>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/gram_rows_device.hpp"
#include "twobody/detail/exact/gram_bounds.hpp"

namespace twobody::cuda {

namespace {

constexpr int kStatsRows = 128;  // rows a row_stats block
constexpr int kStatsChunk = 32;  // coordinates staged at a time
constexpr int kCentreThreads = 128;
constexpr unsigned long long kNoBadRow = ~0ull;

std::size_t round_up(std::size_t v, std::size_t to) { return (v + to - 1) / to * to; }

unsigned grid_for(std::size_t items, int per_block) {
  return static_cast<unsigned>(std::min<std::size_t>((items + per_block - 1) / per_block, 1u << 20));
}

// v rounded to FP16 once from float64, to nearest with ties to even, subnormals kept: the PTX
// conversion cvt.rn.f16.f64 (__double2half on the device), half_bits' result (tested).
__device__ __forceinline__ std::uint16_t to_half_bits(double v) { return __half_as_ushort(__double2half(v)); }

// σ x' for coordinate x of centre c: x' = fl64(x − c), then an exact power-of-two scaling.
__device__ __forceinline__ std::uint16_t scaled_half(double x, double c, double sigma) {
  return to_half_bits(__dmul_rn(sigma, __dsub_rn(x, c)));
}

template <class T>
__device__ __forceinline__ double promoted(T x) {
  return static_cast<double>(x);
}
template <>
__device__ __forceinline__ double promoted<std::uint16_t>(std::uint16_t bits) {
  return static_cast<double>(__half2float(__ushort_as_half(bits)));  // both steps exact
}

template <class T>
__global__ void promote(const T* raw, double* rule, std::size_t count) {
  for (std::size_t t = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; t < count;
       t += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    rule[t] = promoted(raw[t]);
}

__global__ void half_bits_kernel(const double* v, std::uint16_t* out, std::size_t count) {
  for (std::size_t t = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; t < count;
       t += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[t] = to_half_bits(v[t]);
}

// Chunk blockIdx.x of the rows of A then B, column blockIdx.y * kCentreThreads + threadIdx.x.
__global__ void __launch_bounds__(kCentreThreads) centre_parts(const double* a, std::size_t na, const double* b,
                                                               std::size_t nb, int dim, double* part) {
  const int k = blockIdx.y * kCentreThreads + threadIdx.x;
  if (k >= dim) return;
  const std::size_t d = static_cast<std::size_t>(dim), n = na + nb, c = blockIdx.x;
  const std::size_t end = min(n, (c + 1) * kGramCentreRows);
  double s = 0;
#pragma unroll 8
  for (std::size_t i = c * kGramCentreRows; i < end; ++i) s = __dadd_rn(s, i < na ? a[i * d + k] : b[(i - na) * d + k]);
  part[c * d + k] = s;
}

__global__ void centre_sum(const double* part, std::size_t chunks, int dim, std::size_t n, double* centre) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= dim) return;
  double s = 0;
  for (std::size_t c = 0; c < chunks; ++c) s = __dadd_rn(s, part[c * static_cast<std::size_t>(dim) + k]);
  centre[k] = n > 0 ? __ddiv_rn(s, static_cast<double>(n)) : s;
}

// The cosine rule's norm of each row, fl(sqrt(Σ_k x_k²)) summed in order (rows staged as in
// row_stats below), and the first row whose norm is 0 or not finite.
__global__ void __launch_bounds__(kStatsRows) rule_norms(const double* rule, std::size_t n, int dim, double* norm,
                                                         unsigned long long* first_bad) {
  __shared__ double staged[kStatsRows][kStatsChunk + 1];
  const std::size_t row0 = blockIdx.x * static_cast<std::size_t>(kStatsRows), d = static_cast<std::size_t>(dim);
  const std::size_t i = row0 + threadIdx.x;
  double ss = 0;
  for (int k0 = 0; k0 < dim; k0 += kStatsChunk) {
    const int width = min(kStatsChunk, dim - k0);
    for (int e = threadIdx.x; e < kStatsRows * kStatsChunk; e += kStatsRows) {
      const int r = e / kStatsChunk, kk = e % kStatsChunk;
      if (kk < width && row0 + r < n) staged[r][kk] = rule[(row0 + r) * d + k0 + kk];
    }
    __syncthreads();
    if (i < n)
      for (int kk = 0; kk < width; ++kk) ss = __dadd_rn(ss, __dmul_rn(staged[threadIdx.x][kk], staged[threadIdx.x][kk]));
    __syncthreads();
  }
  if (i >= n) return;
  const double v = __dsqrt_rn(ss);
  norm[i] = v;
  if (!(v > 0) || !isfinite(v)) atomicMin(first_bad, static_cast<unsigned long long>(i));
}

// Each coordinate divided by its row's norm (cpu::RuleRows::load).
__global__ void divide_rows(double* rule, std::size_t count, int dim, const double* norm) {
  for (std::size_t t = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; t < count;
       t += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    rule[t] = __ddiv_rn(rule[t], norm[t / static_cast<std::size_t>(dim)]);
}

struct RowStats {
  double* norm_up;  // n, the sets' order
  double* sigma;
  float* norm2;
  std::uint32_t* index;
  unsigned long long* first_bad;
};

__global__ void __launch_bounds__(kStatsRows) row_stats(const double* rule, std::size_t n, int dim, const double* centre,
                                                        RowStats out) {
  __shared__ double staged[kStatsRows][kStatsChunk + 1];  // (+1: a thread's row is conflict-free)
  const std::size_t row0 = blockIdx.x * static_cast<std::size_t>(kStatsRows), d = static_cast<std::size_t>(dim);
  const std::size_t i = row0 + threadIdx.x;
  double mx = 0, ss = 0;
  for (int k0 = 0; k0 < dim; k0 += kStatsChunk) {
    const int width = min(kStatsChunk, dim - k0);
    for (int e = threadIdx.x; e < kStatsRows * kStatsChunk; e += kStatsRows) {
      const int r = e / kStatsChunk, kk = e % kStatsChunk;
      if (kk < width && row0 + r < n) staged[r][kk] = rule[(row0 + r) * d + k0 + kk];
    }
    __syncthreads();
    if (i < n)
      for (int kk = 0; kk < width; ++kk) {
        const double v = __dsub_rn(staged[threadIdx.x][kk], centre[k0 + kk]);
        const double a = fabs(v);
        mx = mx < a ? a : mx;  // std::max's rule: a NaN never enters, as on the host
        ss = __dadd_rn(ss, __dmul_rn(v, v));
      }
    __syncthreads();
  }
  if (i >= n) return;
  const bool fits = gram_row_fits(mx, ss);
  if (!fits) atomicMin(out.first_bad, static_cast<unsigned long long>(i));
  const double sigma = fits ? gram_row_scale(mx) : 1.0;
  out.norm_up[i] = fits ? exact::norm_upper(ss, dim) : 0.0;
  out.sigma[i] = sigma;
  out.norm2[i] = __double2float_rn(ss);
  out.index[i] = static_cast<std::uint32_t>(i);
}

struct RowWrite {
  const double* rule;
  const double* centre;
  const std::uint32_t* from;  // the sorted rows' indices (null: the sets' order)
  const double* norm_up_u;    // the per-row values in the sets' order
  const double* sigma_u;
  const float* norm2_u;
  std::size_t n, n_padded;
  int dim, dim_padded;
  bool unit_norms;  // the cosine distance's N = 1 (make_cosine_gram_rows)
  std::uint32_t* half_pairs;  // two FP16 coordinates a word
  float* norm2;
  float* inv_sigma;
  double* norm_up;
  double* sigma;
  std::uint32_t* order;
};

__global__ void __launch_bounds__(256) write_rows(RowWrite w) {
  const int lane = threadIdx.x % 32;
  const std::size_t r = (blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x) / 32;
  if (r >= w.n_padded) return;
  const int words = w.dim_padded / 2;
  std::uint32_t* to = w.half_pairs + r * static_cast<std::size_t>(words);
  if (r >= w.n) {  // padding: zero rows that never reach a range
    for (int p = lane; p < words; p += 32) to[p] = 0;
    if (lane == 0) {
      w.norm2[r] = 0.f;
      w.inv_sigma[r] = 1.f;
      w.order[r] = static_cast<std::uint32_t>(r);
    }
    return;
  }
  const std::uint32_t from = w.from ? w.from[r] : static_cast<std::uint32_t>(r);
  const double sigma = w.sigma_u[from];
  const double* x = w.rule + static_cast<std::size_t>(from) * w.dim;
  for (int p = lane; p < words; p += 32) {
    const int k = 2 * p;
    const std::uint32_t lo = k < w.dim ? scaled_half(x[k], w.centre[k], sigma) : 0u;
    const std::uint32_t hi = k + 1 < w.dim ? scaled_half(x[k + 1], w.centre[k + 1], sigma) : 0u;
    to[p] = lo | hi << 16;  // the lower coordinate at the lower address
  }
  if (lane == 0) {
    w.norm2[r] = w.unit_norms ? 1.f : w.norm2_u[from];
    w.inv_sigma[r] = __double2float_rn(__ddiv_rn(1.0, sigma));
    w.norm_up[r] = w.norm_up_u[from];
    w.sigma[r] = sigma;
    w.order[r] = from;
  }
}

// Block blockIdx.x of kGramRowBlock rows: the largest n and the smallest σ of its real rows.
__global__ void __launch_bounds__(kGramRowBlock) block_bounds(const double* norm_up, const double* sigma, std::size_t n,
                                                              double* bmax, double* bmin) {
  __shared__ double s_max[kGramRowBlock / 32], s_min[kGramRowBlock / 32];
  const std::size_t r = blockIdx.x * static_cast<std::size_t>(kGramRowBlock) + threadIdx.x;
  double hi = 0, lo = HUGE_VAL;
  if (r < n) {
    hi = norm_up[r];
    lo = sigma[r];
  }
  for (int off = 16; off > 0; off >>= 1) {
    const double h = __shfl_xor_sync(0xffffffffu, hi, off), l = __shfl_xor_sync(0xffffffffu, lo, off);
    hi = hi < h ? h : hi;
    lo = l < lo ? l : lo;
  }
  if (threadIdx.x % 32 == 0) {
    s_max[threadIdx.x / 32] = hi;
    s_min[threadIdx.x / 32] = lo;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kGramRowBlock / 32; ++w) {
      hi = hi < s_max[w] ? s_max[w] : hi;
      lo = s_min[w] < lo ? s_min[w] : lo;
    }
    bmax[blockIdx.x] = hi;
    bmin[blockIdx.x] = isinf(lo) ? 1.0 : lo;  // a block of padding only (never launched)
  }
}

// A set's rows as stored, uploaded (the pitch of a borrowed set's rows dropped) and promoted.
// float16 and float32 rows go through a staging buffer of at most kStagingBytes, a slab of rows at
// a time, so the device holds the float64 rows and one slab, never a second copy of the set (the
// copies from pageable memory wait for the previous slab's promotion on the legacy stream).
constexpr std::size_t kStagingBytes = std::size_t(64) << 20;

DeviceBuffer<double> upload_rule_rows(const VectorSet& v) {
  const std::size_t n = v.size(), d = static_cast<std::size_t>(v.dim()), eb = element_bytes(v.element());
  DeviceBuffer<double> rule(n * d);
  if (n == 0) return rule;
  const auto copy = [&](void* to, std::size_t first, std::size_t rows) {
    if (v.row_stride() == d)
      upload_bytes(to, v.row(first), rows * d * eb);  // (staged through pinned buffers when large)
    else
      TWOBODY_CUDA_CHECK(cudaMemcpy2D(to, d * eb, v.row(first), v.row_stride() * eb, d * eb, rows, cudaMemcpyHostToDevice));
  };
  if (v.element() == Element::F64) {
    copy(rule.get(), 0, n);
    return rule;
  }
  const std::size_t slab = std::clamp<std::size_t>(kStagingBytes / (d * eb), 1, n);
  DeviceBuffer<unsigned char> raw(slab * d * eb);  // (freed in stream order, after the last promotion)
  for (std::size_t first = 0; first < n; first += slab) {
    const std::size_t rows = std::min(slab, n - first), count = rows * d;
    copy(raw.get(), first, rows);
    double* to = rule.get() + first * d;
    if (v.element() == Element::F32)
      promote<<<grid_for(count, 256), 256>>>(reinterpret_cast<const float*>(raw.get()), to, count);
    else
      promote<<<grid_for(count, 256), 256>>>(reinterpret_cast<const std::uint16_t*>(raw.get()), to, count);
    TWOBODY_CUDA_CHECK_LAUNCH("promote");
  }
  return rule;
}

// One set's per-row values in its own order (row_stats' outputs) and its flag.
struct SetStats {
  DeviceBuffer<double> norm_up, sigma;
  DeviceBuffer<float> norm2;
  DeviceBuffer<std::uint32_t> index;
  explicit SetStats(std::size_t n) : norm_up(n), sigma(n), norm2(n), index(n) {}
};

void launch_row_stats(const DeviceGramRows& g, const double* centre, SetStats& s, unsigned long long* first_bad) {
  if (g.n == 0) return;
  row_stats<<<static_cast<unsigned>((g.n + kStatsRows - 1) / kStatsRows), kStatsRows>>>(
      g.rule.get(), g.n, g.dim, centre, RowStats{s.norm_up.get(), s.sigma.get(), s.norm2.get(), s.index.get(), first_bad});
  TWOBODY_CUDA_CHECK_LAUNCH("row_stats");
}

// The rule's rows of both sets normalised for the cosine distance, or the rule's error for the
// first row without a direction (the first set's first, as cpu::RuleRows are made).
void normalise_rule_rows(DeviceGramRows* const (&sets)[2], const VectorSet* const (&from)[2], bool cross) {
  DeviceBuffer<unsigned long long> first_bad(2);
  const unsigned long long none[2] = {kNoBadRow, kNoBadRow};
  first_bad.upload(none, 2);
  DeviceBuffer<double> norms[2];
  for (int s = 0; s < 2; ++s) {
    if (!sets[s] || sets[s]->n == 0) continue;
    const DeviceGramRows& g = *sets[s];
    norms[s] = DeviceBuffer<double>(g.n);
    rule_norms<<<static_cast<unsigned>((g.n + kStatsRows - 1) / kStatsRows), kStatsRows>>>(g.rule.get(), g.n, g.dim,
                                                                                          norms[s].get(), first_bad.get() + s);
    TWOBODY_CUDA_CHECK_LAUNCH("rule_norms");
  }
  unsigned long long bad[2];
  first_bad.download(bad, 2);
  for (int s = 0; s < 2; ++s)
    if (sets[s] && bad[s] != kNoBadRow)
      refuse_cosine_row(*from[s], bad[s], cross ? (s == 0 ? "first set: " : "second set: ") : "");
  for (int s = 0; s < 2; ++s) {
    if (!sets[s] || sets[s]->n == 0) continue;
    DeviceGramRows& g = *sets[s];
    const std::size_t count = g.n * static_cast<std::size_t>(g.dim);
    divide_rows<<<grid_for(count, 256), 256>>>(g.rule.get(), count, g.dim, norms[s].get());
    TWOBODY_CUDA_CHECK_LAUNCH("divide_rows");
  }
}

// The Gram rows of a set whose row_stats have run: sorted by norm (or not), written, bounded.
void write_gram_rows(DeviceGramRows& g, const double* centre, const SetStats& s, bool sort, bool unit_norms) {
  const std::size_t n = g.n;
  g.half = DeviceBuffer<std::uint16_t>(g.n_padded * static_cast<std::size_t>(g.dim_padded));
  g.norm2 = DeviceBuffer<float>(g.n_padded);
  g.inv_sigma = DeviceBuffer<float>(g.n_padded);
  g.norm_up = DeviceBuffer<double>(n);
  g.sigma = DeviceBuffer<double>(n);
  g.order = DeviceBuffer<std::uint32_t>(g.n_padded);
  DeviceBuffer<std::uint32_t> by(sort ? n : 0);
  if (sort && n > 0) {
    // The sorted keys land in g.norm_up and are written again, equal, by write_rows.
    std::size_t bytes = 0;
    const int items = static_cast<int>(n);  // (< 2^31 rows: choose_vector_path)
    TWOBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, s.norm_up.get(), g.norm_up.get(), s.index.get(),
                                                       by.get(), items));
    DeviceBuffer<unsigned char> temp(std::max<std::size_t>(bytes, 1));
    TWOBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), bytes, s.norm_up.get(), g.norm_up.get(),
                                                       s.index.get(), by.get(), items));
  }
  RowWrite w{};
  w.rule = g.rule.get();
  w.centre = centre;
  w.from = sort ? by.get() : nullptr;
  w.norm_up_u = s.norm_up.get();
  w.sigma_u = s.sigma.get();
  w.norm2_u = s.norm2.get();
  w.n = n;
  w.n_padded = g.n_padded;
  w.dim = g.dim;
  w.dim_padded = g.dim_padded;
  w.unit_norms = unit_norms;
  w.half_pairs = reinterpret_cast<std::uint32_t*>(g.half.get());
  w.norm2 = g.norm2.get();
  w.inv_sigma = g.inv_sigma.get();
  w.norm_up = g.norm_up.get();
  w.sigma = g.sigma.get();
  w.order = g.order.get();
  write_rows<<<static_cast<unsigned>((g.n_padded + 7) / 8), 256>>>(w);  // (a warp a row: < 2^28 blocks)
  TWOBODY_CUDA_CHECK_LAUNCH("write_rows");
  const std::size_t blocks = g.n_padded / kGramRowBlock;
  g.block_norm_max = DeviceBuffer<double>(blocks);
  g.block_sigma_min = DeviceBuffer<double>(blocks);
  block_bounds<<<static_cast<unsigned>(blocks), kGramRowBlock>>>(g.norm_up.get(), g.sigma.get(), n,
                                                                  g.block_norm_max.get(), g.block_sigma_min.get());
  TWOBODY_CUDA_CHECK_LAUNCH("block_bounds");
}

}  // namespace

DeviceGramSets prepare_gram_rows_on_device(const VectorSet& a, const VectorSet* b, const GramPreparation& how) {
  DeviceGramSets out;
  const int dim = a.dim();
  DeviceGramRows* sets[2] = {&out.a, b ? &out.b : nullptr};
  const VectorSet* from[2] = {&a, b};
  // The context first (the CLI starts it on another thread while the files load): the upload's
  // time below is then the copies' own.
  TWOBODY_CUDA_CHECK(cudaFree(nullptr));
  const auto t0 = std::chrono::steady_clock::now();
  for (int s = 0; s < 2; ++s) {
    if (!sets[s]) continue;
    DeviceGramRows& g = *sets[s];
    g.n = from[s]->size();
    g.dim = dim;
    g.n_padded = std::max<std::size_t>(round_up(g.n, kGramRowBlock), kGramRowBlock);
    g.dim_padded = static_cast<int>(round_up(static_cast<std::size_t>(dim), kGramChunk));
    g.rule = upload_rule_rows(*from[s]);
  }
  out.upload_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (how.cosine) normalise_rule_rows(sets, from, b != nullptr);
  if (!how.gram) return out;

  // The centre, as gram_centre sums it (the cosine distance's: zero).
  const std::size_t na = out.a.n, nb = b ? out.b.n : 0, n = na + nb, d = static_cast<std::size_t>(dim);
  const std::size_t chunks = std::max<std::size_t>((n + kGramCentreRows - 1) / kGramCentreRows, 1);
  DeviceBuffer<double> part(chunks * d), centre(d);
  if (how.cosine) {
    centre.zero();
  } else if (n > 0) {
    centre_parts<<<dim3(static_cast<unsigned>(chunks), static_cast<unsigned>((d + kCentreThreads - 1) / kCentreThreads)),
                   kCentreThreads>>>(out.a.rule.get(), na, b ? out.b.rule.get() : nullptr, nb, dim, part.get());
    TWOBODY_CUDA_CHECK_LAUNCH("centre_parts");
  }
  if (!how.cosine) {
    centre_sum<<<static_cast<unsigned>((d + 127) / 128), 128>>>(part.get(), n > 0 ? chunks : 0, dim, n, centre.get());
    TWOBODY_CUDA_CHECK_LAUNCH("centre_sum");
  }

  // Each row's values, and the first row of each set out of the path's range.
  DeviceBuffer<unsigned long long> first_bad(2);
  const unsigned long long none[2] = {kNoBadRow, kNoBadRow};
  first_bad.upload(none, 2);
  SetStats sa(out.a.n), sb(b ? out.b.n : 0);
  launch_row_stats(out.a, centre.get(), sa, first_bad.get());
  if (b) launch_row_stats(out.b, centre.get(), sb, first_bad.get() + 1);
  unsigned long long bad[2];
  first_bad.download(bad, 2);
  out.centre = centre.download();
  // The words and the order of make_gram_rows' refusals (the first set's, then the second's).
  const auto which = [&](int s) { return std::string(b ? (s == 0 ? "first set: " : "second set: ") : ""); };
  if (const std::string c = gram_centre_refusal(out.centre); !c.empty()) out.refusal = which(0) + c;
  for (int s = 0; s < 2 && out.refusal.empty(); ++s) {
    if (bad[s] == kNoBadRow) continue;
    std::vector<double> row(d);
    from[s]->row_f64(bad[s], row.data());
    out.refusal = which(s) + gram_row_refusal(row.data(), dim, out.centre, bad[s]);
  }
  if (!out.refusal.empty()) return out;
  write_gram_rows(out.a, centre.get(), sa, how.sort, how.cosine);
  if (b) write_gram_rows(out.b, centre.get(), sb, how.sort, how.cosine);
  // (centre, part and the per-row scratch are freed in stream order, after the kernels above.)
  return out;
}

std::vector<std::uint16_t> half_bits_on_device(const std::vector<double>& values) {
  DeviceBuffer<double> v(values);
  DeviceBuffer<std::uint16_t> h(values.size());
  if (!values.empty()) {
    half_bits_kernel<<<grid_for(values.size(), 256), 256>>>(v.get(), h.get(), values.size());
    TWOBODY_CUDA_CHECK_LAUNCH("half_bits_kernel");
  }
  return h.download();
}

}  // namespace twobody::cuda
