#include "twobody/detail/engine/device_distribution.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>

#include "twobody/detail/engine/devices.hpp"
#include "twobody/detail/engine/exact_sums.hpp"
#include "twobody/detail/engine/pair_limit.hpp"
#include "twobody/detail/engine/planner.hpp"
#include "twobody/detail/engine/reductions.hpp"
#include "twobody/detail/engine/work_share.hpp"
#include "twobody/error.hpp"

namespace twobody {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The points the jobs read. A whole slab is copied out of the caller's set at its first use (by
// the thread that needs it first; the others wait for it) and dropped after its last job, so it
// is made once however many jobs read it and the copies never outnumber the slabs in use. A
// cross job's halo (part of a slab) is copied for that job alone.
class SlabStore {
 public:
  SlabStore(const dist::Decomposition& D, const PointSet& a, const PointSet* b, const std::vector<std::size_t>& jobs)
      : D_(D), a_(a), b_(b), first_(D.a.chunks()), second_(b ? D.b.chunks() : 0) {
    for (std::size_t k : jobs) {
      const dist::PairJob& j = D.jobs[k];
      if (D.a.covers(j.a, j.a_first, j.a_last)) ++first_[j.a].uses;
      if (!j.is_auto && (b ? D.b : D.a).covers(j.b, j.b_first, j.b_last)) ++(b ? second_[j.b] : first_[j.b]).uses;
    }
  }

  // Positions [first, last) of slab c of the first set, or of the second (a cross run's).
  std::shared_ptr<const PointSet> take(bool second, std::size_t c, std::size_t first, std::size_t last, int threads) {
    const dist::SlabChunks& chunks = second ? D_.b : D_.a;
    const PointSet& set = second ? *b_ : a_;
    if (!chunks.covers(c, first, last)) return std::make_shared<const PointSet>(chunks.make(set, first, last, threads));
    Entry& e = (second ? second_ : first_)[c];
    std::lock_guard<std::mutex> lock(e.m);
    if (!e.set) e.set = std::make_shared<const PointSet>(chunks.make(set, first, last, threads));
    std::shared_ptr<const PointSet> kept = e.set;
    if (--e.uses == 0) e.set.reset();  // its last job holds the only reference
    return kept;
  }

 private:
  struct Entry {
    std::mutex m;
    std::shared_ptr<const PointSet> set;
    std::size_t uses = 0;
  };
  const dist::Decomposition& D_;
  const PointSet& a_;
  const PointSet* b_;
  std::vector<Entry> first_, second_;
};

std::string device_label(int device) { return device < 0 ? "of this process" : std::to_string(device); }

}  // namespace

std::string JobsReport::describe(const std::string& prefix, const std::string& unit) const {
  std::string s;
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const DeviceShare& d : devices) {
    s += fmt::format("{}: device {} ({}): {} {}, busy {:.3f} s\n", prefix, device_label(d.device),
                     d.name.empty() ? "no job" : d.name, d.jobs, unit, d.busy);
    lo = std::min(lo, d.busy);
    hi = std::max(hi, d.busy);
  }
  return s + fmt::format("{}: busy {:.3f} to {:.3f} s, imbalance |max - min| / max = {:.3f}", prefix,
                         devices.empty() ? 0.0 : lo, hi, hi > 0 ? (hi - lo) / hi : 0.0);
}

