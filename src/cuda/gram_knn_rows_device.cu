// The k-NN tiles' row terms on the device (gram_knn_rows_device.hpp). A block of kGramRowBlock
// threads owns a block of rows of the norm order: it stages 32 coordinates at a time of their rule
// rows (gathered through `order`) and FP16 rows, each thread sums its own row in order, and the
// block reduces the GramKnnBlock of its rows.
#include <cuda_fp16.h>

#include <stdexcept>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/gram_knn_rows_device.hpp"
#include "twobody/error.hpp"

namespace twobody::cuda {

namespace {

constexpr int kRows = kGramRowBlock;  // a block's rows: one GramKnnBlock
constexpr int kStage = 32;            // coordinates staged at a time
static_assert(kRows % 32 == 0, "whole warps");

struct TermArgs {
  const double* rule;          // n x dim, the set's order
  const std::uint16_t* half;   // n_padded x dim_padded, the norm order
  const std::uint32_t* order;  // the set's index of each row
  const double* sigma;         // n
  const double* norm_up;       // n
  const double* centre;        // dim
  std::size_t n;
  int dim, dim_padded;
  float* norm2;
  double *rounded_norm, *rounding, *norm_low;
  GramKnnBlock* blocks;
};

__device__ __forceinline__ double larger(double a, double b) { return a < b ? b : a; }  // std::max's rule
__device__ __forceinline__ double smaller(double a, double b) { return b < a ? b : a; }  // std::min's rule

__global__ void __launch_bounds__(kRows) knn_row_terms(TermArgs p) {
  __shared__ double xs[kRows][kStage + 1];            // (+1: a thread's row is conflict-free)
  __shared__ std::uint16_t hs[kRows][kStage + 2];     // 17 words a row: odd, conflict-free too
  __shared__ double part[4][kRows / 32];
  const std::size_t r0 = blockIdx.x * static_cast<std::size_t>(kRows), r = r0 + threadIdx.x;
  const std::size_t d = static_cast<std::size_t>(p.dim), dp = static_cast<std::size_t>(p.dim_padded);
  const bool real = r < p.n;
  const double inv_sigma = real ? __ddiv_rn(1.0, p.sigma[r]) : 1.0;  // a power of two: ĥ = h/σ exact
  double hat = 0, err = 0, shifted = 0;
  for (int k0 = 0; k0 < p.dim; k0 += kStage) {
    const int width = min(kStage, p.dim - k0);
    for (int e = threadIdx.x; e < kRows * kStage; e += kRows) {
      const int rr = e / kStage, kk = e % kStage;
      if (kk < width && r0 + rr < p.n) {
        xs[rr][kk] = p.rule[static_cast<std::size_t>(p.order[r0 + rr]) * d + k0 + kk];
        hs[rr][kk] = p.half[(r0 + rr) * dp + k0 + kk];
      }
    }
    __syncthreads();
    if (real)
      for (int kk = 0; kk < width; ++kk) {
        const double x = __dsub_rn(xs[threadIdx.x][kk], p.centre[k0 + kk]);  // x', as the preparation
        const double v = __dmul_rn(static_cast<double>(__half2float(__ushort_as_half(hs[threadIdx.x][kk]))), inv_sigma);
        const double delta = __dsub_rn(v, x);
        hat = __dadd_rn(hat, __dmul_rn(v, v));
        err = __dadd_rn(err, __dmul_rn(delta, delta));
        shifted = __dadd_rn(shifted, __dmul_rn(x, x));
      }
    __syncthreads();
  }
  // (r < n_padded: the grid covers the padded rows exactly.)
  double m = 0, rho = 0, nmax = 0, nmin = HUGE_VAL;
  if (real) {
    const GramKnnRowTerms t = gram_knn_row_terms(hat, err, shifted, p.dim);
    p.norm2[r] = t.norm2;
    p.rounded_norm[r] = t.rounded_norm;
    p.rounding[r] = t.rounding;
    p.norm_low[r] = t.norm_low;
    m = t.rounded_norm;
    rho = t.rounding;
    nmax = p.norm_up[r];
    nmin = t.norm_low;
  } else {
    p.norm2[r] = 0.f;
  }
  for (int off = 16; off > 0; off >>= 1) {
    m = larger(m, __shfl_xor_sync(0xffffffffu, m, off));
    rho = larger(rho, __shfl_xor_sync(0xffffffffu, rho, off));
    nmax = larger(nmax, __shfl_xor_sync(0xffffffffu, nmax, off));
    nmin = smaller(nmin, __shfl_xor_sync(0xffffffffu, nmin, off));
  }
  const int warp = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) {
    part[0][warp] = m;
    part[1][warp] = rho;
    part[2][warp] = nmax;
    part[3][warp] = nmin;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kRows / 32; ++w) {
      m = larger(m, part[0][w]);
      rho = larger(rho, part[1][w]);
      nmax = larger(nmax, part[2][w]);
      nmin = smaller(nmin, part[3][w]);
    }
    // A block without real rows: zeros, as the host leaves it.
    p.blocks[blockIdx.x] = r0 < p.n ? GramKnnBlock{m, rho, nmax, nmin} : GramKnnBlock{0, 0, 0, 0};
  }
}

}  // namespace

DeviceGramKnnRows make_gram_knn_rows_on_device(const DeviceGramRows& g, const std::vector<double>& centre) {
  if (!g.prepared() || g.rule.size() != g.n * static_cast<std::size_t>(g.dim) ||
      centre.size() != static_cast<std::size_t>(g.dim))
    throw Error(ErrorKind::Internal, "the k-NN's row terms need the Gram rows, the rule rows and the centre on the device");
  DeviceGramKnnRows k;
  const std::size_t blocks = g.n_padded / kRows;
  k.norm2 = DeviceBuffer<float>(g.n_padded);
  k.rounded_norm = DeviceBuffer<double>(g.n);
  k.rounding = DeviceBuffer<double>(g.n);
  k.norm_low = DeviceBuffer<double>(g.n);
  k.blocks = DeviceBuffer<GramKnnBlock>(blocks);
  if (blocks == 0) return k;
  DeviceBuffer<double> c(centre);
  TermArgs p{};
  p.rule = g.rule.get();
  p.half = g.half.get();
  p.order = g.order.get();
  p.sigma = g.sigma.get();
  p.norm_up = g.norm_up.get();
  p.centre = c.get();
  p.n = g.n;
  p.dim = g.dim;
  p.dim_padded = g.dim_padded;
  p.norm2 = k.norm2.get();
  p.rounded_norm = k.rounded_norm.get();
  p.rounding = k.rounding.get();
  p.norm_low = k.norm_low.get();
  p.blocks = k.blocks.get();
  knn_row_terms<<<static_cast<unsigned>(blocks), kRows>>>(p);  // (n < 2^31 rows: fewer than 2^24 blocks)
  TWOBODY_CUDA_CHECK_LAUNCH("knn_row_terms");
  return k;  // (c is freed in stream order, after the kernel)
}

}  // namespace twobody::cuda
