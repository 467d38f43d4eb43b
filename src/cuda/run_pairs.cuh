#pragma once
// A pair run on the device for the metric F, each pair settled by `exact` (F itself, whose float64
// key plan.edges bins, or a binned pair function: 2-D bins, plan.edges then the one range
// [0, reach) that finds the pairs, the histogram `nbins` flat bins). The steps, each in one place:
//   upload      the points (DevicePoints; a ResidentSet's kept upload), the outputs and tables;
//   layout      the dispatch's first stage (agent_choice.hpp: choose_layout);
//   grid        the cell index and its candidate pairs, where the layout wants one (device_grid.cuh);
//   choose      the dispatch's agent (choose_agent), with this instantiation's register limits;
//   launch      the chosen agent (agents' launch_* functions, through AgentLaunch); pair lists
//               launch until the output buffer has taken every pair (run_pair_list);
//   collect     the outputs into a Result in the callers' order, the choice in its plan.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <type_traits>

#include "twobody/detail/cuda/agent_choice.hpp"
#include "twobody/detail/cuda/agent_launch.cuh"
#include "twobody/detail/cuda/counting_tiles.cuh"
#include "twobody/detail/cuda/device_grid.cuh"
#include "twobody/detail/cuda/device_outputs.cuh"
#include "twobody/detail/cuda/device_pair_pool.cuh"
#include "twobody/detail/cuda/fp64_tensor_histogram_tiles.cuh"
#include "twobody/detail/cuda/pair_kernel.cuh"
#include "twobody/detail/cuda/tensor_count_tiles.cuh"
#include "twobody/detail/cuda/tensor_histogram_tiles.cuh"
#include "twobody/detail/cuda/tuning_policy.hpp"
#include "twobody/detail/engine/pair_limit.hpp"

namespace twobody::cuda {

// Wall time of each phase, reported with the plan (where a short run spends its time).
class PhaseClock {
 public:
  void lap(const char* name) {
    TWOBODY_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
    const auto now = std::chrono::steady_clock::now();
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s %.2f ms", phases_.empty() ? "" : ", ", name,
                  std::chrono::duration<double, std::milli>(now - t_).count());
    phases_ += buf;
    t_ = now;
  }
  const std::string& phases() const { return phases_; }

 private:
  std::string phases_;
  std::chrono::steady_clock::time_point t_ = std::chrono::steady_clock::now();
};

inline OutputMode output_mode(const Statistic& s) {
  if (std::holds_alternative<reduce::PointSums>(s.reduction)) return OutputMode::PointSums;
  return s.output() == OutputKind::Reduction  ? OutputMode::Reduce
         : s.output() == OutputKind::PairList ? OutputMode::PairList
         : s.output() == OutputKind::PerPoint ? OutputMode::PerPoint
                                              : OutputMode::Histogram;
}

template <class F, class Exact>
class PairRun {
  static constexpr int D = F::dim;
  static constexpr bool kBinned = binned_pair_function<Exact>;
  static constexpr bool kTiles = std::is_same_v<F, Euclidean<D>> && D <= 3;  // the counting tiles' metric
  // Forces: Cartesian points of 1 to 3 dimensions, open or in an orthorhombic box (check_point_sums).
  static constexpr bool kForces =
      !kBinned && D <= 3 && std::is_same_v<Exact, F> && (std::is_same_v<F, Euclidean<D>> || std::is_same_v<F, PeriodicEuclidean<D>>);
  using Proxy = typename FastPath<F>::Proxy;
  using Args = PairKernelArgs<Proxy, Exact>;

 public:
  PairRun(const F& f, const Plan& plan, const Exact& exact, int nbins)
      : f_(f), plan_(plan), exact_(exact), info_(device_info()), policy_(TuningPolicy::current()) {
    if (plan.a->size() >= (std::size_t(1) << 32) || plan.b->size() >= (std::size_t(1) << 32))
      throw Error(ErrorKind::Resource, "the CUDA backend takes at most 2^32 - 1 points per set");
    const Statistic& s = *plan.stat;
    // The first set as an earlier run of this call kept it (plan.resident), in its frame; else the
    // frame of this run's points. Float32 coordinates are shifted to the frame's centre (distances)
    // so that they keep the most bits.
    resident_ = use_resident(f, plan, s.weighted, s.regions() > 0);
    setup_ = resident_.kept ? make_fast_setup(f, resident_.kept->frame) : make_fast_setup(f, *plan.a, *plan.b);
    problem_ = make_problem(nbins);
    clock_.lap("host setup");
  }

