#include "twobody/detail/engine/hybrid_workers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>

#include "twobody/detail/engine/devices.hpp"
#include "twobody/detail/engine/pair_limit.hpp"
#include "twobody/detail/engine/planner.hpp"
#include "twobody/error.hpp"

namespace twobody {

std::unique_ptr<Backend> HybridWorker::make_backend() const {
  if (backend == "cpu") return make_cpu_backend();
  return select_backend("cuda", device);
}

HybridCrew hybrid_crew(const RunOptions& opt, const HybridPolicy& policy,
                       const std::function<std::string(const Backend&)>& refuses) {
  const int threads = run_threads(opt);
  HybridCrew crew;
  HybridWorker gpu;
  gpu.threads = 1;  // one host thread drives a device (HEGJoin §4.4.4)
  gpu.end = HybridQueue::End::Heavy;
  gpu.band_seconds = policy.gpu_band_seconds;
  gpu.first_share = policy.gpu_first_share;
  if (policy.fake_gpu) {
    gpu.name = "fake gpu: the cpu backend on 1 thread (TWOBODY_HYBRID_FAKE_GPU)";
    gpu.backend = "cpu";
    crew.workers.push_back(gpu);
  } else {
    // A worker a device of RunOptions::devices (none: the current one). Making a backend makes
    // its device this thread's current one: the caller's is restored after.
    const int current = current_cuda_device();
    const std::vector<int> devices = opt.devices.empty() ? std::vector<int>{-1} : opt.devices;
    for (const int d : devices) {
      const std::unique_ptr<Backend> b = d < 0 ? make_cuda_backend() : select_backend("cuda", d);
      if (!b) {
        crew.alone = "no GPU (" + cuda_unavailable_reason() + ")";
        break;
      }
      if (const std::string why = refuses(*b); !why.empty()) {
        crew.alone = "the " + b->name() + " backend " + why;
        break;
      }
      HybridWorker g = gpu;
      g.backend = b->name();  // "cpu" for a simulated device (TWOBODY_SIMULATED_DEVICES)
      g.device = d < 0 ? current : d;
      g.name = d < 0 ? fmt::format("cuda: {}", b->device())
                     : fmt::format("{} {}: {}", g.backend == "cpu" ? "simulated device" : "cuda", d, b->device());
      crew.workers.push_back(g);
    }
    if (current >= 0) set_current_cuda_device(current);
    if (!crew.alone.empty()) crew.workers.clear();
  }
  HybridWorker cpu;
  cpu.threads = std::max(1, threads - static_cast<int>(crew.workers.size()));
  cpu.name = fmt::format("cpu: {} thread{}", cpu.threads, cpu.threads == 1 ? "" : "s");
  cpu.end = HybridQueue::End::Light;
  cpu.band_seconds = policy.cpu_band_seconds;
  crew.workers.push_back(cpu);
  return crew;
}

namespace {

using Clock = std::chrono::steady_clock;

// A worker's next band: its first share of the run, or its fewest units; then twice the last band's work
// while bands are shorter than band_seconds (a rate measured on small bands understates what a
// team of threads does on larger ones); then rate x band_seconds.
double next_target(const HybridWorker& w, double total, double done, double busy, double last_work,
                   double last_seconds) {
  if (busy <= 0) return w.first_share * total;
  const double rate = done / busy;
  if (last_seconds < w.band_seconds) return std::max(rate * w.band_seconds, 2 * last_work);
  return rate * w.band_seconds;
}

}  // namespace

std::vector<WorkerShare> drive_queue(const std::vector<HybridWorker>& workers, HybridQueue& queue,
                                     const BandRunner& run_band, const std::function<void(double)>& progress) {
  std::vector<WorkerShare> shares(workers.size());
  for (std::size_t w = 0; w < workers.size(); ++w) shares[w].name = workers[w].name;
  std::atomic<bool> stop{false};
  std::mutex mutex;  // progress, failure
  std::exception_ptr failure;
  double done = 0, shown = 0;
  const double total = queue.total();
  const auto show = [&](double fraction) {
    // (under `mutex`) progress never goes back, whichever worker reports.
    if (!progress) return;
    shown = std::max(shown, std::min(1.0, fraction));
    progress(shown);
  };
  const auto work = [&](std::size_t w) {
    try {
      const HybridWorker& me = workers[w];
      // (a simulated device is the CPU backend: it names no CUDA device to make current)
      if (me.device >= 0 && me.backend == "cuda") set_current_cuda_device(me.device);
      const std::unique_ptr<Backend> backend = me.make_backend();
      double my_done = 0, busy = 0, last_work = 0, last_seconds = 0;
      const double cap = workers.size() > 1 ? 0.5 : 1.0;
      while (!stop.load()) {
        const HybridQueue::Take take =
            queue.take(me.end, next_target(me, total, my_done, busy, last_work, last_seconds), cap, me.min_units);
        if (take.empty()) break;
        std::function<void(double)> band_progress;
        if (progress)
          band_progress = [&, work = take.work](double f) {
            std::lock_guard<std::mutex> lock(mutex);
            show(total > 0 ? (done + f * work) / total : f);
          };
        const auto t0 = Clock::now();
        const BandTally tally = run_band(me, *backend, take, band_progress);
        const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        WorkerShare& s = shares[w];
        ++s.bands;
        s.rows += tally.rows;
        s.pairs += tally.pairs;
        s.seconds += seconds;
        my_done += take.work;
        busy += seconds;
        last_work = take.work;
        last_seconds = seconds;
        std::lock_guard<std::mutex> lock(mutex);
        done += take.work;
        show(total > 0 ? done / total : 1.0);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!failure) failure = std::current_exception();
      stop.store(true);
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t w = 1; w < workers.size(); ++w) threads.emplace_back(work, w);
  if (!workers.empty()) work(0);
  for (std::thread& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
  return shares;
}

double load_imbalance(const std::vector<WorkerShare>& shares) {
  if (shares.size() < 2) return 0;
  const auto [lo, hi] = std::minmax_element(shares.begin(), shares.end(),
                                            [](const WorkerShare& x, const WorkerShare& y) { return x.seconds < y.seconds; });
  return hi->seconds > 0 ? (hi->seconds - lo->seconds) / hi->seconds : 0.0;
}

std::string describe_crew(const HybridCrew& crew, const HybridPolicy& policy) {
  std::string s;
  if (crew.workers.size() < 2) {
    s = fmt::format("hybrid: {}: the cpu runs it alone", crew.alone);
  } else {
    s = "hybrid: one work queue ordered by estimated work, heaviest first (HEGJoin); ";
    for (std::size_t w = 0; w < crew.workers.size(); ++w) {
      const HybridWorker& x = crew.workers[w];
      s += fmt::format("{}{} takes bands from the {} end, each of about {:.3g} s of its work{}", w ? "; " : "", x.name,
                       x.end == HybridQueue::End::Heavy ? "heavy" : "light", x.band_seconds,
                       x.first_share > 0 ? fmt::format(" (its first: {:.3g} of the whole, before its rate is known; "
                                                       "then at most half of what is left)",
                                                       x.first_share)
                                         : fmt::format(" (its first: {} unit{}; doubled while shorter)", x.min_units,
                                                       x.min_units == 1 ? "" : "s"));
    }
    s += "; done when the two ends meet; pieces merged exactly (counts added, pairs placed and sorted, lists placed)";
  }
  const std::string o = policy.overrides();
  return o.empty() ? s : s + "; " + o;
}

std::string describe_shares(const std::vector<WorkerShare>& shares, double imbalance) {
  std::string s = "hybrid shares:";
  for (const WorkerShare& w : shares)
    s += fmt::format(" {}: {} band{}, {} rows, {} pairs, {:.4f} s busy;", w.name, w.bands, w.bands == 1 ? "" : "s",
                     w.rows, w.pairs, w.seconds);
  s += fmt::format(" load imbalance {:.3f} (|T_gpu - T_cpu| / max(T_gpu, T_cpu))", imbalance);
  return s;
}

}  // namespace twobody

namespace twobody {

std::function<void(std::span<const PairRecord>)> SharedPairSink::for_piece(const PiecePlacement& where) {
  return [this, where](std::span<const PairRecord> batch) {
    std::vector<PairRecord> placed;
    placed.reserve(batch.size());
    for (const PairRecord& p : batch) placed.push_back(place_pair(p, where));
    std::sort(placed.begin(), placed.end(), pair_order);
    std::lock_guard<std::mutex> lock(mutex_);
    listed_ += placed.size();
    if (listed_ > max_pairs_) throw_pair_limit(max_pairs_, narrow_);
    sink_(placed);
  };
}

void finish_hybrid(Result& r, const std::string& plan, const std::vector<WorkerShare>& shares,
                   std::chrono::steady_clock::time_point t0, std::size_t n_a, std::size_t n_b, const RunOptions& opt) {
  std::sort(r.pairs.begin(), r.pairs.end(), pair_order);
  r.info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.info.backend = "hybrid";
  std::string device;
  for (const WorkerShare& s : shares) device += (device.empty() ? "" : " + ") + s.name;
  r.info.device = device;
  r.info.threads = run_threads(opt);
  r.info.n_a = n_a;
  r.info.n_b = n_b;
  r.info.workers = shares;
  r.info.load_imbalance = load_imbalance(shares);
  r.info.plan = plan + "\nran: " + describe_shares(shares, r.info.load_imbalance);
  if (opt.on_plan) opt.on_plan(r.info.plan);
}

}  // namespace twobody