JobsReport run_jobs(const Statistic& stat, const PointSet& a, const PointSet* b, const dist::Decomposition& D,
                    const std::vector<std::size_t>& mine, const RunOptions& local, Result& out) {
  const std::vector<int> devices = local.devices.empty() ? std::vector<int>{-1} : local.devices;
  const std::size_t W = devices.size();
  const bool simulated = simulated_devices() > 0;
  JobsReport report;
  report.devices.resize(W);
  for (std::size_t w = 0; w < W; ++w) report.devices[w].device = devices[w];

  // The queue: longest first (estimated pairs; ties by job order). Merged in the order of `mine`.
  std::vector<std::size_t> queue = mine;
  std::stable_sort(queue.begin(), queue.end(),
                   [&](std::size_t x, std::size_t y) { return D.jobs[x].estimate > D.jobs[y].estimate; });
  std::vector<std::size_t> position(D.jobs.size());
  double total = 0;
  for (std::size_t n = 0; n < mine.size(); ++n) {
    position[mine[n]] = n;
    total += std::max(1.0, D.jobs[mine[n]].estimate);
  }
  SlabStore slabs(D, a, b, mine);
  const dist::SlabChunks& second = D.cross ? D.b : D.a;

  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr error;
  // `merging` guards the results waiting for an earlier job and `out`; `callbacks` the caller's
  // progress and pair sink, called one at a time.
  std::mutex merging, callbacks;
  std::vector<std::optional<Result>> waiting(mine.size());
  std::size_t merged = 0;
  std::vector<double> in_flight(W, 0.0);
  double finished = 0, shown = 0;
  std::size_t jobs_done = 0;
  std::uint64_t listed = 0;

  const auto merge_ready = [&] {
    for (; merged < mine.size() && waiting[merged]; ++merged) {
      const Result& r = *waiting[merged];
      const dist::PairJob& j = D.jobs[mine[merged]];
      PiecePlacement where;
      where.a.order = D.a.order.data() + j.a_first;
      where.b.order = second.order.data() + j.b_first;
      where.whole_is_auto = !D.cross;
      where.piece_is_auto = j.is_auto;
      merge_piece(stat, out, r, where);
      if (!local.pair_sink && out.pairs.size() > local.max_pairs) throw_pair_limit(local.max_pairs);
      if (merged == 0) {
        report.first_plan = r.info.plan;
        report.backend = r.info.backend;
        report.device = r.info.device;
        report.threads = r.info.threads;
      }
      waiting[merged].reset();
    }
  };

  const auto work = [&](std::size_t w) {
    RunOptions o = local;
    o.devices = devices[w] >= 0 ? std::vector<int>{devices[w]} : std::vector<int>{};
    o.distribution = nullptr;
    o.on_plan = nullptr;
    o.resident = nullptr;
    o.pair_sink = nullptr;
    o.progress = nullptr;
    // A simulated device is one CPU thread; a GPU's host work shares the processors with the others'.
    if (simulated && devices[w] >= 0) o.threads = 1;
    else if (W > 1 && o.threads == 0) o.threads = std::max(1, omp_get_num_procs() / static_cast<int>(W));
    const int host_threads = o.threads > 0 ? o.threads : omp_get_num_procs();
    DeviceShare& share = report.devices[w];
    for (std::size_t q = 0; !stop && (q = next++) < queue.size();) {
      const auto t0 = Clock::now();
      try {
        const dist::PairJob& j = D.jobs[queue[q]];
        const double weight = std::max(1.0, j.estimate);
        const std::shared_ptr<const PointSet> x = slabs.take(false, j.a, j.a_first, j.a_last, host_threads);
        const std::shared_ptr<const PointSet> y =
            j.is_auto ? nullptr : slabs.take(D.cross, j.b, j.b_first, j.b_last, host_threads);
        Statistic t = stat;
        t.traversal = j.is_auto ? Traversal::Auto : Traversal::Cross;
        RunOptions piece = o;
        if (local.progress)
          piece.progress = [&, w, weight](double f) {
            std::lock_guard<std::mutex> lock(callbacks);
            in_flight[w] = f * weight;
            const double now = (finished + std::accumulate(in_flight.begin(), in_flight.end(), 0.0)) / total;
            shown = std::max(shown, std::min(1.0, now));
            local.progress(shown);
          };
        if (local.pair_sink) {
          // The job's points are its slabs' sorted positions: order[begin + k] in the caller's sets.
          const std::uint64_t* ia = D.a.order.data() + j.a_first;
          const std::uint64_t* ib = second.order.data() + j.b_first;
          piece.pair_sink = [&, ia, ib](std::span<const PairRecord> batch) {
            std::vector<PairRecord> placed(batch.begin(), batch.end());
            for (PairRecord& p : placed) {
              p.i = ia[p.i];
              p.j = ib[p.j];
              if (!D.cross && p.i > p.j) std::swap(p.i, p.j);
            }
            std::sort(placed.begin(), placed.end(), pair_order);
            std::lock_guard<std::mutex> lock(callbacks);
            listed += placed.size();
            if (listed > local.max_pairs) throw_pair_limit(local.max_pairs);
            local.pair_sink(placed);
          };
        }
        Result r = twobody::run(t, *x, y.get(), piece);
        if (local.progress) {
          // (also for a backend that reports nothing within a run: the grid traversal)
          std::lock_guard<std::mutex> lock(callbacks);
          in_flight[w] = 0;
          finished += weight;
          const double now = ++jobs_done == queue.size()
                                 ? 1.0
                                 : (finished + std::accumulate(in_flight.begin(), in_flight.end(), 0.0)) / total;
          shown = std::max(shown, std::min(1.0, now));
          local.progress(shown);
        }
        std::lock_guard<std::mutex> lock(merging);
        if (share.name.empty()) share.name = (simulated && devices[w] >= 0 ? "simulated: " : "") + r.info.device;
        ++share.jobs;
        waiting[position[queue[q]]] = std::move(r);
        merge_ready();
      } catch (...) {
        std::lock_guard<std::mutex> lock(merging);
        if (!error) error = std::current_exception();
        stop = true;
      }
      share.busy += seconds_since(t0);
    }
  };

  if (W == 1) {
    work(0);
  } else {
    std::vector<std::thread> threads;
    try {
      for (std::size_t w = 0; w < W; ++w) threads.emplace_back(work, w);
    } catch (...) {
      stop = true;
      for (std::thread& t : threads) t.join();
      throw;
    }
    for (std::thread& t : threads) t.join();
  }
  if (error) std::rethrow_exception(error);
  if (merged != mine.size()) throw Error(ErrorKind::Internal, "run_jobs: a pair job was not merged");
  return report;
}