  Result run() {
    layout_ = choose_layout(problem_, DeviceProperties{info_, nullptr});
    upload();
    clock_.lap("upload");
    const bool two_anchor_stat = problem_.mode == OutputMode::Histogram && !problem_.weighted && problem_.regions == 0 &&
                                 !problem_.means && !kBinned;
    grid_ = build_device_grid<F>(plan_, *da_, plan_.is_auto() ? nullptr : db_, setup_.shift, layout_, two_anchor_stat,
                                 policy_, resident_.kept.get());
    if (grid_.a) clock_.lap("cell index");
    if (resident_.lock.owns_lock()) {
      // What this run made for later runs is complete before they use it on their own streams.
      TWOBODY_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
      resident_.lock.unlock();
    }
    outputs_ = std::make_unique<DeviceOutputs>(problem_, plan_.edges.padded, plan_.edges.nbins, layout_.table);
    bind_arguments();
    dispatch();
    clock_.lap("kernel");
    return collect();
  }

 private:
  PairProblem make_problem(int nbins) const {
    const Statistic& s = *plan_.stat;
    PairProblem p;
    p.dim = D;
    p.mode = output_mode(s);
    p.weighted = s.weighted;
    p.regions = s.regions();
    p.means = s.mean_separation();
    p.binned = kBinned;
    p.grid_metric = kGridMetric<F>;
    p.triclinic = std::is_same_v<F, PeriodicTriclinic>;
    p.euclidean_tiles = kTiles;
    p.is_auto = plan_.is_auto();
    p.n_a = plan_.a->size();
    p.n_b = plan_.b->size();
    p.nbins = nbins;
    p.guard = make_guard_bands(plan_.edges, setup_.model);
    p.edges = s.binning().edges();
    if constexpr (std::is_same_v<decltype(setup_.model), DistanceErrorModel>) p.model = setup_.model;
    p.path = plan_.path;
    p.grids = plan_.grids;
    return p;
  }

  void upload() {
    const auto& shift = setup_.shift;
    const bool w = problem_.weighted, regions = problem_.regions > 0;
    if (!resident_.kept) da_owner_ = std::make_unique<DevicePoints<D>>(*plan_.a, shift, w, regions);
    else if (!resident_.kept->points) resident_.kept->points = std::make_unique<DevicePoints<D>>(*plan_.a, shift, w, regions);
    da_ = resident_.kept ? resident_.kept->points.get() : da_owner_.get();
    db_ = da_;
    if (!plan_.is_auto()) {
      db_owner_ = std::make_unique<DevicePoints<D>>(*plan_.b, shift, w, regions);
      db_ = db_owner_.get();
    }
  }

  // What every agent reads: the sets, the proxy and the exact rule, the range's guard bands, the
  // bin table and the outputs.
  void bind_arguments() {
    const GuardBands& guard = problem_.guard;
    const GuardTable& table = layout_.table;
    const int nkeys = plan_.edges.nbins;  // key bins (a binned pair function's reach: one)
    args_.A = da_->view;
    args_.B = db_->view;
    args_.is_auto = plan_.is_auto();
    args_.proxy = FastPath<F>::proxy(f_);
    args_.exact = exact_;
    args_.range_lo0 = guard.lo[0];
    args_.range_hi0 = guard.hi[0];
    args_.range_lo1 = guard.lo[nkeys];  // Reduce and PairList take the whole range [e_0, e_nbins)
    args_.range_hi1 = guard.hi[nkeys];
    args_.ncells = static_cast<int>(table.cells.size());
    args_.lo0 = table.lo0;
    args_.base_bits = table.base_bits;
    args_.top_bits = table.top_bits;
    args_.shift = table.shift;
    args_.nbins = problem_.nbins;
    args_.steps = plan_.edges.steps;
    args_.hist_stride = layout_.stride;
    args_.chunks_per_row = static_cast<std::uint32_t>((plan_.b->size() + kChunk - 1) / kChunk);
    outputs_->bind(args_, problem_);
    if (problem_.mode == OutputMode::PointSums) bind_forces();
  }

  // Forces: the potential's functors as the CPU makes them (visit_pair_force, the range's cutoff),
  // the box, the closest separation and the grids.
  void bind_forces() {
    const Statistic& s = *plan_.stat;
    const auto& p = std::get<reduce::PointSums>(s.reduction);
    PointSumsArgs& f = args_.forces;
    f.coulomb = p.force.potential == PairPotential::CoulombSwitched;
    if (f.coulomb) f.coulomb_terms = CoulombSwitchedTerms(p.force, p.range.hi());
    else f.lj_terms = LennardJonesTerms(p.force, p.range.hi());
    f.periodic = s.metric == Metric::Periodic;
    for (int k = 0; k < D && f.periodic; ++k) {
      f.length[k] = s.box.length[k];
      f.half[k] = 0.5 * s.box.length[k];
    }
    f.closest2 = p.closest * p.closest;
    f.force = DeviceSumGrid(plan_.grids.force);
    f.energy = DeviceSumGrid(plan_.grids.energy);
    f.virial = DeviceSumGrid(plan_.grids.virial);
  }

