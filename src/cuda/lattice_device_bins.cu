// Compact binning of a lattice map's sources on the device: lattice_device_bins.hpp. Every float64
// operation is the host's (engine/lattice_bins.cpp: AxisBins::bin_of, Lattice::node, the Source's
// fields), in the same order; the build's --fmad=false keeps the device from fusing them, as
// -ffp-contract=off keeps the host, so the bins, floor nodes and offsets are the host's bits.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/lattice_device_bins.hpp"
#include "twobody/detail/cuda/staged_upload.hpp"

namespace twobody::cuda {

namespace {

constexpr unsigned kThreads = 256;

unsigned blocks_for(unsigned long long n) {
  return static_cast<unsigned>(std::clamp<unsigned long long>((n + kThreads - 1) / kThreads, 1, 65535ull * 16));
}

struct AxisArgs {
  long long n, first, reach, nb, nodes;
  bool periodic;
};

// AxisBins::bin_of.
__device__ long long bin_of(const AxisArgs& a, double t) {
  if (a.periodic) {
    const double tw = t - floor(t / static_cast<double>(a.n)) * static_cast<double>(a.n);
    const auto b = static_cast<long long>(floor(tw / static_cast<double>(a.nodes)));
    return min(max(b, 0ll), a.nb - 1);
  }
  if (!(t > static_cast<double>(-a.reach)) || !(t < static_cast<double>(a.n - 1 + a.reach))) return -1;
  const auto b = static_cast<long long>(floor((t - static_cast<double>(a.first)) / static_cast<double>(a.nodes)));
  return min(max(b, 0ll), a.nb - 1);
}

struct BinArgs {
  const double* x[3];
  double origin[3], spacing[3];
  AxisArgs axis[3];
  int dim;
  unsigned long long n;
  std::uint32_t dropped;  // the key of a source too far from the lattice: the number of bins, past every bin
};

// Each source's bin (Binned::bin_id of its bins along the axes), and its index as the sort's value.
__global__ void bin_keys_kernel(const BinArgs a, std::uint32_t* keys, std::uint32_t* index) {
  for (unsigned long long i = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; i < a.n;
       i += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    long long b[3] = {0, 0, 0};
    bool keep = true;
    for (int k = 0; k < a.dim; ++k) {
      b[k] = bin_of(a.axis[k], (a.x[k][i] - a.origin[k]) / a.spacing[k]);
      keep = keep && b[k] >= 0;
    }
    keys[i] = keep ? static_cast<std::uint32_t>(b[0] + a.axis[0].nb * (b[1] + a.axis[1].nb * b[2])) : a.dropped;
    index[i] = static_cast<std::uint32_t>(i);
  }
}

// start[b] for b in [0, bins]: the first sorted key not below b (the dropped sources' key is
// `bins`, so start[bins] is the number kept).
__global__ void bin_offsets_kernel(const std::uint32_t* keys, unsigned long long n, unsigned long long bins,
                                   std::uint64_t* start) {
  for (unsigned long long b = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; b <= bins;
       b += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    unsigned long long lo = 0, hi = n;
    while (lo < hi) {
      const unsigned long long mid = lo + (hi - lo) / 2;
      if (keys[mid] < b) lo = mid + 1;
      else hi = mid;
    }
    start[b] = lo;
  }
}

struct SourceArgs {
  const double* x[3];
  const double *re, *im, *radius;  // null: 1, 0, 0
  double origin[3], spacing[3];
  int dim;
};

// bin_sources' Source for each kept source, in bin order.
__global__ void build_sources_kernel(const SourceArgs a, const std::uint32_t* index, unsigned long long kept,
                                     lattice::Source* out) {
  for (unsigned long long j = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; j < kept;
       j += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    const std::uint32_t i = index[j];
    lattice::Source s;
    for (int k = 0; k < 3; ++k) {
      s.x[k] = 0;
      s.b[k] = 0;
      s.f[k] = 0;
    }
    for (int k = 0; k < a.dim; ++k) {
      const double x = a.x[k][i];
      s.x[k] = x;
      s.b[k] = static_cast<std::int64_t>(floor((x - a.origin[k]) / a.spacing[k]));
      const double node = a.origin[k] + static_cast<double>(s.b[k]) * a.spacing[k];  // Lattice::node
      s.f[k] = static_cast<float>((x - node) / a.spacing[k]);
    }
    s.re = a.re ? a.re[i] : 1.0;
    s.im = a.im ? a.im[i] : 0.0;
    s.aux = a.radius ? a.radius[i] * a.radius[i] : 0.0;
    out[j] = s;
  }
}

// A column on the device (empty: none).
DeviceBuffer<double> column(std::span<const double> host) {
  DeviceBuffer<double> d(host.size());
  d.upload(host.data(), host.size());
  return d;
}

int bits_for(std::uint64_t v) {
  int bits = 1;
  while (bits < 32 && (std::uint64_t{1} << bits) <= v) ++bits;
  return bits;
}

struct TileArgs {
  const std::uint64_t* start;
  const long long* runs[3];
  long long tiles_per[3], nb[3];
  unsigned long long tiles, share;
};

// work_items' count of the sources near each tile, and the items it cuts them into.
__global__ void tile_sources_kernel(const TileArgs a, unsigned long long* sources, unsigned long long* items) {
  for (unsigned long long tile = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; tile < a.tiles;
       tile += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    const long long t0 = static_cast<long long>(tile) % a.tiles_per[0];
    const long long t1 = static_cast<long long>(tile) / a.tiles_per[0] % a.tiles_per[1];
    const long long t2 = static_cast<long long>(tile) / (a.tiles_per[0] * a.tiles_per[1]);
    const long long* rz = a.runs[2] + t2 * kMaxRuns * 2;
    const long long* ry = a.runs[1] + t1 * kMaxRuns * 2;
    const long long* rx = a.runs[0] + t0 * kMaxRuns * 2;
    unsigned long long n = 0;
    for (int p = 0; p < kMaxRuns && rz[2 * p] >= 0; ++p)
      for (long long bz = rz[2 * p]; bz <= rz[2 * p + 1]; ++bz)
        for (int q = 0; q < kMaxRuns && ry[2 * q] >= 0; ++q)
          for (long long by = ry[2 * q]; by <= ry[2 * q + 1]; ++by) {
            const long long row = a.nb[0] * (by + a.nb[1] * bz);
            for (int c = 0; c < kMaxRuns && rx[2 * c] >= 0; ++c) n += a.start[row + rx[2 * c + 1] + 1] - a.start[row + rx[2 * c]];
          }
    sources[tile] = n;
    items[tile] = (n + a.share - 1) / a.share;
  }
}

__global__ void write_items_kernel(const unsigned long long* sources, const unsigned long long* first_item,
                                   unsigned long long tiles, unsigned long long share, WorkItem* items) {
  for (unsigned long long tile = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; tile < tiles;
       tile += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    const unsigned long long n = sources[tile];
    unsigned long long at = first_item[tile];
    for (unsigned long long first = 0; first < n; first += share) items[at++] = WorkItem{tile, first, min(n, first + share)};
  }
}

}  // namespace

bool device_can_bin(const LatticePlan& plan, std::uint64_t bins) {
  return plan.sources->points->size() < 0xFFFFFFFFull && bins < 0xFFFFFFFFull;
}

double device_binning_bytes(const LatticePlan& plan, std::uint64_t bins) {
  const LatticeSources& src = *plan.sources;
  const double n = static_cast<double>(src.points->size());
  const int columns = plan.stat->lattice.dim + !src.strength.empty() + !src.strength_im.empty() + !src.radius.empty();
  // Columns, keys and values twice (the sort's two buffers; its scratch is small beside them), the
  // Sources and the offsets.
  return n * (8.0 * columns + 16.0 + sizeof(lattice::Source)) + 8.0 * static_cast<double>(bins + 1) + (1 << 20);
}

DeviceBins bin_sources_on_device(const LatticePlan& plan, const std::array<lattice::AxisBins, 3>& axis) {
  const Lattice& L = plan.stat->lattice;
  const LatticeSources& src = *plan.sources;
  const PointSet& p = *src.points;
  const unsigned long long n = p.size();
  const std::uint64_t bins = static_cast<std::uint64_t>(axis[0].nb * axis[1].nb * axis[2].nb);
  DeviceBuffer<double> x[3];
  BinArgs b{};
  for (int k = 0; k < 3; ++k) {
    if (k < L.dim) x[k] = column(p.coord(k));
    b.x[k] = x[k].get();
    b.origin[k] = L.origin[k];
    b.spacing[k] = L.spacing[k];
    b.axis[k] = AxisArgs{axis[k].n, axis[k].first, axis[k].reach, axis[k].nb, axis[k].nodes, axis[k].periodic};
  }
  b.dim = L.dim;
  b.n = n;
  b.dropped = static_cast<std::uint32_t>(bins);
  plan.lap("binning: coordinates up");  // (the sub-phases say where the binning's fixed cost is)
  DeviceBins out;
  out.start = DeviceBuffer<std::uint64_t>(bins + 1);
  DeviceBuffer<std::uint32_t> index;
  {
    DeviceBuffer<std::uint32_t> keys(n), keys_alt(n), vals(n), vals_alt(n);
    if (n) {
      bin_keys_kernel<<<blocks_for(n), kThreads>>>(b, keys.get(), vals.get());
      TWOBODY_CUDA_CHECK(cudaGetLastError());
    }
    // Stable, as the host's sort: each bin's sources stay in input order.
    cub::DoubleBuffer<std::uint32_t> k(keys.get(), keys_alt.get()), v(vals.get(), vals_alt.get());
    std::size_t temp_bytes = 0;
    const int end_bit = bits_for(bins);
    TWOBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, k, v, n, 0, end_bit));
    {
      DeviceBuffer<unsigned char> temp(temp_bytes);
      TWOBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), temp_bytes, k, v, n, 0, end_bit));
    }
    bin_offsets_kernel<<<blocks_for(bins + 1), kThreads>>>(k.Current(), n, bins, out.start.get());
    TWOBODY_CUDA_CHECK(cudaGetLastError());
    index = std::move(v.Current() == vals.get() ? vals : vals_alt);  // the sorted order; the rest is freed here
  }
  std::uint64_t kept = 0;
  TWOBODY_CUDA_CHECK(cudaMemcpy(&kept, out.start.get() + bins, sizeof kept, cudaMemcpyDeviceToHost));
  out.kept = kept;
  plan.lap("binning: keys sorted");
  const DeviceBuffer<double> re = column(src.strength), im = column(src.strength_im), radius = column(src.radius);
  SourceArgs s{};
  for (int k = 0; k < 3; ++k) {
    s.x[k] = x[k].get();
    s.origin[k] = L.origin[k];
    s.spacing[k] = L.spacing[k];
  }
  s.re = re.get();
  s.im = im.get();
  s.radius = radius.get();
  s.dim = L.dim;
  out.sources = DeviceBuffer<lattice::Source>(kept);
  if (kept) {
    build_sources_kernel<<<blocks_for(kept), kThreads>>>(s, index.get(), kept, out.sources.get());
    TWOBODY_CUDA_CHECK(cudaGetLastError());
  }
  TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
  plan.lap("binning: sources built");
  return out;
}