std::string why_not_split(const Statistic& stat, const RunOptions& opt) {
  if (stat.output() == OutputKind::Matrix)
    return "a matrix's blocks are placed, not summed: it runs whole on the first device";
  if (simulated_devices() > 0) return {};
  const auto backend = select_backend(opt.backend, first_device(opt));
  if (const std::string r = backend->refuses(stat); !r.empty())
    return fmt::format("the {} backend {}: the statistic runs whole on the cpu", backend->name(), r);
  return {};
}

namespace {

// The mode of shared items (work_share.hpp) rather than pair jobs: real devices whose backend runs
// this plan whole in one item space (a cutoff statistic's pair jobs would repeat their halos' cell
// stencils and their fixed costs; the devices' copies of the sets cost one upload each, as on one
// device). TWOBODY_DEVICE_SPLIT=jobs keeps the pair jobs (to compare).
bool shares_items(const Plan& whole, const RunOptions& local) {
  if (simulated_devices() > 0) return false;
  if (const char* v = std::getenv("TWOBODY_DEVICE_SPLIT"); v && *v) {
    const std::string mode = v;
    if (mode == "jobs") return false;
    if (mode != "items")
      throw_config(fmt::format("TWOBODY_DEVICE_SPLIT={}: expected items (the default where it applies) or jobs", mode));
  }
  return select_backend(local.backend, local.devices.front())->takes_shares(whole);
}

// The options of the whole split run, its errors found first: the same as a run on one device.
RunOptions whole_run_options(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt,
                             bool* shares = nullptr) {
  RunOptions local = opt;
  local.distribution = nullptr;
  local.on_plan = nullptr;
  local.resident = nullptr;
  const Plan whole = make_plan(stat, a, b, local);
  // Every job's sums on the whole run's grids, so that they add exactly whatever the jobs.
  if (!local.sum_grids) local.sum_grids = whole.grids;
  if (shares) *shares = shares_items(whole, local);
  return local;
}

std::string shared_line(std::size_t devices, int ranges) {
  return fmt::format("devices: {} devices, a host thread each, each running the whole plan on its own copy of the sets "
                     "(one upload and cell index a device, as on one device), the kernels' work items cut into {} ranges "
                     "taken from one queue (a faster device takes more); the devices' outputs added on the whole run's "
                     "exact-sum grids (the same bits as one device)",
                     devices, ranges);
}

// Every device runs the whole plan, its kernels taking ranges of the items from one WorkShare.
Result run_shared(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& local,
                  Clock::time_point t0) {
  const std::size_t W = local.devices.size();
  WorkShare share(static_cast<int>(W) * kRangesPerDevice);
  std::vector<std::optional<Result>> results(W);
  JobsReport report;
  report.devices.resize(W);
  std::exception_ptr error;
  std::mutex failing;
  const auto work = [&](std::size_t w) {
    const auto start = Clock::now();
    DeviceShare& d = report.devices[w];
    d.device = local.devices[w];
    try {
      RunOptions o = local;
      o.devices = {local.devices[w]};
      o.pair_sink = nullptr;
      o.progress = nullptr;
      if (o.threads == 0) o.threads = std::max(1, omp_get_num_procs() / static_cast<int>(W));
      Plan plan = make_plan(stat, a, b, o);
      const auto backend = select_backend(o.backend, o.devices.front());
      if (!backend->takes_shares(plan)) {
        // A device that would run the plan otherwise (no CUDA backend there, or too little free
        // memory for one piece) takes no range: it would count every pair again.
        d.name = backend->device() + ", took no range: it cannot run this plan in one piece";
        Result none = empty_result(stat, a.size(), b ? b->size() : 0);
        none.exact.grids = plan.grids;
        none.info.backend = backend->name();
        none.info.plan = "took no range";
        results[w] = std::move(none);
        d.busy = seconds_since(start);
        return;
      }
      plan.share = &share;
      Result r = backend->run(plan);
      r.exact.grids = plan.grids;
      d.name = backend->device();
      d.jobs = static_cast<std::size_t>(share.taken_by(std::this_thread::get_id()));
      r.info.backend = backend->name();
      r.info.plan = plan_text(*backend, "", plan.explanation, backend->describe(plan)) + "\nran: " + r.info.plan;
      results[w] = std::move(r);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failing);
      if (!error) error = std::current_exception();
    }
    d.busy = seconds_since(start);
  };
  std::vector<std::thread> threads;
  try {
    for (std::size_t w = 0; w < W; ++w) threads.emplace_back(work, w);
  } catch (...) {
    for (std::thread& t : threads) t.join();
    throw;
  }
  for (std::thread& t : threads) t.join();
  if (error) std::rethrow_exception(error);
  if (share.taken() != share.ranges())
    throw Error(ErrorKind::Backend, "the devices could not share the run: none of them runs it in one piece");

