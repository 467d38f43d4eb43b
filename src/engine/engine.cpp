#include <algorithm>
#include <chrono>
#include <thread>
#include <fmt/format.h>

#include "twobody/detail/engine/planner.hpp"
#include "twobody/detail/engine/auto_choice.hpp"
#include "twobody/detail/engine/cpu_estimate.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/engine/device_start_up.hpp"
#include "twobody/detail/engine/device_distribution.hpp"
#include "twobody/detail/engine/devices.hpp"
#include "twobody/detail/engine/exact_sums.hpp"
#include "twobody/detail/engine/hybrid_run.hpp"
#include "twobody/detail/engine/key_edge_run.hpp"
#include "twobody/error.hpp"
#include "twobody/vectors.hpp"

namespace twobody {

namespace {

// A backend that does not run a statistic (Backend::refuses, or refuses_vectors for vectors)
// hands it to the CPU; `why` says so in the run's plan.
std::unique_ptr<Backend> backend_for(const Statistic& stat, const RunOptions& opt, std::string& why,
                                     bool vectors = false) {
  auto b = select_backend(opt.backend, first_device(opt));
  if (const std::string reason = vectors ? b->refuses_vectors(stat) : b->refuses(stat); !reason.empty()) {
    why = fmt::format("the {} backend {}: this statistic runs on the cpu", b->name(), reason);
    return make_cpu_backend();
  }
  return b;
}


// "auto" before this process has started a GPU: the CPU for a run it finishes in less than a GPU's
// start-up, while the process's rental account allows (auto_choice.hpp). Deciding must not start
// the driver itself (make_cuda_backend asks it for its devices), so the CPU's estimate comes first.
struct AutoChoice {
  EstimatedCpuRun cpu;   // the CPU's backend with its estimate (none: not weighed)
  bool rented = false;   // the CPU takes the run
  std::string why;
};

// Whether auto weighs a GPU's start-up for this run: one device, none started yet.
bool weighs_start_up(const RunOptions& opt) {
  return opt.backend == "auto" && opt.devices.empty() && device_start_up_ahead();
}

// The account's verdict on a run of `seconds` on the CPU: booked, or (explaining) only asked; when
// the CPU takes it, the plan's note in `why` (`estimate`: "about" or, for a bound, "at most about").
bool rent_the_cpu(double seconds, bool book, const char* estimate, std::string& why) {
  CpuRental& account = CpuRental::process();
  if (!(book ? account.rent(seconds) : account.would_rent(seconds))) return false;
  why = fmt::format(
      "auto: the cpu, {} {:.2g} s of it, less than a GPU's start-up (~{} s; none started in this process); "
      "--backend cuda takes the GPU (the same result)",
      estimate, seconds, kDeviceStartUpSeconds);
  return true;
}

AutoChoice weigh_device_start_up(const Plan& plan, const RunOptions& opt, bool book) {
  AutoChoice c;
  if (!weighs_start_up(opt)) return c;
  c.cpu = estimate_cpu_run(plan);
  c.rented = rent_the_cpu(c.cpu.seconds, book, "about", c.why);
  return c;
}

// The run's backend: the CPU that auto rented, else backend_for's; a CPU backend that weighed the
// plan keeps its cell index for the run (a machine without a GPU, once the account is spent).
std::unique_ptr<Backend> choose_backend(const Statistic& stat, const RunOptions& opt, AutoChoice& c, std::string& why) {
  if (c.rented) {
    why = c.why;
    return std::move(c.cpu.backend);
  }
  auto b = backend_for(stat, opt, why);
  if (c.cpu.backend && b->name() == "cpu") return std::move(c.cpu.backend);
  return b;
}

// The same for vectors: the CPU's seconds bounded from above by its brute force, every pair's d
// products at kVectorProductsPerThreadSecond a thread (the CPU's Gram k-NN ran 7.9·10^9 a thread on
// the 2-core host, 2·10^4 × d 128: bench/RESULTS.md; the bound keeps a margin for the cosine's
// norms, the rule's settling and small d). No index: nothing is built to weigh it.
constexpr double kVectorProductsPerThreadSecond = 2e9;

struct VectorRental {
  std::unique_ptr<Backend> cpu;  // null: not rented
  double seconds = -1;           // the bound booked
};

VectorRental weigh_vector_start_up(const VectorPlan& plan, const RunOptions& opt, bool book, std::string& why) {
  VectorRental v;
  if (!weighs_start_up(opt) || plan.stat->output() == OutputKind::Matrix) return v;
  const bool every_partner = std::holds_alternative<reduce::Nearest>(plan.stat->reduction);
  const double pairs = every_partner ? static_cast<double>(plan.a->size()) * static_cast<double>(plan.b->size())
                                     : static_cast<double>(pair_total(plan.a->size(), plan.b->size(), plan.is_auto()));
  const double seconds =
      pairs * std::max(plan.a->dim(), 8) / (kVectorProductsPerThreadSecond * std::max(1, plan.threads));
  if (!rent_the_cpu(seconds, book, "at most about", why)) return v;
  v.cpu = make_cpu_backend();
  v.seconds = seconds;
  return v;
}

// RunOptions::pair_sink: a pair list a backend (or a distribution) collected in Result::pairs goes
// to the sink. The CUDA backend streams its batches itself and leaves Result::pairs empty.
void hand_pairs_to_sink(const Statistic& stat, const RunOptions& opt, Result& r) {
  if (!opt.pair_sink || stat.output() != OutputKind::PairList || r.pairs.empty()) return;
  opt.pair_sink(r.pairs);
  r.pairs = {};
}

// What every run adds to the backend's result: its time since t0, the backend, the plan (with
// what the backend decided while running, if anything, and the run's phases), the sets' sizes;
// then the pair sink and the plan callback.
void finish_run(Result& r, const Backend& backend, const std::string& plan, std::chrono::steady_clock::time_point t0,
                std::size_t n_a, std::size_t n_b, const Statistic& stat, const RunOptions& opt,
                const PhaseClock* phases = nullptr) {
  r.info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.info.backend = backend.name();
  r.info.device = backend.device();
  const std::string ran = r.info.plan;
  r.info.plan = plan;
  if (!ran.empty()) r.info.plan += "\nran: " + ran;
  if (phases && !phases->empty())
    r.info.plan += "\nphases (wall time, the process's peak resident memory after each): " + phases->text();
  r.info.n_a = n_a;
  r.info.n_b = n_b;
  hand_pairs_to_sink(stat, opt, r);
  if (opt.on_plan) opt.on_plan(r.info.plan);
}

// A planned run on one backend (run(), and run_on_key_edges()): auto's weighing of the device's
// start-up, the backend's run, the rented CPU's account, the phases and the plan's text.
Result run_on_one_backend(const Statistic& stat, Plan plan, PhaseClock& clock, const PointSet& a, const PointSet* b,
                          const RunOptions& opt, const std::string& not_split) {
  // (The estimate's cell index, when auto weighs the CPU, is one phase of its own, and the run's
  // when the CPU runs it: the run's seconds then start before it.)
  const auto t_weigh = std::chrono::steady_clock::now();
  AutoChoice choice = weigh_device_start_up(plan, opt, true);
  const bool weighed = choice.cpu.backend != nullptr;
  if (weighed) clock.lap("auto: the cpu's estimate (its cell index)");
  plan.clock = &clock;
  std::string fallback;
  auto backend = choose_backend(stat, opt, choice, fallback);
  const bool runs_the_estimate = weighed && !choice.cpu.backend;  // (its backend moved into the run's)
  const auto t0 = runs_the_estimate ? t_weigh : std::chrono::steady_clock::now();
  const std::size_t laps = clock.laps();
  Result r = backend->run(plan);
  if (choice.rented)
    CpuRental::process().settle(choice.cpu.seconds,
                                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  // A backend that laps no phases of its own (CUDA's are in its "ran:" line) is one phase.
  if (clock.laps() == laps) clock.lap(backend->name() + " run");
  r.exact.grids = plan.grids;
  round_exact_sums(r);
  finish_run(r, *backend, not_split + plan_text(*backend, fallback, plan.explanation, backend->describe(plan)), t0,
             a.size(), b ? b->size() : 0, stat, opt, &clock);
  return r;
}

// A planned run's text without running it (explain(), explain_on_key_edges()): auto's weighing
// asked of the account, not booked.
std::string explain_on_one_backend(const Statistic& stat, const Plan& plan, const RunOptions& opt) {
  std::string fallback;
  AutoChoice choice = weigh_device_start_up(plan, opt, false);
  auto backend = choose_backend(stat, opt, choice, fallback);
  return plan_text(*backend, fallback, plan.explanation, backend->describe(plan));
}

}  // namespace

std::string plan_text(const Backend& backend, const std::string& fallback, const std::string& explanation,
                      const std::string& description) {
  return fmt::format("backend: {} ({}){}\n{}\n{}", backend.name(), backend.device(),
                     fallback.empty() ? "" : "; " + fallback, explanation, description);
}

Result run(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt) {
  if (opt.distribution) {
    // The pieces run through run() without a distribution: the plan is reported once, for the whole.
    RunOptions whole = opt;
    whole.on_plan = nullptr;
    // The pieces' pairs are gathered in the callers' indices first.
    whole.pair_sink = nullptr;
    Result r = opt.distribution->run(stat, a, b, whole);
    hand_pairs_to_sink(stat, opt, r);
    if (opt.on_plan) opt.on_plan(r.info.plan);
    return r;
  }
  if (opt.backend == "hybrid") return run_hybrid(stat, a, b, opt);
  check_devices(opt);
  std::string not_split;
  if (opt.devices.size() > 1) {
    not_split = why_not_split(stat, opt);
    if (not_split.empty()) {
      Result r = run_on_devices(stat, a, b, opt);
      if (opt.on_plan) opt.on_plan(r.info.plan);
      return r;
    }
    not_split = fmt::format("devices: not split over {} devices: {}\n", opt.devices.size(), not_split);
  }
  PhaseClock clock;
  Plan plan = make_plan(stat, a, b, opt);
  clock.lap("plan");
  return run_on_one_backend(stat, std::move(plan), clock, a, b, opt, not_split);
}

std::string explain(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt) {
  if (opt.distribution) return opt.distribution->explain(stat, a, b, opt);
  if (opt.backend == "hybrid") return explain_hybrid(stat, a, b, opt);
  check_devices(opt);
  std::string not_split;
  if (opt.devices.size() > 1) {
    not_split = why_not_split(stat, opt);
    if (not_split.empty()) return explain_on_devices(stat, a, b, opt);
    not_split = fmt::format("devices: not split over {} devices: {}\n", opt.devices.size(), not_split);
  }
  return not_split + explain_on_one_backend(stat, make_plan(stat, a, b, opt), opt);
}

namespace {

Plan plan_on_key_edges(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt,
                       const std::vector<double>& keys, const std::string& why) {
  if (opt.distribution || opt.backend == "hybrid" || opt.devices.size() > 1)
    throw Error(ErrorKind::Internal, "a run on given key edges takes one backend");
  check_devices(opt);
  if (stat.metric != Metric::Euclidean || stat.is_2d()) throw Error(ErrorKind::Internal, "key edges of a Euclidean 1-D statistic only");
  Plan plan = make_plan(stat, a, b, opt);
  if (keys.size() != static_cast<std::size_t>(plan.edges.nbins) + 1)
    throw Error(ErrorKind::Internal, "key edges: one more than the bins");
  plan.edges = KeyEdges::from_keys(keys);
  plan.explanation += "\n" + why;
  return plan;
}

}  // namespace

Result run_on_key_edges(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt,
                        const std::vector<double>& keys, const std::string& why) {
  PhaseClock clock;
  Plan plan = plan_on_key_edges(stat, a, b, opt, keys, why);
  clock.lap("plan");
  return run_on_one_backend(stat, std::move(plan), clock, a, b, opt, "");
}

std::string explain_on_key_edges(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt,
                                 const std::vector<double>& keys, const std::string& why) {
  return explain_on_one_backend(stat, plan_on_key_edges(stat, a, b, opt, keys, why), opt);
}

namespace {

void refuse_distribution(const RunOptions& opt) {
  if (opt.distribution) throw_config("vector statistics do not run distributed (MPI) yet: run them in one process");
}

// Vectors of at most kMaxDim dimensions under the Euclidean metric are points: the point paths
// (cell grids, float32 proxies with guard bands) decide every pair by the same float64 rule, so
// they give the same result as the vector paths' brute force, often far faster. k-NN and the
// cosine distance have no point path.
bool runs_as_points(const Statistic& s, const VectorSet& a) {
  if (s.metric != Metric::Euclidean || a.dim() > kMaxDim) return false;
  const OutputKind out = s.output();
  return out == OutputKind::Reduction || out == OutputKind::PerPoint || out == OutputKind::PairList;
}

struct AsPoints {
  PointSet a, b;
  AsPoints(const VectorSet& va, const VectorSet* vb) : a(va.to_points()), b(vb ? vb->to_points() : PointSet()) {}
};

std::string as_points_note(int dim) {
  return fmt::format("{}-D vectors run as points (the same float64 rule; the point paths' grids and guard bands)", dim);
}

}  // namespace

Result run(const Statistic& stat, const VectorSet& a, const VectorSet* b, const RunOptions& opt) {
  refuse_distribution(opt);
  check_devices(opt);
  const VectorPlan plan = make_vector_plan(stat, a, b, opt);
  if (runs_as_points(stat, a)) {
    const AsPoints p(a, b);
    RunOptions as_points = opt;
    as_points.on_plan = nullptr;
    Result r = run(stat, p.a, b ? &p.b : nullptr, as_points);
    r.info.plan = as_points_note(a.dim()) + "\n" + r.info.plan;
    if (opt.on_plan) opt.on_plan(r.info.plan);
    return r;
  }
  if (opt.backend == "hybrid") return run_hybrid(stat, a, b, opt);
  std::string fallback;
  VectorRental rental = weigh_vector_start_up(plan, opt, true, fallback);
  auto backend = rental.cpu ? std::move(rental.cpu) : backend_for(stat, opt, fallback, true);
  const auto t0 = std::chrono::steady_clock::now();
  Result r = backend->run_vectors(plan);
  if (rental.seconds >= 0)
    CpuRental::process().settle(rental.seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  finish_run(r, *backend, plan_text(*backend, fallback, plan.explanation, backend->describe_vectors(plan)), t0,
             a.size(), b ? b->size() : 0, stat, opt);
  return r;
}

std::string explain(const Statistic& stat, const VectorSet& a, const VectorSet* b, const RunOptions& opt) {
  refuse_distribution(opt);
  check_devices(opt);
  const VectorPlan plan = make_vector_plan(stat, a, b, opt);
  if (runs_as_points(stat, a)) {
    const AsPoints p(a, b);
    return as_points_note(a.dim()) + "\n" + explain(stat, p.a, b ? &p.b : nullptr, opt);
  }
  if (opt.backend == "hybrid") return explain_hybrid(stat, a, b, opt);
  std::string fallback;
  VectorRental rental = weigh_vector_start_up(plan, opt, false, fallback);
  auto backend = rental.cpu ? std::move(rental.cpu) : backend_for(stat, opt, fallback, true);
  return plan_text(*backend, fallback, plan.explanation, backend->describe_vectors(plan));
}

std::string runs_on(const Statistic& stat, const RunOptions& opt) {
  if (opt.backend == "hybrid") return "hybrid";
  std::string why;
  return backend_for(stat, opt, why)->name();
}

void warm_up(const std::string& backend) { warm_up(backend, {}); }

namespace {

// The backends whose runs may take a GPU (what warm_up and start_up_device start).
bool may_use_device(const std::string& backend) { return backend == "auto" || backend == "cuda" || backend == "hybrid"; }

}  // namespace

void start_up_device(const std::string& backend) {
  if (!may_use_device(backend)) return;
  try {
    if (simulated_devices() == 0) start_up_cuda_device();
  } catch (...) {
    // The run itself reports any problem with the device.
  }
}

void warm_up(const std::string& backend, const std::vector<int>& devices) {
  if (!may_use_device(backend)) return;
  try {
    if (simulated_devices() > 0) return;
    if (devices.empty()) {
      if (auto b = make_cuda_backend()) b->warm_up();
      return;
    }
    std::vector<int> each = devices;
    std::sort(each.begin(), each.end());
    each.erase(std::unique(each.begin(), each.end()), each.end());
    // A thread a device (its context and pool are set up on the thread that makes it current).
    std::vector<std::thread> threads;
    for (const int d : each)
      threads.emplace_back([d] {
        try {
          if (auto b = make_cuda_backend(d)) b->warm_up();
        } catch (...) {
        }
      });
    for (std::thread& t : threads) t.join();
  } catch (...) {
    // The run itself reports any problem with the device.
  }
}

std::vector<std::string> available_backends() {
  std::vector<std::string> v{"cpu"};
  if (cuda_device_count() > 0) v.emplace_back("cuda");
  return v;
}

}  // namespace twobody