DeviceBuffer<WorkItem> work_items_on_device(const std::uint64_t* start, const long long* const (&runs)[3],
                                            const long long (&tiles_per)[3], const long long (&nb)[3], std::uint64_t share,
                                            std::size_t& items) {
  TileArgs a{};
  a.start = start;
  for (int k = 0; k < 3; ++k) {
    a.runs[k] = runs[k];
    a.tiles_per[k] = tiles_per[k];
    a.nb[k] = nb[k];
  }
  a.tiles = static_cast<unsigned long long>(tiles_per[0] * tiles_per[1] * tiles_per[2]);
  a.share = share;
  DeviceBuffer<unsigned long long> sources(a.tiles), count(a.tiles), first(a.tiles);
  tile_sources_kernel<<<blocks_for(a.tiles), kThreads>>>(a, sources.get(), count.get());
  TWOBODY_CUDA_CHECK(cudaGetLastError());
  std::size_t temp_bytes = 0;
  TWOBODY_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, count.get(), first.get(), a.tiles));
  {
    DeviceBuffer<unsigned char> temp(temp_bytes);
    TWOBODY_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), temp_bytes, count.get(), first.get(), a.tiles));
  }
  unsigned long long last[2] = {0, 0};  // the last tile's first item and its count
  TWOBODY_CUDA_CHECK(cudaMemcpy(&last[0], first.get() + a.tiles - 1, sizeof last[0], cudaMemcpyDeviceToHost));
  TWOBODY_CUDA_CHECK(cudaMemcpy(&last[1], count.get() + a.tiles - 1, sizeof last[1], cudaMemcpyDeviceToHost));
  items = static_cast<std::size_t>(last[0] + last[1]);
  DeviceBuffer<WorkItem> out(items);
  if (items) {
    write_items_kernel<<<blocks_for(a.tiles), kThreads>>>(sources.get(), first.get(), a.tiles, share, out.get());
    TWOBODY_CUDA_CHECK(cudaGetLastError());
  }
  TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
  return out;
}

}  // namespace twobody::cuda
