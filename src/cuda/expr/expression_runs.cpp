// Pair expressions on the GPU (engine/backend.hpp's run_expression_gpu): the host's prepass
// (cpu::ExpressionRows: the per-point columns, the same bits as the CPU's) uploaded, the
// expression's kernels linked at run time (jit_link.hpp) or taken from the kernel cache, and the
// reduction's kernel (expression_kernels.cu) launched over slabs of anchors, every pair evaluated
// in float64 as the CPU evaluates it, so the Result is the CPU's bit for bit.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>

#include "twobody/detail/cpu/expression_rows.hpp"
#include "twobody/detail/cpu/matrix_tiles.hpp"
#include "twobody/detail/io/matrix_writer.hpp"
#include "twobody/detail/cpu/run_expression.hpp"
#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/cuda/device_info.hpp"
#include "twobody/detail/cuda/expr/expression_launch.hpp"
#include "twobody/detail/cuda/expr/jit_link.hpp"
#include "twobody/detail/cuda/matrix_blocks.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/engine/exact_sums.hpp"
#include "twobody/detail/engine/kernel_cache.hpp"
#include "twobody/detail/engine/overloaded.hpp"
#include "twobody/detail/engine/pair_limit.hpp"
#include "twobody/detail/expr/emit_pair_cuda.hpp"
#include "twobody/detail/expr/pair_abi.hpp"

