// The dot-like named kernels on the device's float64 GEMM (issue 23, seed 001's dot-like case):
// each block of rows is one cuBLAS DGEMM of the prepared rows (engine/gemm_rows.hpp; on Hopper
// the FP64 tensor cores, IEEE products and float64 sums in the library's order), then one pass
// that turns each dot product into the kernel's value. Distances settle, in the same pass, every
// entry whose bound (exact/gemm_bounds.hpp) the GEMM's cancellation could break: those are
// recomputed by the float64 rule itself, its bits. docs/exactness.md#matrices-on-the-gemm-route.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <optional>
#include <string>

#include "twobody/detail/cuda/cublas_library.hpp"
#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/cuda/device_info.hpp"
#include "twobody/detail/cuda/matrix_blocks.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/engine/gemm_matrix_run.hpp"
#include "twobody/detail/exact/gemm_bounds.hpp"
#include "twobody/error.hpp"

namespace twobody {

namespace cuda {
namespace {

void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(s == CUBLAS_STATUS_ALLOC_FAILED ? ErrorKind::Resource : ErrorKind::Backend,
                std::string("cuBLAS ") + what + ": " + cublas().status_string(s));
}

struct Handle {
  cublasHandle_t h = nullptr;
  Handle() {
    check_cublas(cublas().create(&h), "cublasCreate");
    // (float64 on the FP64 tensor cores; never the fixed-point emulation, whose bound differs)
    check_cublas(cublas().set_math_mode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  }
  ~Handle() {
    if (h) {
      cublas().set_stream(h, nullptr);  // (the run's stream is destroyed by now)
      cublas().destroy(h);
    }
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
};

struct FinishArgs {
  double* out;      // nr × ld, row-major: the GEMM's dot products in, the values out
  std::size_t r0, c0, nr, ld;
  const double* sa;  // per-row scales (GemmRows::scale), or null for dot
  const double* sb;
  const double* raw_a;  // distances: the rows as given, for the settled entries
  const double* raw_b;
  int d;
  int form;  // GemmForm
  unsigned long long* settled;
};

// Σ fl(fl(x_k − y_k)²) in stored order from +0, then (distance) the square root: the rule's
// operations, none contracted, so the CPU's bits.
__device__ double rule_squared_distance(const double* x, const double* y, int d) {
  double s = 0;
  for (int k = 0; k < d; ++k) {
    const double t = __dsub_rn(x[k], y[k]);
    s = __dadd_rn(s, __dmul_rn(t, t));
  }
  return s;
}

// symmetric: the block's diagonal square below its diagonal is left to mirror_square (after).
__global__ void finish_block(FinishArgs a, bool symmetric) {
  const std::size_t total = a.nr * a.ld;
  unsigned long long settled = 0;
  for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t row = e / a.ld, col = e % a.ld;
    if (symmetric && col < row) continue;
    const std::size_t i = a.r0 + row, j = a.c0 + col;
    const double g = a.out[e];
    double v = g;
    switch (static_cast<GemmForm>(a.form)) {
      case GemmForm::Dot: break;
      case GemmForm::Cosine: v = __dsub_rn(1.0, __ddiv_rn(g, __dmul_rn(a.sa[i], a.sb[j]))); break;
      case GemmForm::Correlation: v = __ddiv_rn(g, __dmul_rn(a.sa[i], a.sb[j])); break;
      case GemmForm::Distance:
      case GemmForm::SquaredDistance: {
        const bool squared = static_cast<GemmForm>(a.form) == GemmForm::SquaredDistance;
        const exact::GemmDistance r = exact::gemm_distance(a.sa[i], a.sb[j], g, a.d, squared);
        v = r.value;
        if (r.settle) {
          ++settled;
          const double s = rule_squared_distance(a.raw_a + i * a.d, a.raw_b + j * a.d, a.d);
          v = squared ? s : __dsqrt_rn(s);
        }
        break;
      }
    }
    // (one NaN, the quiet 0x7ff8…, where the rule gives 0/0: the CPU's bits, not the device's own NaN)
    a.out[e] = v != v ? __longlong_as_double(0x7ff8000000000000LL) : v;
  }
  if (settled) atomicAdd(a.settled, settled);
}

// A × A: the block's own square (nr × nr, from column c0 = r0) has its upper half, j >= i, from
// DSYRK, finished by finish_block; each entry below is its mirror's value, so the matrix is
// symmetric bit for bit and each pair is formed (and settled) once.
__global__ void mirror_square(double* out, std::size_t nr, std::size_t ld) {
  const std::size_t total = nr * nr;
  for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t i = e / nr, j = e % nr;
    if (j < i) out[i * ld + j] = out[j * ld + i];
  }
}

unsigned grid_for(std::size_t total) {
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>((total + 255) / 256, 65535u * 8)));
}