  // The agent for this instantiation's output, weights and sums.
  void dispatch() {
    const bool w = problem_.weighted, means = problem_.means;
    if constexpr (kBinned) {
      // (A binned pair function makes histograms alone: nothing else is instantiated with it.)
      if (means) w ? run_agent<OutputMode::Histogram, true, true>() : run_agent<OutputMode::Histogram, false, true>();
      else w ? run_agent<OutputMode::Histogram, true, false>() : run_agent<OutputMode::Histogram, false, false>();
    } else {
      switch (problem_.mode) {
        case OutputMode::Histogram:
          if (means) w ? run_agent<OutputMode::Histogram, true, true>() : run_agent<OutputMode::Histogram, false, true>();
          else w ? run_agent<OutputMode::Histogram, true, false>() : run_agent<OutputMode::Histogram, false, false>();
          break;
        case OutputMode::Reduce:
          w ? run_agent<OutputMode::Reduce, true, false>() : run_agent<OutputMode::Reduce, false, false>();
          break;
        case OutputMode::PerPoint:
          w ? run_agent<OutputMode::PerPoint, true, false>() : run_agent<OutputMode::PerPoint, false, false>();
          break;
        case OutputMode::PairList: run_agent<OutputMode::PairList, false, false>(); break;
        case OutputMode::PointSums:
          if constexpr (kForces) w ? run_agent<OutputMode::PointSums, true, false>() : run_agent<OutputMode::PointSums, false, false>();
          else throw Error(ErrorKind::Internal, "forces on the GPU take Cartesian points, open or in an orthorhombic box");
          break;
      }
    }
  }

  // Blocks a multiprocessor holds by registers, for the kernels this instantiation would launch.
  template <OutputMode M, bool W, bool Means>
  int registers_bound(AgentKernel k) const {
    switch (k) {
      case AgentKernel::Grid:
        if constexpr (kGridMetric<F>)
          return blocks_by_registers(grid_agent_kernel<D, M, W, Proxy, Exact, Means>(grid_.shape.images, grid_.anchors,
                                                                                     problem_.regions),
                                     kGridThreads);
        break;
      case AgentKernel::Generic256: return blocks_by_registers(pair_kernel<D, M, W, Proxy, Exact, Means>, kThreads);
      case AgentKernel::Generic512:
        if constexpr (M == OutputMode::Histogram)
          return blocks_by_registers(pair_kernel<D, M, W, Proxy, Exact, Means, 512>, 512);
        break;
      case AgentKernel::CountingTilesHistogram: return counting_tiles_histogram_blocks(D);
      case AgentKernel::Fp64TensorHistogram:
        if constexpr (kTiles) return blocks_by_registers(fp64_tensor_histogram_kernel<D, kTop, false, Proxy, F>, kThreads);
        break;
    }
    throw Error(ErrorKind::Internal, "the dispatch asked for a kernel this run does not instantiate");
  }

  template <OutputMode M, bool W, bool Means>
  void run_agent() {
    const DeviceProperties props{info_, [this](AgentKernel k) { return registers_bound<M, W, Means>(k); }};
    choice_ = choose_agent(problem_, layout_, grid_.measure, props, policy_);
    apply_choice();
    clock_.lap("tables");
    AgentLaunch<Args> launch(args_, plan_, info_, outputs_->counters.get(), outputs_->evaluations.get());
    launch.units = args_.n_items;
    launch.signature = item_space();
    if constexpr (M == OutputMode::PairList) run_pair_list<M>(launch);
    else launch_agent<M, W, Means>(launch);
    items_share_ = args_.n_items ? static_cast<double>(launch.items_taken) / static_cast<double>(args_.n_items) : 1.0;
    if (plan_.share) {
      char note[128];
      std::snprintf(note, sizeof note, "; %llu of the %llu work items (%.1f%%) taken here, the rest by the other devices",
                    launch.items_taken, static_cast<unsigned long long>(args_.n_items), 100 * items_share_);
      share_note_ = note;
    }
  }