  Result out = empty_result(stat, a.size(), b ? b->size() : 0);
  out.exact.grids = *local.sum_grids;
  PiecePlacement whole;  // every device's result is the whole run's layout
  whole.whole_is_auto = whole.piece_is_auto = b == nullptr;
  for (std::size_t w = 0; w < W; ++w) merge_piece(stat, out, *results[w], whole);
  out.exact.grids = *local.sum_grids;
  round_exact_sums(out);
  std::string names;
  for (const DeviceShare& d : report.devices) names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", d.device, d.name);
  // The plan and backend reported: the first device's that took ranges.
  std::size_t lead = 0;
  while (lead + 1 < W && report.devices[lead].jobs == 0) ++lead;
  out.info.backend = results[lead]->info.backend;
  out.info.device = fmt::format("{} devices: {}", W, names);
  out.info.threads = results[lead]->info.threads;
  out.info.n_a = a.size();
  out.info.n_b = b ? b->size() : 0;
  out.info.seconds = seconds_since(t0);
  if (local.progress) local.progress(1.0);
  out.info.plan = shared_line(W, share.ranges()) + "\n" + report.describe("devices", "ranges") +
                  "\ndevices: the plan of the first device that took ranges:\n" + results[lead]->info.plan;
  return out;
}

std::string queue_line(std::size_t devices) {
  return fmt::format("devices: {} devices, a host thread each, taking the longest job left from one queue (a faster "
                     "device takes more); every job an ordinary engine run on its device, the results summed in job "
                     "order on the whole run's exact-sum grids (the same bits as one device)",
                     devices);
}

}  // namespace

Result run_on_devices(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt) {
  const auto t0 = Clock::now();
  bool shares = false;
  const RunOptions local = whole_run_options(stat, a, b, opt, &shares);
  if (shares) return run_shared(stat, a, b, local, t0);
  const int slabs = static_cast<int>(local.devices.size()) * kSlabsPerDevice;
  const auto cut_start = Clock::now();
  const dist::Decomposition D = dist::decompose(stat, a, b, 1, slabs, /*keep_points=*/true);
  const double cut_seconds = seconds_since(cut_start);
  Result out = empty_result(stat, a.size(), b ? b->size() : 0);
  out.exact.grids = *local.sum_grids;
  std::vector<std::size_t> all(D.jobs.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  const JobsReport report = run_jobs(stat, a, b, D, all, local, out);
  std::sort(out.pairs.begin(), out.pairs.end(), pair_order);
  out.exact.grids = *local.sum_grids;
  round_exact_sums(out);
  std::string names;
  for (const DeviceShare& d : report.devices) names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", d.device, d.name);
  out.info.backend = report.backend;
  out.info.device = fmt::format("{} devices: {}", report.devices.size(), names);
  out.info.threads = report.threads;
  out.info.n_a = a.size();
  out.info.n_b = b ? b->size() : 0;
  out.info.seconds = seconds_since(t0);
  out.info.plan = D.describe_cut("devices: ") + fmt::format(" (cut on the host in {:.3f} s)", cut_seconds) + "\n" +
                  queue_line(local.devices.size()) + "\n" +
                  report.describe("devices") + "\ndevices: the first job's plan:\n" + report.first_plan;
  return out;
}

std::string explain_on_devices(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt) {
  bool shares = false;
  RunOptions local = whole_run_options(stat, a, b, opt, &shares);
  if (shares) {
    local.devices = {local.devices.front()};
    return shared_line(opt.devices.size(), static_cast<int>(opt.devices.size()) * kRangesPerDevice) +
           "\ndevices: each device runs:\n" + explain(stat, a, b, local);
  }
  const dist::Decomposition D =
      dist::decompose(stat, a, b, 1, static_cast<int>(local.devices.size()) * kSlabsPerDevice);
  local.devices = {local.devices.front()};
  return D.describe_cut("devices: ") + "\n" + queue_line(opt.devices.size()) + "\ndevices: each job runs as:\n" +
         explain(stat, a, b, local);
}

}  // namespace twobody
