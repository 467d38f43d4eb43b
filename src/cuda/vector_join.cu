// The float64 join kernel (vector_join.hpp). A block takes 64 anchors by 64 partners, their keys
// by the tile loop of vector_key_tiles.cuh (the k-NN kernel's too): 256 threads with a 4 x 4
// register tile of keys each, every key the rule's sum over k in stored order.
#include <algorithm>
#include <chrono>
#include <string>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/cuda/vector_join.hpp"
#include "twobody/detail/cuda/vector_key_tiles.cuh"
#include "twobody/detail/engine/pair_limit.hpp"

namespace twobody::cuda {

namespace {

using vector_keys::kChunk;
using vector_keys::kPer;
using vector_keys::kSide;
using vector_keys::kTile;

struct JoinArgs {
  const double* a;
  const double* b;
  std::size_t na, nb;
  int dim;
  bool is_auto, cosine;
  double lo, hi;
  std::size_t first_tile;  // the slab's first anchor tile
  unsigned long long* total;
  unsigned long long* count_a;
  unsigned long long* count_b;  // = count_a for a self-join
  PairRecord* pairs;            // null: count only
  unsigned long long capacity;
};

__global__ void __launch_bounds__(kSide * kSide) join_tiles(JoinArgs g) {
  const std::size_t I = g.first_tile + blockIdx.y, J = blockIdx.x;
  if (g.is_auto && J < I) return;  // below the diagonal: the pairs are the transposed tile's
  __shared__ double as[kChunk][kTile + 1];
  __shared__ double bs[kChunk][kTile + 1];
  const int tx = threadIdx.x % kSide, ty = threadIdx.x / kSide;
  double acc[kPer][kPer];
  vector_keys::key_sums(acc, as, bs, g.a, g.na, g.b, g.nb, g.dim, I * kTile, J * kTile, g.cosine);
  unsigned long long mine = 0;
#pragma unroll
  for (int r = 0; r < kPer; ++r) {
    const std::size_t i = I * kTile + ty + kSide * r;
    if (i >= g.na) continue;
    unsigned long long row = 0;
#pragma unroll
    for (int c = 0; c < kPer; ++c) {
      const std::size_t j = J * kTile + tx + kSide * c;
      if (j >= g.nb || (g.is_auto && j <= i)) continue;
      const double key = g.cosine ? 1.0 - acc[r][c] : acc[r][c];
      if (!(key >= g.lo && key < g.hi)) continue;
      ++row;
      if (g.count_b) atomicAdd(g.count_b + j, 1ull);
      if (g.pairs) {
        const unsigned long long at = atomicAdd(g.total, 1ull);
        if (at < g.capacity) g.pairs[at] = PairRecord{i, j, g.cosine ? key : sqrt(key)};
      }
    }
    if (row && g.count_a) atomicAdd(g.count_a + i, row);
    mine += row;
  }
  if (!g.pairs && mine) atomicAdd(g.total, mine);
}

// About 2^15 blocks a slab (a few milliseconds on an H100 at d = 128), at most 65535 rows of tiles.
std::size_t slab_rows(std::size_t tiles_b) {
  return std::clamp<std::size_t>((std::size_t(1) << 15) / std::max<std::size_t>(tiles_b, 1), 1, 65535);
}

void launch_slab(JoinArgs g, std::size_t first, std::size_t rows, std::size_t tiles_b) {
  g.first_tile = first;
  const dim3 grid(static_cast<unsigned>(tiles_b), static_cast<unsigned>(rows));
  join_tiles<<<grid, kSide * kSide>>>(g);
  TWOBODY_CUDA_CHECK_LAUNCH("join_tiles");
}

// Runs every anchor tile in slabs (a progress call between slabs; a callback that throws, the
// Python module's Ctrl-C, stops the run there).
double launch_all(JoinArgs g, std::size_t tiles_a, std::size_t tiles_b, const std::function<void(double)>& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t slab = slab_rows(tiles_b);
  for (std::size_t first = 0; first < tiles_a; first += slab) {
    launch_slab(g, first, std::min(slab, tiles_a - first), tiles_b);
    if (progress) {
      TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
      progress(static_cast<double>(std::min(tiles_a, first + slab)) / static_cast<double>(tiles_a));
    }
  }
  TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Pairs slab by slab: counted, then written into a buffer of that size (grown as a slab needs)
// and handed to in.take, so the memory is a slab's pairs, not the list's. max_pairs is checked
// before the buffer grows.
double list_pairs(JoinArgs g, std::size_t tiles_a, std::size_t tiles_b, const VectorJoinInput& in, VectorJoinResult& out) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t slab = slab_rows(tiles_b);
  unsigned long long* counter = g.total;
  DeviceBuffer<PairRecord> pairs;
  std::vector<PairRecord> batch;
  for (std::size_t first = 0; first < tiles_a; first += slab) {
    const std::size_t rows = std::min(slab, tiles_a - first);
    TWOBODY_CUDA_CHECK(cudaMemset(counter, 0, sizeof(unsigned long long)));
    g.pairs = nullptr;
    launch_slab(g, first, rows, tiles_b);
    unsigned long long n = 0;
    TWOBODY_CUDA_CHECK(cudaMemcpy(&n, counter, sizeof n, cudaMemcpyDeviceToHost));
    if (n > 0) {
      if (out.total + n > in.max_pairs)
        throw_pair_limit(in.max_pairs, "eps");
      if (pairs.size() < n) pairs = DeviceBuffer<PairRecord>(n);
      TWOBODY_CUDA_CHECK(cudaMemset(counter, 0, sizeof(unsigned long long)));
      g.pairs = pairs.get();
      g.capacity = n;
      launch_slab(g, first, rows, tiles_b);
      batch.resize(n);
      pairs.download(batch.data(), n);
      out.total += n;
      ++out.batches;
      in.take(batch);
    }
    if (in.progress) in.progress(static_cast<double>(first + rows) / static_cast<double>(tiles_a));
  }
  TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

VectorJoinResult run_vector_join(const VectorJoinInput& in) {
  VectorJoinResult out;
  const std::size_t dim = static_cast<std::size_t>(in.dim);
  DeviceBuffer<double> a(in.device_a ? 0 : in.na * dim);
  if (!in.device_a) a.upload(in.a, in.na * dim);
  DeviceBuffer<double> b_own(in.is_auto || in.device_b ? 0 : in.nb * dim);
  if (!in.is_auto && !in.device_b) b_own.upload(in.b, in.nb * dim);
  const double* rows_a = in.device_a ? in.device_a : a.get();
  const double* rows_b = in.is_auto ? rows_a : in.device_b ? in.device_b : b_own.get();
  DeviceBuffer<unsigned long long> total(1);
  TWOBODY_CUDA_CHECK(cudaMemset(total.get(), 0, sizeof(unsigned long long)));
  JoinArgs g{};
  g.a = rows_a;
  g.b = rows_b;
  g.na = in.na;
  g.nb = in.nb;
  g.dim = in.dim;
  g.is_auto = in.is_auto;
  g.cosine = in.cosine;
  g.lo = in.lo;
  g.hi = in.hi;
  g.total = total.get();
  const std::size_t tiles_a = (in.na + kTile - 1) / kTile, tiles_b = (in.nb + kTile - 1) / kTile;
  DeviceBuffer<unsigned long long> count_a(in.output == VectorJoinOutput::PerPoint ? in.na : 0);
  DeviceBuffer<unsigned long long> count_b(in.output == VectorJoinOutput::PerPoint && !in.is_auto ? in.nb : 0);
  if (in.output == VectorJoinOutput::PerPoint) {
    TWOBODY_CUDA_CHECK(cudaMemset(count_a.get(), 0, in.na * sizeof(unsigned long long)));
    if (!in.is_auto) TWOBODY_CUDA_CHECK(cudaMemset(count_b.get(), 0, in.nb * sizeof(unsigned long long)));
    g.count_a = count_a.get();
    g.count_b = in.is_auto ? count_a.get() : count_b.get();
  }
  if (in.output == VectorJoinOutput::Pairs) {
    if (!in.take) throw Error(ErrorKind::Internal, "a float64 pair list without a taker");
    out.kernel_seconds = list_pairs(g, tiles_a, tiles_b, in, out);
    return out;
  }
  out.kernel_seconds = launch_all(g, tiles_a, tiles_b, in.progress);
  total.download(reinterpret_cast<unsigned long long*>(&out.total), 1);
  if (in.output == VectorJoinOutput::PerPoint) {
    out.count_a.resize(in.na);
    count_a.download(reinterpret_cast<unsigned long long*>(out.count_a.data()), in.na);
    if (!in.is_auto) {
      out.count_b.resize(in.nb);
      count_b.download(reinterpret_cast<unsigned long long*>(out.count_b.data()), in.nb);
    }
  }
  return out;
}

}  // namespace twobody::cuda