  // What fixes the meaning of an item (Plan::share): the agent, the item count and the layout
  // that cuts the pairs into items, hashed; devices whose choices differ take no common ranges.
  std::uint64_t item_space() const {
    std::uint64_t h = 1469598103934665603ull;
    const auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 1099511628211ull; };
    mix(static_cast<std::uint64_t>(choice_.agent));
    mix(args_.n_items);
    mix(static_cast<std::uint64_t>(choice_.anchors_per_item));
    mix(static_cast<std::uint64_t>(args_.chunks_per_row));
    mix(static_cast<std::uint64_t>(choice_.threads));
    if (choice_.grid()) {
      mix(grid_.shape.total);
      for (int d = 0; d < grid_.shape.dim; ++d) mix(static_cast<std::uint64_t>(grid_.shape.cells[d]));
      mix(grid_.queue->evaluations);
    }
    return h;
  }

  // The choice into the agents' arguments: the traversal's sets and items, the outputs' layout.
  void apply_choice() {
    const AgentChoice& c = choice_;
    if (c.grid()) {
      args_.A = grid_.a->view;
      args_.B = grid_.partners().view;
      args_.n_items = grid_.queue->n_units;
      work_ = grid_work(grid_, grid_cutoff<F>(plan_.stat->binning().hi()), setup_.shift, outputs_->evaluations.get());
    } else {
      args_.n_items = (plan_.a->size() + c.anchors_per_item - 1) / c.anchors_per_item * args_.chunks_per_row;
    }
    args_.copies = c.copies;
    args_.direct = c.direct;
    args_.hist_global = c.hist_global;
    args_.sums_shared = c.sums_shared;
    if (c.agent == Agent::TensorHistogram) {
      // The anchors in Morton order (the partners too, for an auto-correlation: the same set).
      std::vector<double> box_lo(D), box_extent(D);
      for (int d = 0; d < D; ++d) {
        box_lo[d] = setup_.shift[d] - problem_.model.M;
        box_extent[d] = 2 * problem_.model.M;
      }
      morton_ = std::make_unique<DeviceMortonSet<D>>(da_->view, setup_.shift.data(), box_lo.data(), box_extent.data());
      args_.A = morton_->view;
      if (plan_.is_auto()) args_.B = morton_->view;
      clock_.lap("Morton order");
    }
  }

  template <OutputMode M, bool W, bool Means>
  void launch_agent(AgentLaunch<Args>& launch) {
    if constexpr (kGridMetric<F>)
      if (choice_.grid())
        return launch_grid_agent<D, M, W, Proxy, Exact, Means>(choice_, grid_.shape.images, grid_.anchors, problem_.regions,
                                                               launch, work_);
    if constexpr (kTiles && !W && !Means && !kBinned && (M == OutputMode::Reduce || M == OutputMode::Histogram)) {
      switch (choice_.agent) {
        case Agent::CountingTiles: return launch_counting_tiles<D, M, Proxy, F>(choice_, launch);
        case Agent::Fp64TensorHistogram:
          if constexpr (M == OutputMode::Histogram) return launch_fp64_tensor_histogram<D, Proxy, F>(choice_, launch);
          break;
        case Agent::TensorHistogram:
          if constexpr (M == OutputMode::Histogram) return launch_tensor_histogram<D, Proxy, F>(choice_, launch);
          break;
        case Agent::TensorCount:
          if constexpr (M == OutputMode::Reduce) return launch_tensor_count<D, Proxy, F>(choice_, launch);
          break;
        default: break;
      }
    }
    if (choice_.agent != Agent::Generic) throw Error(ErrorKind::Internal, "the dispatch chose an agent this run does not build");
    launch_generic_agent<D, M, W, Proxy, Exact, Means>(choice_, launch);
  }

  // Pair lists through the direct output buffer (pair_pool.hpp): one launch when the pool holds
  // the whole list, else launches until every unit has written its pairs, the pages drained after
  // each into Result::pairs, or batch by batch into plan.pair_sink.
  template <OutputMode M>
  void run_pair_list(AgentLaunch<Args>& launch) {
    int dev = 0, threads_per_sm = 0;
    TWOBODY_CUDA_CHECK(cudaGetDevice(&dev));
    TWOBODY_CUDA_CHECK(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
    const std::size_t free_b = available_device_bytes();
    const bool grid = choice_.grid();
    const std::uint64_t candidates = grid ? grid_.queue->evaluations : problem_.all_pairs();
    const std::uint64_t bound = plan_.max_pairs < candidates ? plan_.max_pairs + 1 : candidates;
    const auto workers = static_cast<unsigned long long>(info_.sms) * static_cast<unsigned>(threads_per_sm) / 32;
    DevicePairPool pool(pair_pool_shape(free_b, bound, workers, policy_.pair_page_size, policy_.pair_pool_pages), workers,
                        grid ? 1 : kThreads / 32);
    PairListQueue queue(args_.n_items, pool.warps);
    // Grid indices back to the callers' (auto: the one set's order for both).
    const auto oa = grid ? grid_.a->order.download() : std::vector<std::uint32_t>{};
    const auto ob = grid && grid_.b ? grid_.b->order.download() : std::vector<std::uint32_t>{};
    const std::uint32_t* order_a = oa.empty() ? nullptr : oa.data();
    const std::uint32_t* order_b = ob.empty() ? order_a : ob.data();
    const auto by_ij = [](const PairRecord& x, const PairRecord& y) { return x.i != y.i ? x.i < y.i : x.j < y.j; };
    std::uint64_t total = 0;
    const auto take = [&](std::vector<PairRecord>& batch) {
      total += batch.size();
      if (total > plan_.max_pairs)
        throw_pair_limit(plan_.max_pairs);
      if (plan_.pair_sink) {
        std::sort(batch.begin(), batch.end(), by_ij);
        plan_.pair_sink(batch);
      } else {
        result_.pairs.insert(result_.pairs.end(), batch.begin(), batch.end());
      }
    };
    int launches = 0;
    do {
      args_.list = pool.prepare(queue);
      args_.n_items = queue.tasks();
      launch.begun = queue.first_unit();
      launch.resumed = queue.resumed_units().size();
      launch_agent<M, false, false>(launch);
      ++launches;
      const auto counters = outputs_->counters.download();
      pool.drain(queue, counters[1], order_a, order_b, plan_.is_auto(), take);
      if (!queue.done()) {
        earlier_settled_ += counters[0];
        earlier_evaluated_ += outputs_->evaluations.download()[0];
      }
    } while (!queue.done());
    if (!plan_.pair_sink) std::sort(result_.pairs.begin(), result_.pairs.end(), by_ij);
    list_note_ = "; pair list: " + std::to_string(total) + " pairs through a pool of " + std::to_string(pool.shape.pages) +
                 " pages of " + std::to_string(pool.shape.page_size) + " pairs, " + std::to_string(launches) +
                 (launches == 1 ? " launch" : " launches");
  }

  Result collect() {
    Result& r = result_;
    r.output = plan_.stat->output();
    const bool grid = choice_.grid();
    const auto sorted = [&](const DeviceGridSet<D>* set) -> DeviceSortedOrder {
      if (!grid || !set) return nullptr;
      return [set] { return set->order.download(); };
    };
    outputs_->collect(r, problem_, sorted(grid_.a.get()), sorted(grid_.b.get()));
    // (Without a grid, the pairs of the items this run took, to the nearest pair.)
    r.info.pairs_evaluated =
        grid ? earlier_evaluated_ + outputs_->evaluations.download()[0]
             : static_cast<std::uint64_t>(std::llround(items_share_ * static_cast<double>(problem_.all_pairs())));
    r.info.pairs_settled_fp64 = earlier_settled_ + outputs_->counters.download()[0];
    r.info.threads = choice_.threads;
    clock_.lap("download");
    const std::string overrides = policy_.overrides();
    r.info.plan = choice_.grid_why + resident_.note + list_note_ + choice_.notes + share_note_ +
                  (overrides.empty() ? "" : "; " + overrides) + "; phases: " + clock_.phases();
    return std::move(r);
  }

  const F& f_;
  const Plan& plan_;
  const Exact& exact_;
  const DeviceInfo info_;
  const TuningPolicy policy_;
  PhaseClock clock_;
  ResidentUse<F> resident_;
  FastSetup<F> setup_;
  PairProblem problem_;
  OutputLayout layout_;
  std::unique_ptr<DevicePoints<D>> da_owner_, db_owner_;
  const DevicePoints<D>* da_ = nullptr;
  const DevicePoints<D>* db_ = nullptr;
  DeviceGrid<D> grid_;
  std::unique_ptr<DeviceOutputs> outputs_;
  std::unique_ptr<DeviceMortonSet<D>> morton_;
  Args args_{};
  GridWork work_{};
  AgentChoice choice_;
  Result result_;
  std::string list_note_;
  std::uint64_t earlier_settled_ = 0, earlier_evaluated_ = 0;  // pair lists' launches before the last
  double items_share_ = 1.0;  // of the items, those this run took (Plan::share)
  std::string share_note_;
};

template <class F, class Exact>
Result run_pairs(const F& f, const Plan& plan, const Exact& exact, int nbins) {
  return PairRun<F, Exact>(f, plan, exact, nbins).run();
}

}  // namespace twobody::cuda