struct DeviceRows {
  DeviceBuffer<double> rows, scale, raw;
  explicit DeviceRows(const GemmRows& g) : rows(g.rows.size()), scale(g.scale), raw(g.raw_size()) {
    rows.upload(g.rows.data(), g.rows.size());
    raw.upload(g.raw_rows(), g.raw_size());
  }
};

// The device memory a run takes: the prepared rows and two blocks.
std::size_t device_bytes(const GemmRows& a, const GemmRows* b, std::size_t block_rows, std::size_t cols) {
  const auto held = [](const GemmRows& g) { return (g.rows.size() + g.scale.size() + g.raw_size()) * sizeof(double); };
  return held(a) + (b ? held(*b) : 0) + 2 * block_rows * cols * sizeof(double);
}

}  // namespace
}  // namespace cuda

std::size_t cuda_free_device_bytes() { return cuda::available_device_bytes(); }

std::string gemm_route_unavailable() { return cuda::cublas().error; }

GemmMatrixRun run_matrix_gemm(const GemmMatrixJob& job, MatrixSink& sink) {
  using namespace cuda;
  if (!cublas().error.empty()) throw Error(ErrorKind::Backend, cublas().error + ": use --summation ordered");
  const GemmRows& ga = *job.a;
  const GemmRows& gb = job.b ? *job.b : ga;
  const std::size_t n_rows = ga.n, n_cols = gb.n;
  // (cublasDgemm's sizes are ints)
  if (n_rows > INT_MAX || n_cols > INT_MAX)
    throw Error(ErrorKind::Resource, "the GEMM route takes fewer than 2^31 rows a set: use --summation ordered");
  const std::size_t block = std::max<std::size_t>(1, std::min(job.block_rows ? job.block_rows : n_rows, n_rows));
  const std::size_t need = device_bytes(ga, job.b, block, n_cols);
  if (need > available_device_bytes())
    throw Error(ErrorKind::Resource, "the GEMM route needs " + std::to_string(need >> 20) +
                                         " MiB of device memory (the prepared rows and two blocks), more than is free: "
                                         "use --summation ordered");
  const auto t0 = std::chrono::steady_clock::now();
  const DeviceRows da(ga);
  std::optional<DeviceRows> db_own;
  if (job.b) db_own.emplace(gb);
  const DeviceRows& db = job.b ? *db_own : da;
  DeviceBuffer<unsigned long long> settled(1);
  settled.zero();
  Handle handle;
  const double one = 1.0, zero = 0.0;
  const int d = ga.d;
  GemmMatrixRun run;
  TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
  run.upload = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const ComputeBlock compute = [&](const MatrixBlock& b, double* out, cudaStream_t stream) {
    check_cublas(cublas().set_stream(handle.h, stream), "cublasSetStream");
    // Row-major out (nr × ld) = A[r0 …] · B[c0 …]ᵀ is, column-major, outᵀ (ld × nr):
    // B's rows are the columns of a d × ld matrix, op T.
    const auto gemm = [&](std::size_t col, double* at) {
      check_cublas(cublas().dgemm(handle.h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(b.ld - (col - b.c0)),
                               static_cast<int>(b.nr), d, &one, db.rows.get() + col * d, d,
                               da.rows.get() + b.r0 * d, d, &zero, at, static_cast<int>(b.ld)),
                   "cublasDgemm");
    };
    if (job.symmetric) {
      // (column-major, the square's lower half is the row-major upper one)
      check_cublas(cublas().dsyrk(handle.h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, static_cast<int>(b.nr), d,
                               &one, da.rows.get() + b.r0 * d, d, &zero, out, static_cast<int>(b.ld)),
                   "cublasDsyrk");
      if (b.ld > b.nr) gemm(b.c0 + b.nr, out + b.nr);
    } else {
      gemm(b.c0, out);
    }
    FinishArgs f{out, b.r0, b.c0, b.nr, b.ld, da.scale.get(), db.scale.get(), da.raw.get(),
                 db.raw.get(), d, static_cast<int>(job.form), settled.get()};
    finish_block<<<grid_for(b.nr * b.ld), 256, 0, stream>>>(f, job.symmetric);
    TWOBODY_CUDA_CHECK(cudaGetLastError());
    if (job.symmetric) {
      mirror_square<<<grid_for(b.nr * b.nr), 256, 0, stream>>>(out, b.nr, b.ld);
      TWOBODY_CUDA_CHECK(cudaGetLastError());
    }
  };
  const MatrixBlocksTimes times = run_matrix_blocks(n_rows, n_cols, job.symmetric, block, sink, job.progress, compute);
  run.setup = times.setup;
  run.device_wait = times.device_wait;
  run.sink = times.sink;
  run.settled = settled.download()[0];
  run.device = device_info().name;
  return run;
}

}  // namespace twobody