namespace twobody {

namespace cuda {
namespace {

static_assert(sizeof(ExprPair) == sizeof(PairRecord) && offsetof(PairRecord, j) == offsetof(ExprPair, j) &&
                  offsetof(PairRecord, value) == offsetof(ExprPair, value),
              "a device pair is copied into PairRecord as it is");

int device_arch() {
  int dev = 0, major = 0, minor = 0;
  TWOBODY_CUDA_CHECK(cudaGetDevice(&dev));
  TWOBODY_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  TWOBODY_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  return major * 10 + minor;
}

// Everything that makes a linked kernel: the generated source, the device's architecture, the
// kernels' own LTO-IR and the toolchain that linked them.
std::string cache_key(const std::string& source, int arch) {
  return fmt::format("cuda pair expression: abi {}, sm_{}, kernels {}, {}\n{}", expr::kPairAbi, arch,
                     expression_kernels_hash(), jit_toolchain().versions, source);
}

// Libraries loaded in this process, by key (context-independent: every device of the process
// loads a library's module when it first launches from it). Never unloaded.
struct Loaded {
  cudaLibrary_t library = nullptr;
  std::string how;
};
std::mutex g_mutex;
std::map<std::string, Loaded>& loaded() {
  static std::map<std::string, Loaded> m;
  return m;
}

cudaLibrary_t load_image(const std::string& image) {
  cudaLibrary_t lib = nullptr;
  TWOBODY_CUDA_CHECK(cudaLibraryLoadData(&lib, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  return lib;
}

// The expression's kernels: this process's, the cache's, or linked now (and stored).
Loaded obtain(const expr::Compiled& c) {
  const int arch = device_arch();
  const std::string source = expr::emit_pair_cuda_source(c);
  const std::string key = cache_key(source, arch);
  std::lock_guard<std::mutex> lock(g_mutex);
  auto& m = loaded();
  if (auto it = m.find(key); it != m.end()) return it->second;
  const KernelCache cache(KernelCache::default_dir());
  Loaded l;
  if (const std::optional<std::string> cached = cache.load(key)) {
    // (an entry the driver refuses, whole by its checksum but not a loadable image, is linked again)
    cudaLibrary_t lib = nullptr;
    if (cudaLibraryLoadData(&lib, cached->data(), nullptr, nullptr, 0, nullptr, nullptr, 0) == cudaSuccess) {
      l.library = lib;
      l.how = fmt::format("a linked kernel from the kernel cache ({})", cache.dir().string());
    } else {
      cudaGetLastError();
    }
  }
  if (!l.library) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string image = jit_link_expression(source, arch);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    l.library = load_image(image);
    std::string kept = "stored in the kernel cache";
    try {
      cache.store(key, fmt::format("cuda sm_{}: {}", arch, c.canonical), image);
    } catch (const std::exception& e) {
      kept = fmt::format("not cached: {}", e.what());
    }
    l.how = fmt::format("compiled now by {} for sm_{} in {:.2f} s ({})", jit_toolchain().versions, arch, seconds, kept);
  }
  m[key] = l;
  return l;
}

cudaKernel_t kernel(const Loaded& l, const char* name) {
  cudaKernel_t k = nullptr;
  TWOBODY_CUDA_CHECK(cudaLibraryGetKernel(&k, l.library, name));
  return k;
}

// The prepass's columns and constants on the device, each uploaded once (columns that share host
// memory, as a and a[0] do, share a device copy), and the expression's arguments pointing at them.
class DeviceArguments {
 public:
  DeviceArguments(const expr::Compiled& c, const cpu::ExpressionRows& rows) {
    const std::size_t nodes = c.g.nodes.size();
    const std::uint64_t na = rows.size_a(), nb = rows.size_b(), d = static_cast<std::uint64_t>(c.g.dim);
    std::vector<const double*> device_columns(nodes, nullptr);
    for (std::size_t id = 0; id < nodes; ++id) {
      const double* host = rows.argument_columns()[id];
      if (!host) continue;
      const expr::Node& x = c.g.nodes[id];
      const int side = x.side & expr::kSidePair;
      const bool row = side == expr::kSideA || side == expr::kSideB;
      const std::size_t len = row ? (side == expr::kSideA ? na : nb) * (x.vector ? d : 1) : d;
      auto [it, fresh] = uploads_.try_emplace({host, len});
      if (fresh) {
        it->second = DeviceBuffer<double>(len);
        it->second.upload(host, len);
      }
      device_columns[id] = it->second.get();
    }
    columns_ = DeviceBuffer<const double*>(device_columns);
    values_ = DeviceBuffer<double>(rows.argument_values());
    f = expr::make_pair_args(columns_.get(), device_columns.data(), nodes, values_.get(), na, nb, d);
  }
  expr::TbPairArgs f;

 private:
  std::map<std::pair<const double*, std::size_t>, DeviceBuffer<double>> uploads_;
  DeviceBuffer<const double*> columns_;
  DeviceBuffer<double> values_;
};

// Anchors a launch covers: its pairs about kSlabPairs, its anchor blocks within gridDim.y.
constexpr double kSlabPairs = 8e9;
constexpr std::uint64_t kMaxSlabAnchors = 65535ull * kExprAnchors;

struct Slab {
  std::uint64_t i0, i1;
  double pairs;
};

// Consecutive units (anchors, or grid blocks) in slabs of about kSlabPairs candidates and at most
// `most` units; pairs_of(u): unit u's candidates.
template <class PairsOf>
std::vector<Slab> slabs_of(std::uint64_t units, std::uint64_t most, const PairsOf& pairs_of) {
  std::vector<Slab> out;
  Slab s{0, 0, 0};
  for (std::uint64_t u = 0; u < units; ++u) {
    s.pairs += pairs_of(u);
    s.i1 = u + 1;
    if (s.pairs >= kSlabPairs || s.i1 - s.i0 >= most) {
      out.push_back(s);
      s = Slab{u + 1, u + 1, 0};
    }
  }
  if (s.i1 > s.i0) out.push_back(s);
  return out;
}

// The grid's blocks, anchors cut into runs of kExprAnchors.
std::vector<ExprBlock> grid_blocks(const cpu::GridPlan& plan) {
  std::vector<ExprBlock> out;
  for (std::size_t w = 0; w < plan.unit_count(); ++w)
    plan.for_each_unit(w, [&](const cpu::BlockPair& bp, const cpu::BlockCells&) {
      for (std::size_t a = bp.a0; a < bp.a1; a += kExprAnchors)
        out.push_back({a, std::min<std::size_t>(a + kExprAnchors, bp.a1), bp.b0, bp.b1, bp.triangle ? 1ull : 0ull});
    });
  return out;
}
constexpr std::uint64_t kMaxSlabBlocks = (1ull << 31) - 1;
double candidates_of(const ExprBlock& b) { return static_cast<double>(b.a1 - b.a0) * static_cast<double>(b.b1 - b.b0); }

// One launch over a slab: anchors [i0, i1) of the tiles, or the grid's blocks [i0, i1).
void launch(cudaKernel_t k, ExprLaunch L, std::uint64_t i0, std::uint64_t i1, std::size_t smem = 0) {
  if (L.items) {
    if (i1 <= i0) return;
    L.items += i0;
    if (L.item_counts) L.item_counts += i0;
    void* args[] = {&L};
    TWOBODY_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3(static_cast<unsigned>(i1 - i0)),
                                        dim3(kExprAnchors), args, smem, cudaStreamLegacy));
    return;
  }
  L.i0 = i0;
  L.i1 = i1;
  L.j_first = L.is_auto ? i0 : 0;
  const std::uint64_t tiles = (L.nb - L.j_first + kExprPartners - 1) / kExprPartners;
  const std::uint64_t blocks = (i1 - i0 + kExprAnchors - 1) / kExprAnchors;
  if (tiles == 0 || blocks == 0) return;
  void* args[] = {&L};
  TWOBODY_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(blocks)),
                                      dim3(kExprAnchors), args, smem, cudaStreamLegacy));
}

