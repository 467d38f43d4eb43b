// A correlation function's counts: DD once, ΣDR_i and ΣRR_i over the random catalogues (RR from
// saved counts when given), their normalisations and, with a jackknife, the region counts.
#include "twobody/detail/statistics/correlation_counts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/engine/devices.hpp"
#include "twobody/error.hpp"

namespace twobody::detail {

namespace {

using Clock = std::chrono::steady_clock;

// The seconds since `t`; `t` moves to now.
double lap(Clock::time_point& t) {
  const auto now = Clock::now();
  const double dt = std::chrono::duration<double>(now - t).count();
  t = now;
  return dt;
}

// The jackknife's setting (regions, layout, centres, labels), the data's points per region and
// every region count and normalisation at zero, for `nb` bins. A region may hold no data points
// (clustered data in cells of the box): leaving it out removes its random points only, a sample as
// well defined as any (JackknifeResult::n_data says which; the CLI notes them).
JackknifeResult start_jackknife(const RegionSums& data, const RegionLabeller& labeller, std::size_t nb, bool weighted) {
  const std::size_t R = labeller.regions;
  JackknifeResult J;
  J.regions = R;
  J.layout = labeller.layout;
  J.centres = labeller.centres;
  J.fitted_on_data = labeller.fitted_on_data;
  if (labeller.numbering) J.labels = labeller.numbering->labels;
  J.n_data.assign(R, 0);
  J.n_randoms.assign(R, 0);
  for (std::size_t r = 0; r < R; ++r) J.n_data[r] = static_cast<std::size_t>(data.n[r]);
  J.dr.assign(R * nb, 0);
  J.rr.assign(R * nb, 0);
  if (weighted) {
    J.wdr.assign(R * nb, 0.0);
    J.wrr.assign(R * nb, 0.0);
  }
  J.norm_dr.assign(R, 0.0);
  J.norm_rr.assign(R, 0.0);
  return J;
}

// The engine runs of one correlation function, one at a time or, on GPUs, several at once.
// On one GPU the counts run two at a time, each on its own streams (CUDA backend), so that one
// run's host set-up, uploads and cell index overlap the other's kernel, and each kernel's tail
// is filled by the other's. On several (RunOptions::devices), whole counts go to the devices, two
// in flight a device, each to the first device with a free slot: the counts are many (DD, every
// RR_i and DR_i) and each fills a device, so sharing them out beats splitting each one over every
// device, which repeats each count's upload and cell index on every device and idles them
// between counts. Each device keeps the data's upload and index for its own DD and DR_i (a
// ResidentSet a device). Not under MPI (a distributed run's collectives belong to one thread at a
// time). Results are added in the order the runs were submitted, so the float64 sums are those of
// one run at a time.
class CountRuns {
 public:
  // `data` is counted in DD and in every DR_i: uploaded and indexed once a device (ResidentSet).
  // `devices`: the devices the counts are shared over (empty: this thread's, `depth` at once).
  CountRuns(const RunOptions& opt, const PointSet& data, int depth, std::vector<int> devices = {})
      : depth_(depth), device_(depth > 1 && devices.empty() ? current_cuda_device() : -1),
        devices_(std::move(devices)), opt_(opt) {
    for (std::size_t k = 0; k < std::max<std::size_t>(1, devices_.size()); ++k)
      resident_.push_back(std::make_shared<const ResidentSet>(data));
    for (int slot = depth_ - 1; slot >= 0; --slot) free_.push_back(slot);
    if (depth > 1 && opt.on_plan) {
      // The runs' plans, one call at a time.
      auto m = std::make_shared<std::mutex>();
      opt_.on_plan = [m, p = opt.on_plan](const std::string& plan) {
        std::lock_guard<std::mutex> lock(*m);
        p(plan);
      };
    }
    if (depth > 1 && opt.progress) {
      // One call at a time, and never backwards (each run reports its own 0 to 1).
      struct Shown {
        std::mutex m;
        double most = 0;
      };
      auto shown = std::make_shared<Shown>();
      opt_.progress = [shown, p = opt.progress](double f) {
        std::lock_guard<std::mutex> lock(shown->m);
        shown->most = std::max(shown->most, f);
        p(shown->most);
      };
    }
  }

  // Counts a (with b: against b; shared: alive until the run ends) and hands the result to `add`.
  void submit(std::shared_ptr<const PointSet> a, std::shared_ptr<const PointSet> b, Statistic t,
              std::function<void(Result&&)> add) {
    t.traversal = b ? Traversal::Cross : Traversal::Auto;
    if (depth_ == 1) {
      RunOptions o = opt_;
      o.resident = resident_[0];
      add(run(t, *a, b.get(), o));
      return;
    }
    while (free_.empty()) wait_any();
    const int slot = free_.back();
    free_.pop_back();
    RunOptions o = opt_;
    const std::size_t d = devices_.empty() ? 0 : static_cast<std::size_t>(slot) % devices_.size();
    if (!devices_.empty()) o.devices = {devices_[d]};
    o.resident = resident_[d];
    auto job = [a, b, t, o = std::move(o), device = device_] {
      set_current_cuda_device(device);  // (a worker thread starts on device 0)
      return run(t, *a, b.get(), o);
    };
    inflight_.push_back({std::async(std::launch::async, std::move(job)), std::move(add), slot, std::nullopt});
  }

  // Waits for the runs in flight and adds their results, in the order they were submitted.
  void finish() {
    while (!inflight_.empty()) wait_any();
  }

 private:
  struct Job {
    std::future<Result> result;
    std::function<void(Result&&)> add;
    int slot = 0;
    std::optional<Result> done;  // finished, waiting for an earlier job to be added
  };

  // Waits until some run in flight has finished, frees its slot, and adds the finished results
  // at the front, in submission order.
  void wait_any() {
    for (bool any = false; !any;) {
      for (Job& j : inflight_)
        if (!j.done && j.result.wait_for(std::chrono::milliseconds(0)) == std::future_status::ready) {
          j.done = j.result.get();
          free_.push_back(j.slot);
          any = true;
        }
      if (!any) {
        // (the oldest unfinished run, a millisecond at a time: counts take far longer)
        for (Job& j : inflight_)
          if (!j.done) {
            j.result.wait_for(std::chrono::milliseconds(1));
            break;
          }
      }
    }
    while (!inflight_.empty() && inflight_.front().done) {
      Job j = std::move(inflight_.front());
      inflight_.pop_front();
      j.add(std::move(*j.done));
    }
  }

  int depth_;
  int device_;
  std::vector<int> devices_;
  RunOptions opt_;
  std::vector<std::shared_ptr<const ResidentSet>> resident_;  // one a device
  std::vector<int> free_;                                      // slots free to run a count
  std::deque<Job> inflight_;  // (after opt_: destroyed first, waiting for the runs that read it)
};

// sets[first..upto) as one point set: coordinates, the weights when every set has them, the
// region labels when `labelled`.
std::shared_ptr<const PointSet> join_catalogues(const std::vector<std::shared_ptr<const PointSet>>& sets,
                                                std::size_t first, std::size_t upto, int dim, bool labelled) {
  std::size_t n = 0;
  for (std::size_t q = first; q < upto; ++q) n += sets[q]->size();
  auto joined = std::make_shared<PointSet>(dim, n);
  bool all_weighted = true;
  for (std::size_t q = first; q < upto; ++q) all_weighted = all_weighted && sets[q]->has_weights();
  std::vector<double> w(all_weighted ? n : 0);
  std::vector<std::int32_t> l(labelled ? n : 0);
  std::size_t at = 0;
  for (std::size_t q = first; q < upto; ++q) {
    const PointSet& r = *sets[q];
    const auto m = static_cast<std::int64_t>(r.size());
    // Threaded: serially, joining 10^7 points took ~0.2 s (more than their RR on the GPU).
    for (int dd = 0; dd < dim; ++dd) {
      const double* src = r.coord(dd).data();
      double* dst = joined->coord(dd).data() + at;
#pragma omp parallel for schedule(static)
      for (std::int64_t k = 0; k < m; ++k) dst[k] = src[k];
    }
    if (all_weighted) std::copy(r.weights().begin(), r.weights().end(), w.begin() + static_cast<std::ptrdiff_t>(at));
    if (labelled) std::copy(r.regions().begin(), r.regions().end(), l.begin() + static_cast<std::ptrdiff_t>(at));
    at += r.size();
  }
  if (all_weighted && n > 0) joined->set_weights(std::move(w));
  if (labelled) joined->set_regions(std::move(l));
  return joined;
}

// The sums over the random catalogues, `c` (and `wc` weighted), and with `regions` the region
// counts `jc` (`jwc`), plus one run's counts; its engine time and pairs go to `info` (DD's).
void add_counts(const Result& x, std::size_t nb, std::size_t regions, bool weighted, std::vector<double>& c,
                std::vector<double>& wc, std::vector<std::uint64_t>& jc, std::vector<double>& jwc, RunInfo& info) {
  for (std::size_t k = 0; k < nb; ++k) {
    c[k] += static_cast<double>(x.counts[k]);
    if (weighted) wc[k] += x.weighted[k];
  }
  for (std::size_t t = 0; t < regions * nb; ++t) {
    jc[t] += x.region_counts[t];
    if (weighted) jwc[t] += x.region_weighted[t];
  }
  info.seconds += x.info.seconds;
  info.pairs_evaluated += x.info.pairs_evaluated;
  info.pairs_settled_fp64 += x.info.pairs_settled_fp64;
}

// The normalisations one random catalogue `r` adds: DR against `data` (whose region sums
// out.data_regions holds with a jackknife), and RR unless it comes from saved counts.
void add_norms(CorrelationCounts& out, JackknifeResult& J, const PointSet& data, const PointSet& r, std::size_t R,
               bool with_rr) {
  const bool weighted = out.weighted;
  if (with_rr) out.norm_rr += pair_norm(r, nullptr, weighted);
  out.norm_dr += pair_norm(data, &r, weighted);
  out.n_randoms += r.size();
  if (!out.data_regions) return;
  const RegionSums rs(r, R);
  for (std::size_t q = 0; q < R; ++q) {
    J.n_randoms[q] += static_cast<std::size_t>(rs.n[q]);
    J.norm_dr[q] += out.data_regions->size(q, weighted) * rs.size(q, weighted);
    if (with_rr) J.norm_rr[q] += rs.auto_norm(q, weighted);
  }
}

// The random catalogues' RR from saved counts: its normalisation comes with the counts, not from
// the catalogues.
void take_saved_rr(CorrelationCounts& out, JackknifeResult& J, const SavedCounts& c, bool jackknife) {
  out.rr = c.rr;
  if (out.weighted) out.wrr = c.wrr;
  out.norm_rr = c.norm_rr;
  if (jackknife) {
    J.rr = c.jackknife->rr;
    if (out.weighted) J.wrr = c.jackknife->wrr;
    J.norm_rr = c.jackknife->norm_rr;
  }
}

// A random catalogue in the engine's coordinates and labelled, with the seconds each took.
struct Prepared {
  PointSet points;
  double t_prepare = 0, t_label = 0;
};

}  // namespace

CorrelationCounts count_correlation(const Statistic& s, CorrelationSpace space, PointSet d,
                                    const std::vector<PointSet>& randoms,
                                    const std::function<PointSet(const PointSet&)>& prepare,
                                    const RegionLabeller* labeller, const RunOptions& opt, const ReusedCounts& reuse) {
  const bool weighted = s.weighted;
  const bool jackknife = labeller != nullptr;
  const std::size_t R = jackknife ? labeller->regions : 0;
  const std::size_t nb = s.binning2d().active() ? s.binning2d().nbins() : s.binning().nbins();
  // The random catalogues' counts (DR, RR): without mean separations (the data pairs' only).
  Statistic counted = s;
  counted.set_mean_separation(false);
  counted.set_regions(static_cast<int>(R));

  CorrelationCounts out;
  out.weighted = weighted;
  JackknifeResult J;
  if (jackknife) {
    out.data_regions.emplace(d, R);
    J = start_jackknife(*out.data_regions, *labeller, nb, weighted);
  }
  {
    std::vector<const PointSet*> given;
    for (const PointSet& r : randoms) given.push_back(&r);
    out.randoms_hash = content_hash(given);
  }
  if (reuse.rr) {
    std::size_t n_randoms = 0;
    for (const PointSet& r : randoms) n_randoms += r.size();
    check_reusable(*reuse.rr, "the saved RR", space, s, jackknife ? &J : nullptr, false, n_randoms, out.randoms_hash);
  }

  // Catalogue i + 1 is put into the engine's coordinates and labelled on a host thread while
  // catalogue i (the first: while the data's DD) is counted, when the counts run on a GPU (on the
  // CPU the two would only compete for the cores). Its times are then the task's own, overlapped
  // with the counts.
  const auto prepare_one = [&](std::size_t i) {
    Prepared p;
    auto t = Clock::now();
    p.points = prepare(randoms[i]);
    p.t_prepare = lap(t);
    if (jackknife) p.points.set_regions(labeller->label(randoms[i], p.points, fmt::format("random catalogue {}", i + 1)));
    p.t_label = lap(t);
    return p;
  };
  // (A hybrid run keeps the CPU busy too: no host work beside it, one count at a time.)
  const bool on_gpu = runs_on(counted, opt) == "cuda";
  const bool overlap = !randoms.empty() && on_gpu;
  out.overlapped = overlap;
  // Several devices (GPUs, or simulated ones in the tests) take whole counts, two a device.
  const bool shared_out = !opt.distribution && opt.devices.size() > 1 && (on_gpu || simulated_devices() > 0);
  const int depth = shared_out                              ? kConcurrentCounts * static_cast<int>(opt.devices.size())
                    : on_gpu && !opt.distribution && opt.devices.size() <= 1 ? kConcurrentCounts
                                                                             : 1;
  out.concurrent_counts = depth;
  out.count_devices = shared_out ? static_cast<int>(opt.devices.size()) : 0;
  CountRuns runs(opt, d, depth, shared_out ? opt.devices : std::vector<int>{});
  const auto counts_begin = Clock::now();
  std::future<Prepared> next;
  if (overlap) next = std::async(std::launch::async, prepare_one, 0);
  // The data: shared with the runs (no copy: the pointer does not own it).
  const std::shared_ptr<const PointSet> data(&d, [](const PointSet*) {});
  {
    Statistic t = s;
    t.set_regions(static_cast<int>(R));
    runs.submit(data, nullptr, t, [&](Result&& x) { out.dd = std::move(x); });
  }
  out.dr.assign(nb, 0.0);
  out.rr.assign(nb, 0.0);
  out.wdr.assign(nb, 0.0);
  out.wrr.assign(nb, 0.0);
  // ΣDR_i: small random catalogues are put together into one cross count (cross counts add over
  // partner sets, exactly), so that the data are uploaded and indexed once per batch rather than
  // once per catalogue; a catalogue of 10^6 points or more is counted on its own, without a copy:
  // on the H100 host joining ten of them took 0.4 s (fresh memory, page faults) against ~10 ms a
  // count saved.
  constexpr std::size_t kBatchPoints = 1'000'000;
  const auto add_dr = [&](Result&& x) { add_counts(x, nb, R, weighted, out.dr, out.wdr, J.dr, J.wdr, out.dd.info); };
  const auto add_rr = [&](Result&& x) { add_counts(x, nb, R, weighted, out.rr, out.wrr, J.rr, J.wrr, out.dd.info); };
  std::vector<std::shared_ptr<const PointSet>> prepared;
  prepared.reserve(randoms.size());
  std::size_t batch_first = 0;
  const auto flush_dr = [&](std::size_t upto) {
    // Count the data against prepared[batch_first..upto): one catalogue as it is, several joined.
    const std::size_t first = batch_first;
    batch_first = upto;
    if (first == upto) return;
    std::shared_ptr<const PointSet> partners = prepared[first];
    if (upto - first > 1) {
      const auto t0 = Clock::now();
      partners = join_catalogues(prepared, first, upto, d.dim(), jackknife);
      out.t_join += std::chrono::duration<double>(Clock::now() - t0).count();
    }
    // The catalogues' memory goes back when their runs end (the runs hold them).
    for (std::size_t q = first; q < upto; ++q) prepared[q].reset();
    runs.submit(data, std::move(partners), counted, add_dr);
  };
  // On several devices each RR_i (half a DR_i's pairs) waits until `depth` more counts have been
  // submitted, so that the queue ends with RRs: the last counts to finish are short ones, not a
  // DR started on one device while the others idle (4 H200s, w(θ) with 10 randoms of 10^7: the
  // queue ended DR_10, 78 % efficiency). At most `depth` catalogues wait. Sums do not change:
  // RR and DR add into separate arrays, each in catalogue order.
  const std::size_t rr_window = shared_out ? static_cast<std::size_t>(depth) : 0;
  std::deque<std::shared_ptr<const PointSet>> waiting_rr;
  const auto submit_rr = [&](std::size_t keep) {
    while (waiting_rr.size() > keep) {
      runs.submit(waiting_rr.front(), nullptr, counted, add_rr);
      waiting_rr.pop_front();
    }
  };
  std::size_t batch_n = 0;
  for (std::size_t i = 0; i < randoms.size(); ++i) {
    Prepared p = overlap ? next.get() : prepare_one(i);
    if (overlap && i + 1 < randoms.size()) next = std::async(std::launch::async, prepare_one, i + 1);
    auto r = std::make_shared<const PointSet>(std::move(p.points));
    out.t_prepare += p.t_prepare;
    out.t_label += p.t_label;
    if (!reuse.rr) {
      waiting_rr.push_back(r);
      submit_rr(rr_window);  // (may wait for a run in flight: not in t_sums)
    }
    auto t = Clock::now();
    add_norms(out, J, d, *r, R, !reuse.rr);
    out.t_sums += lap(t);
    if (batch_n > 0 && batch_n + r->size() > kBatchPoints) {
      flush_dr(prepared.size());
      batch_n = 0;
    }
    batch_n += r->size();
    prepared.push_back(std::move(r));
  }
  flush_dr(prepared.size());
  submit_rr(0);
  runs.finish();
  out.t_counts_wall = std::chrono::duration<double>(Clock::now() - counts_begin).count();
  if (reuse.rr) take_saved_rr(out, J, *reuse.rr, jackknife);
  out.norm_dd = pair_norm(d, nullptr, weighted);
  if (jackknife) {
    J.dd = out.dd.region_counts;
    J.wdd = out.dd.region_weighted;
    J.norm_dd.assign(R, 0.0);
    for (std::size_t r = 0; r < R; ++r) J.norm_dd[r] = out.data_regions->auto_norm(r, weighted);
    out.jackknife = std::move(J);
  }
  return out;
}

}  // namespace twobody::detail