// Runs `k` over every slab, reporting progress from `from` to `to` of the run.
void run_slabs(cudaKernel_t k, const ExprLaunch& L, const std::vector<Slab>& slabs, const cpu::ExpressionPlan& plan,
               double from, double to, std::size_t smem = 0) {
  double total = 0, done = 0;
  for (const Slab& s : slabs) total += s.pairs;
  for (const Slab& s : slabs) {
    launch(k, L, s.i0, s.i1, smem);
    TWOBODY_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
    done += s.pairs;
    if (plan.progress && *plan.progress && total > 0) (*plan.progress)(from + (to - from) * done / total);
  }
}

inline double from_ordered_bits(std::uint64_t u) {
  u = (u >> 63) ? u & ~(std::uint64_t(1) << 63) : ~u;
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

std::vector<std::uint64_t> counts_of(const DeviceBuffer<unsigned long long>& d) {
  std::vector<std::uint64_t> h(d.size());
  static_assert(sizeof(std::uint64_t) == sizeof(unsigned long long));
  if (!h.empty()) TWOBODY_CUDA_CHECK(cudaMemcpy(h.data(), d.get(), h.size() * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
  return h;
}

std::vector<FixedSum> fixed_sums(const DeviceBuffer<DeviceFixedSum>& d) {
  std::vector<FixedSum> h(d.size());
  if (!h.empty()) TWOBODY_CUDA_CHECK(cudaMemcpy(h.data(), d.get(), h.size() * sizeof(FixedSum), cudaMemcpyDeviceToHost));
  return h;
}

}  // namespace
}  // namespace cuda

std::string expression_gpu_unavailable() {
  if (cuda_device_count() == 0) return cuda_unavailable_reason();
  if (!cuda::jit_toolchain().error.empty()) return cuda::jit_toolchain().error;
  return cuda::expression_kernels_unavailable_for(cuda::device_arch());
}

std::string expression_gpu_kernel(const expr::Compiled& c) {
  const int arch = cuda::device_arch();
  const std::string device = fmt::format("{} (sm_{})", cuda::device_info().name, arch);
  const std::string key = cuda::cache_key(expr::emit_pair_cuda_source(c), arch);
  {
    std::lock_guard<std::mutex> lock(cuda::g_mutex);
    if (cuda::loaded().count(key)) return device + "; kernel: linked earlier in this process";
  }
  const KernelCache cache(KernelCache::default_dir());
  if (cache.find(key)) return fmt::format("{}; kernel: linked, from the kernel cache ({})", device, cache.dir().string());
  return fmt::format("{}; kernel: generated and linked at the run's start by {} (about a second), then kept in the "
                     "kernel cache ({})",
                     device, cuda::jit_toolchain().versions, cache.dir().string());
}

Result run_expression_gpu(const cpu::ExpressionPlan& plan) {
  using namespace cuda;
  const expr::Compiled& c = *plan.f;
  const Loaded kernels = obtain(c);
  // A cell grid for the expression's cutoff when it pays (the CPU's: cpu/run_expression.hpp): the
  // tables in cell order, the runs a cross of the sorted sets (auto: of the set with itself, each
  // pair kept in the brute force's orientation by `order`); outputs go back to the input's order.
  const std::unique_ptr<cpu::ExpressionGrid> grid = cpu::choose_expression_grid(plan, true, kCudaExpressionTraversalCost);
  const bool on_grid = grid->chosen;
  const PairTable& ta = on_grid ? grid->ta : *plan.a;
  const PairTable& tb = on_grid ? (plan.is_auto ? grid->ta : grid->tb) : *plan.b;
  const cpu::ExpressionRows rows(c, ta, tb, plan.threads);
  const std::uint64_t na = rows.size_a(), nb = rows.size_b();
  const bool is_auto = plan.is_auto;

  const DeviceArguments args(c, rows);
  const DeviceBuffer<double> edges(plan.edges.padded);

  ExprLaunch L;
  L.f = args.f;
  L.nb = nb;
  L.is_auto = is_auto && !on_grid ? 1 : 0;
  L.edges = edges.get();
  L.nbins = plan.edges.nbins;
  L.steps = plan.edges.steps;
  std::vector<ExprBlock> blocks;
  DeviceBuffer<ExprBlock> device_blocks;
  DeviceBuffer<unsigned> device_order;
  if (on_grid) {
    blocks = grid_blocks(grid->plan);
    device_blocks = DeviceBuffer<ExprBlock>(blocks);
    L.items = device_blocks.get();
    if (is_auto && !grid->half) {
      device_order = DeviceBuffer<unsigned>(grid->a->order);
      L.order = device_order.get();
    }
  }
  // A unit's candidates: an anchor's partners on the tiles, a block's pairs on the grid.
  const auto candidates = [&](std::uint64_t u) {
    return on_grid ? candidates_of(blocks[u]) : static_cast<double>(is_auto ? nb - 1 - u : nb);
  };
  const std::vector<Slab> slabs = on_grid ? slabs_of(blocks.size(), kMaxSlabBlocks, candidates)
                                          : slabs_of(na, kMaxSlabAnchors, candidates);
  static const std::vector<std::uint32_t> kNoOrder;
  const std::vector<std::uint32_t>& order_a = on_grid ? grid->a->order : kNoOrder;
  const std::vector<std::uint32_t>& order_b = on_grid ? (grid->b ? grid->b->order : grid->a->order) : kNoOrder;

  // The exact sums' grid: the largest |value| first.
  const auto value_grid = [&](double to) {
    DeviceBuffer<unsigned long long> bits(1);
    bits.zero();
    ExprLaunch m = L;
    m.max_bits = bits.get();
    run_slabs(kernel(kernels, kExprMaxAbsKernel), m, slabs, plan, 0, to);
    std::uint64_t b = bits.download()[0];
    double largest;
    std::memcpy(&largest, &b, sizeof largest);
    return cpu::expression_value_grid(largest);
  };

  Result r;
  r.output = plan.stat->output();
  std::visit(
      Overloaded{
          [&](const reduce::Histogram&) {
            DeviceBuffer<unsigned long long> counts(static_cast<std::size_t>(L.nbins));
            counts.zero();
            L.counts = counts.get();
            const std::size_t edge_bytes = plan.edges.padded.size() * sizeof(double);
            L.shared_edges = edge_bytes <= 16384;
            const std::size_t count_bytes = static_cast<std::size_t>(L.nbins) * sizeof(unsigned);
            // (32-bit counters a block: a grid block's partner run may be long enough to wrap them)
            std::uint64_t longest = kExprPartners;
            for (const ExprBlock& b : blocks) longest = std::max<std::uint64_t>(longest, b.b1 - b.b0);
            L.shared_counts = (L.shared_edges ? edge_bytes : 0) + count_bytes <= 40960 &&
                              static_cast<double>(longest) * kExprAnchors < 4e9;
            const std::size_t smem = (L.shared_edges ? edge_bytes : 0) + (L.shared_counts ? count_bytes : 0);
            run_slabs(kernel(kernels, kExprHistogramKernel), L, slabs, plan, 0, 1, smem);
            r.counts = counts_of(counts);
          },
          [&](const reduce::Count&) {
            DeviceBuffer<unsigned long long> counts(1);
            counts.zero();
            L.counts = counts.get();
            run_slabs(kernel(kernels, kExprCountKernel), L, slabs, plan, 0, 1);
            r.counts = counts_of(counts);
          },
          [&](const reduce::PerPoint&) {
            DeviceBuffer<unsigned long long> a(na), b(is_auto ? 0 : nb);
            a.zero();
            b.zero();
            L.count_a = a.get();
            L.count_b = is_auto ? a.get() : b.get();
            run_slabs(kernel(kernels, kExprPerPointCountKernel), L, slabs, plan, 0, 1);
            r.per_point_a.counts = counts_of(a);
            if (!is_auto) r.per_point_b.counts = counts_of(b);
          },
          [&](const reduce::Sum&) {
            const SumGrid g = value_grid(0.5);
            r.exact.grids.value = g;
            DeviceBuffer<DeviceFixedSum> sum(1);
            DeviceBuffer<unsigned long long> count(1);
            sum.zero();
            count.zero();
            L.grid = DeviceSumGrid(g);
            L.sum = sum.get();
            L.counts = count.get();
            run_slabs(kernel(kernels, kExprSumKernel), L, slabs, plan, 0.5, 1);
            r.counts = counts_of(count);
            r.exact.value_sum = fixed_sums(sum);
          },
          [&](const reduce::PerPointValue& p) {
            const int of = p.of == reduce::PerPointValue::Of::Sum ? 0 : p.of == reduce::PerPointValue::Of::Min ? 1 : 2;
            const double start = of == 0 ? 0.5 : 0;
            if (of == 0) {
              r.exact.grids.value = value_grid(start);
              L.grid = DeviceSumGrid(r.exact.grids.value);
            }
            const std::uint64_t nb_own = is_auto ? 0 : nb;
            DeviceBuffer<unsigned long long> ca(na), cb(nb_own);
            DeviceBuffer<DeviceFixedSum> sa(of == 0 ? na : 0), sb(of == 0 ? nb_own : 0);
            DeviceBuffer<unsigned long long> ea(of != 0 ? na : 0), eb(of != 0 ? nb_own : 0);
            ca.zero();
            cb.zero();
            sa.zero();
            sb.zero();
            const int fill = of == 1 ? 0xff : 0;  // the minimum's identity is ~0, the maximum's 0
            if (ea.size()) TWOBODY_CUDA_CHECK(cudaMemset(ea.get(), fill, ea.size() * sizeof(unsigned long long)));
            if (eb.size()) TWOBODY_CUDA_CHECK(cudaMemset(eb.get(), fill, eb.size() * sizeof(unsigned long long)));
            L.of = of;
            L.count_a = ca.get();
            L.count_b = is_auto ? ca.get() : cb.get();
            L.sums_a = sa.get();
            L.sums_b = is_auto ? sa.get() : sb.get();
            L.extreme_a = ea.get();
            L.extreme_b = is_auto ? ea.get() : eb.get();
            run_slabs(kernel(kernels, kExprPerPointValueKernel), L, slabs, plan, start, 1);
            const auto fill_side = [&](const DeviceBuffer<unsigned long long>& cnt, const DeviceBuffer<DeviceFixedSum>& sums,
                                       const DeviceBuffer<unsigned long long>& ext, PointReductions& out,
                                       std::vector<FixedSum>& exact) {
              out.counts = counts_of(cnt);
              out.values.assign(out.counts.size(), 0.0);
              if (of == 0) {
                exact = fixed_sums(sums);
                return;
              }
              const std::vector<unsigned long long> e = ext.download();
              for (std::size_t k = 0; k < e.size(); ++k) out.values[k] = out.counts[k] ? from_ordered_bits(e[k]) : std::nan("");
            };
            fill_side(ca, sa, ea, r.per_point_a, r.exact.point_value_a);
            if (!is_auto) fill_side(cb, sb, eb, r.per_point_b, r.exact.point_value_b);
          },
          [&](const reduce::PairList&) {
            if (plan.max_pairs == 0) throw Error(ErrorKind::Internal, "a pair list without a limit");
            // First pass: each unit's pairs (an anchor's on the tiles, a block's on the grid), so the
            // buffer is sized and no pair is lost.
            const std::uint64_t units = on_grid ? blocks.size() : na;
            DeviceBuffer<unsigned long long> per_unit(units);
            per_unit.zero();
            ExprLaunch first = L;
            first.count_a = per_unit.get();
            first.count_b = per_unit.get();
            first.anchors_only = 1;
            if (on_grid) first.item_counts = per_unit.get();
            run_slabs(kernel(kernels, kExprPerPointCountKernel), first, slabs, plan, 0, 0.5);
            const std::vector<unsigned long long> counts = per_unit.download();
            std::uint64_t total = 0, widest = 0;
            for (const auto x : counts) {
              total += x;
              widest = std::max<std::uint64_t>(widest, x);
            }
            if (total > plan.max_pairs) throw_pair_limit(plan.max_pairs);
            const std::uint64_t room = available_device_bytes() / 4 / sizeof(ExprPair);
            const std::uint64_t capacity = std::max<std::uint64_t>(1, std::min(total, std::max(widest, room)));
            DeviceBuffer<ExprPair> pairs(capacity);
            DeviceBuffer<unsigned long long> cursor(1);
            L.pairs = pairs.get();
            L.cursor = cursor.get();
            L.capacity = capacity;
            r.pairs.reserve(total);
            const cudaKernel_t k = kernel(kernels, kExprPairsKernel);
            const std::uint64_t per_launch = on_grid ? kMaxSlabBlocks : kMaxSlabAnchors;
            // (a launch also stops at about kSlabPairs candidates: progress, Ctrl-C)
            std::uint64_t i0 = total == 0 ? units : 0;  // (no pair: nothing to write)
            while (i0 < units) {
              std::uint64_t i1 = i0, in = 0;
              double work = 0;
              while (i1 < units && i1 - i0 < per_launch && in + counts[i1] <= capacity && (i1 == i0 || work < kSlabPairs)) {
                work += candidates(i1);
                in += counts[i1++];
              }
              cursor.zero();
              launch(k, L, i0, i1);
              std::uint64_t got = cursor.download()[0];
              if (got != in) throw Error(ErrorKind::Internal, fmt::format("the pair pass wrote {} pairs of {}", got, in));
              const std::size_t at = r.pairs.size();
              r.pairs.resize(at + got);
              if (got)
                TWOBODY_CUDA_CHECK(cudaMemcpy(r.pairs.data() + at, pairs.get(), got * sizeof(ExprPair), cudaMemcpyDeviceToHost));
              i0 = i1;
              if (plan.progress && *plan.progress) (*plan.progress)(0.5 + 0.5 * static_cast<double>(i1) / static_cast<double>(units));
            }
            if (on_grid)
              for (PairRecord& x : r.pairs) {
                x.i = order_a[x.i], x.j = order_b[x.j];
                if (is_auto && x.i > x.j) std::swap(x.i, x.j);  // (the half shell: a symmetric value)
              }
            std::sort(r.pairs.begin(), r.pairs.end(), pair_order);
          },
          [](const auto&) { throw Error(ErrorKind::Internal, "a reduction run_expression refuses reached the gpu"); }},
      plan.stat->reduction);
  if (on_grid) {
    cpu::put_back_in_order(r.per_point_a, r.exact.point_value_a, order_a);
    cpu::put_back_in_order(r.per_point_b, r.exact.point_value_b, order_b);
  }
  r.info.pairs_evaluated = on_grid ? grid->plan.evaluations : pair_total(na, nb, is_auto);
  r.info.plan = grid->why;  // (the traversal's line of the plan: the engine puts it in its place)
  r.info.device = device_info().name;
  round_exact_sums(r);
  return r;
}

// A launch's rows: gridDim.y blocks of kExprMatrixRows.
constexpr std::size_t kMaxMatrixBlockRows = std::size_t{65535} * cuda::kExprMatrixRows;

std::size_t matrix_gpu_block_rows(std::size_t rows, std::size_t cols) {
  const std::size_t budget = std::min<std::size_t>(std::size_t{256} << 20, cuda::available_device_bytes() / 6);
  const std::size_t fit = budget / (std::max<std::size_t>(cols, 1) * sizeof(double));
  return std::max<std::size_t>(1, std::min({rows, fit, kMaxMatrixBlockRows}));
}

std::string run_matrix_gpu(const cpu::MatrixJob& job, MatrixSink& sink) {
  using namespace cuda;
  const expr::Compiled& c = *job.f;
  const Loaded kernels = obtain(c);
  const cudaKernel_t k = kernel(kernels, kExprMatrixKernel);
  const cpu::ExpressionRows rows(c, *job.a, *job.b, job.threads);
  const DeviceArguments args(c, rows);
  const std::size_t n_rows = rows.size_a(), n_cols = rows.size_b();
  const std::size_t block =
      std::min(job.block_rows ? std::min(job.block_rows, n_rows) : matrix_gpu_block_rows(n_rows, n_cols), kMaxMatrixBlockRows);
  run_matrix_blocks(n_rows, n_cols, job.symmetric, block, sink, job.progress,
                    [&](const MatrixBlock& b, double* out, cudaStream_t stream) {
                      ExprLaunch L;
                      L.f = args.f;
                      L.i0 = b.r0;
                      L.i1 = b.r0 + b.nr;
                      L.nb = n_cols;
                      L.c0 = b.c0;
                      L.ld = b.ld;
                      L.matrix = out;
                      void* launch_args[] = {&L};
                      const dim3 grid(static_cast<unsigned>((L.ld + kExprMatrixColumns - 1) / kExprMatrixColumns),
                                      static_cast<unsigned>((b.nr + kExprMatrixRows - 1) / kExprMatrixRows));
                      TWOBODY_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(k), grid, dim3(kExprMatrixColumns),
                                                          launch_args, 0, stream));
                    });
  return device_info().name;
}

}  // namespace twobody
