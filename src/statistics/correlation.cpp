#include "twobody/correlation.hpp"

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <cmath>
#include <deque>
#include <future>
#include <limits>
#include <memory>
#include <mutex>
#include <tuple>

#include "twobody/detail/statistics/correlation_counts.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/error.hpp"

namespace twobody {

double pair_norm(const PointSet& a, const PointSet* b, bool weighted) {
  const auto sum = [](const PointSet& p) {
    double s = 0;
    for (double w : p.weights()) s += w;
    return s;
  };
  if (!weighted) {
    const double na = static_cast<double>(a.size());
    return b ? na * static_cast<double>(b->size()) : 0.5 * na * (na - 1);
  }
  if (b) return sum(a) * sum(*b);
  double s2 = 0;
  for (double w : a.weights()) s2 += w * w;
  const double s = sum(a);
  return 0.5 * (s * s - s2);
}

Estimates estimate(double dd, double dr, double rr) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto ratio = [nan](double x, double y) { return y != 0 ? x / y : nan; };
  return {ratio(dd, rr) - 1, ratio(dd, dr) - 1, ratio(dd * rr, dr * dr) - 1, ratio(dd - 2 * dr + rr, rr)};
}

const char* to_string(Estimator e) {
  switch (e) {
    case Estimator::Natural: return "natural";
    case Estimator::DavisPeebles: return "davis-peebles";
    case Estimator::Hamilton: return "hamilton";
    case Estimator::LandySzalay: return "landy-szalay";
  }
  return "?";
}

Estimator parse_estimator(const std::string& name) {
  for (Estimator e : {Estimator::Natural, Estimator::DavisPeebles, Estimator::Hamilton, Estimator::LandySzalay})
    if (name == to_string(e)) return e;
  throw_config(fmt::format("unknown estimator '{}' (natural, davis-peebles, hamilton or landy-szalay)", name));
}

double estimate_of(const Estimates& x, Estimator e) {
  switch (e) {
    case Estimator::Natural: return x.natural;
    case Estimator::DavisPeebles: return x.davis_peebles;
    case Estimator::Hamilton: return x.hamilton;
    case Estimator::LandySzalay: return x.landy_szalay;
  }
  return x.landy_szalay;
}

double estimate(Estimator e, double dd, double dr, double rr) { return estimate_of(estimate(dd, dr, rr), e); }

Metric metric_of(CorrelationSpace space) {
  return space == CorrelationSpace::Sky ? Metric::Angular : space == CorrelationSpace::Box ? Metric::Periodic : Metric::Euclidean;
}

namespace detail {

RegionSums::RegionSums(const PointSet& p, std::size_t R) : n(R, 0.0), w(R, 0.0), w2(R, 0.0) {
  const auto l = p.regions();
  for (std::size_t i = 0; i < p.size(); ++i) {
    n[l[i]] += 1;
    if (p.has_weights()) {
      w[l[i]] += p.weights()[i];
      w2[l[i]] += p.weights()[i] * p.weights()[i];
    }
  }
  for (std::size_t r = 0; r < R; ++r) {
    total_n += n[r];
    total_w += w[r];
    total_w2 += w2[r];
  }
}

double RegionSums::auto_norm(std::size_t r, bool weighted) const {
  if (!weighted) {
    const double m = total_n - n[r];
    return 0.5 * m * (m - 1);
  }
  const double s = total_w - w[r];
  return 0.5 * (s * s - (total_w2 - w2[r]));
}

std::vector<std::int32_t> RegionLabeller::label(const PointSet& given, const PointSet& prepared,
                                                const std::string& which) const {
  if (numbering) return numbering->number(given, which);
  if (cells) return cell_regions(prepared, *cells);
  return nearest_centre(prepared, centres);
}

// Unit vectors from the observer at the origin to each point (survey mocks): the directions
// sky regions are fitted on. A point at the origin keeps (0, 0, 0).
PointSet directions(const PointSet& p) {
  PointSet u(3, p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double x = p.coord(0)[i], y = p.coord(1)[i], z = p.coord(2)[i];
    const double n = std::sqrt(x * x + y * y + z * z);
    const double f = n > 0 ? 1 / n : 0.0;
    u.coord(0)[i] = x * f;
    u.coord(1)[i] = y * f;
    u.coord(2)[i] = z * f;
  }
  return u;
}

RegionLabeller make_labeller(const JackknifeRequest& jk, CorrelationSpace space, const std::optional<Box>& box,
                             const PointSet& data, const PointSet& unit_data, const std::vector<const PointSet*>& others,
                             const SavedCounts* reuse) {
  RegionLabeller L;
  if (jk.use_labels && jk.regions != 0)
    throw_config("give the regions either as labels or as a number to assign automatically, not both");
  if (jk.use_labels) {
    L.numbering = number_regions(data);
    L.regions = L.numbering->labels.size();
    L.layout = fmt::format("{} regions from the catalogues' labels ({} to {})", L.regions, L.numbering->labels.front(),
                           L.numbering->labels.back());
    return L;
  }
  if (jk.regions < 2) throw_config(fmt::format("a jackknife needs at least 2 regions, not {}", jk.regions));
  if (space == CorrelationSpace::Sky) {
    // With a saved RR counted in sky regions of as many centres: its centres (check_reusable
    // compares the rest of the setting); else k-means on this run's data.
    const bool saved = reuse && reuse->jackknife && reuse->jackknife->centres.size() == static_cast<std::size_t>(jk.regions);
    L.centres = saved ? reuse->jackknife->centres : sky_region_centres(unit_data, jk.regions, jk.seed);
    L.regions = L.centres.size();
    L.layout = fmt::format("{} sky regions by k-means on the data's unit vectors (seed {}); randoms take the nearest",
                           L.regions, jk.seed);
    return L;
  }
  const int dim = data.dim();
  std::vector<double> lo(dim), hi(dim);
  for (int d = 0; d < dim; ++d) {
    if (space == CorrelationSpace::Box) {
      lo[d] = 0;
      hi[d] = box->length[d];
      continue;
    }
    std::tie(lo[d], hi[d]) = joint_range(data, data, d);
    for (const PointSet* r : others) {
      if (r->dim() != dim) continue;  // the engine reports the mismatch
      const auto [a, b] = joint_range(*r, *r, d);
      lo[d] = std::min(lo[d], a);
      hi[d] = std::max(hi[d], b);
    }
  }
  L.cells = cell_layout(jk.regions, lo, hi);
  L.regions = static_cast<std::size_t>(L.cells->total());
  L.layout = L.cells->describe();
  return L;
}

}  // namespace detail

namespace {

const char* space_name(CorrelationSpace s) {
  return s == CorrelationSpace::Box ? "box" : s == CorrelationSpace::Open ? "open" : "sky";
}

bool same_bins_2d(const Binning2D& a, const Binning2D& b) {
  return a.kind() == b.kind() && a.line_of_sight() == b.line_of_sight() && a.outer().edges() == b.outer().edges() &&
         a.inner().edges() == b.inner().edges();
}

}  // namespace

namespace detail {

// Reused counts hold only for the setting they were counted in: a mismatch is a request error
// that names the first difference.
void check_reusable(const SavedCounts& c, const std::string& what, CorrelationSpace space, const Statistic& s,
                    const JackknifeResult* J, bool cross, std::size_t n_randoms) {
  const auto fail = [&](const std::string& why) {
    throw_config(fmt::format("{} cannot be reused: {}", what, why));
  };
  if (c.cross != cross)
    fail(c.cross ? "they are a cross-correlation's (R1R2), this run is an auto-correlation"
                 : "they are an auto-correlation's (RR), this run is a cross-correlation");
  if (c.space != space)
    fail(fmt::format("counted in {} space, this run is in {} space", space_name(c.space), space_name(space)));
  if (space == CorrelationSpace::Box) {
    const bool same = c.box && c.box->dim == s.box.dim && c.box->length == s.box.length;
    if (!same) fail(fmt::format("counted in the box {}, this run's box is {}", c.box ? c.box->describe() : "?",
                                s.box.describe()));
  }
  if (c.weighted != s.weighted)
    fail(c.weighted ? "the counts are weighted, this run is not" : "the counts are unweighted, this run is weighted");
  // (Not proof that the catalogues are the same, but other catalogues are caught where their sizes
  // differ.)
  if (c.n_randoms != n_randoms)
    fail(fmt::format("counted with {} random points, this run has {}", c.n_randoms, n_randoms));
  const auto bins_of = [](const Binning& b, const Binning2D& b2) {
    return b2.active() ? b2.describe() : fmt::format("{} bins [{}, {}]", b.nbins(), b.lo(), b.hi());
  };
  const bool same_bins = c.binning2d.active() || s.binning2d().active() ? same_bins_2d(c.binning2d, s.binning2d())
                                                                      : c.binning.edges() == s.binning().edges();
  if (!same_bins)
    fail(fmt::format("counted in {}, this run's are {} (the edges must be equal)", bins_of(c.binning, c.binning2d),
                     bins_of(s.binning(), s.binning2d())));
  if (bool(c.jackknife) != bool(J))
    fail(c.jackknife ? "the counts have jackknife regions, this run has none"
                     : "the counts have no jackknife regions, this run has");
  if (!J) return;
  if (c.jackknife->regions != J->regions || c.jackknife->layout != J->layout || c.jackknife->labels != J->labels)
    fail(fmt::format("counted with the jackknife regions '{}', this run's are '{}'", c.jackknife->layout, J->layout));
  if (c.jackknife->centres != J->centres)
    fail(c.jackknife->centres.empty()
             ? "saved without its sky regions' centres (a file from before they were kept): count RR again"
             : "counted in sky regions of other centres");
}

}  // namespace detail

namespace detail {

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
    const RegionSums& dsum = *out.data_regions;
    for (std::size_t r = 0; r < R; ++r)
      if (dsum.n[r] == 0) {
        const std::string name = labeller->numbering
                                     ? fmt::format("region label {}", labeller->numbering->labels[r])
                                     : fmt::format("region {} of {}", r, labeller->layout);
        throw_input(fmt::format("{} holds no data points: every jackknife region needs data (use fewer regions)", name));
      }
    J.regions = R;
    J.layout = labeller->layout;
    J.centres = labeller->centres;
    if (labeller->numbering) J.labels = labeller->numbering->labels;
    J.n_data.assign(R, 0);
    J.n_randoms.assign(R, 0);
    for (std::size_t r = 0; r < R; ++r) J.n_data[r] = static_cast<std::size_t>(dsum.n[r]);
    J.dr.assign(R * nb, 0);
    J.rr.assign(R * nb, 0);
    if (weighted) {
      J.wdr.assign(R * nb, 0.0);
      J.wrr.assign(R * nb, 0.0);
    }
    J.norm_dr.assign(R, 0.0);
    J.norm_rr.assign(R, 0.0);
  }
  if (reuse.rr) {
    std::size_t n_randoms = 0;
    for (const PointSet& r : randoms) n_randoms += r.size();
    check_reusable(*reuse.rr, "the saved RR", space, s, jackknife ? &J : nullptr, false, n_randoms);
  }

  using Clock = std::chrono::steady_clock;
  const auto lap = [](Clock::time_point& t) {
    const auto now = Clock::now();
    const double dt = std::chrono::duration<double>(now - t).count();
    t = now;
    return dt;
  };
  // Catalogue i + 1 is put into the engine's coordinates and labelled on a host thread while
  // catalogue i (the first: while the data's DD) is counted, when the counts run on a GPU (on the
  // CPU the two would only compete for the cores). Its times are then the task's own, overlapped
  // with the counts.
  struct Prepared {
    PointSet points;
    double t_prepare = 0, t_label = 0;
  };
  const auto prepare_one = [&](std::size_t i) {
    Prepared p;
    auto t = Clock::now();
    p.points = prepare(randoms[i]);
    p.t_prepare = lap(t);
    if (jackknife) p.points.set_regions(labeller->label(randoms[i], p.points, fmt::format("random catalogue {}", i + 1)));
    p.t_label = lap(t);
    return p;
  };
  const bool on_gpu = runs_on(counted, opt) != "cpu";
  const bool overlap = !randoms.empty() && on_gpu;
  out.overlapped = overlap;
  // On a GPU the counts run two at a time, each on its own streams (CUDA backend), so that one
  // run's host set-up, uploads and cell index overlap the other's kernel, and each kernel's tail
  // is filled by the other's. Not under MPI (a distributed run's collectives belong to one thread
  // at a time). Results are added in the order the runs were submitted, so the float64 sums are
  // those of one run at a time.
  const int depth = on_gpu && !opt.distribution ? kConcurrentCounts : 1;
  const int device = depth > 1 ? current_cuda_device() : -1;
  out.concurrent_counts = depth;
  RunOptions run_opt = opt;
  // The data catalogue is counted in DD and in every DR_i: uploaded and indexed once (ResidentSet).
  run_opt.resident = std::make_shared<const ResidentSet>(d);
  if (depth > 1 && opt.progress) {
    // One call at a time, and never backwards (each run reports its own 0 to 1).
    struct Shown {
      std::mutex m;
      double most = 0;
    };
    auto shown = std::make_shared<Shown>();
    run_opt.progress = [shown, p = opt.progress](double f) {
      std::lock_guard<std::mutex> lock(shown->m);
      shown->most = std::max(shown->most, f);
      p(shown->most);
    };
  }
  struct Job {
    std::future<Result> result;
    std::function<void(Result&&)> add;
  };
  std::deque<Job> inflight;
  const auto finish_front = [&] {
    Job j = std::move(inflight.front());
    inflight.pop_front();
    j.add(j.result.get());
  };
  // Counts a (with b: against b; shared: alive until the run ends) and hands the result to `add`.
  const auto submit = [&](std::shared_ptr<const PointSet> a, std::shared_ptr<const PointSet> b, Statistic t,
                          std::function<void(Result&&)> add) {
    t.traversal = b ? Traversal::Cross : Traversal::Auto;
    auto job = [a, b, t, &run_opt, device] {
      set_current_cuda_device(device);  // (a worker thread starts on device 0)
      return run(t, *a, b.get(), run_opt);
    };
    if (depth == 1) {
      add(job());
      return;
    }
    while (static_cast<int>(inflight.size()) >= depth) finish_front();
    inflight.push_back({std::async(std::launch::async, std::move(job)), std::move(add)});
  };
  const auto counts_begin = Clock::now();
  std::future<Prepared> next;
  if (overlap) next = std::async(std::launch::async, prepare_one, 0);
  // The data: shared with the runs (no copy: the pointer does not own it).
  const std::shared_ptr<const PointSet> data(&d, [](const PointSet*) {});
  {
    Statistic t = s;
    t.set_regions(static_cast<int>(R));
    submit(data, nullptr, t, [&](Result&& x) { out.dd = std::move(x); });
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
  const auto add = [&](const Result& x, std::vector<double>& c, std::vector<double>& wc, std::vector<std::uint64_t>& jc,
                       std::vector<double>& jwc) {
    for (std::size_t k = 0; k < nb; ++k) {
      c[k] += static_cast<double>(x.counts[k]);
      if (weighted) wc[k] += x.weighted[k];
    }
    if (jackknife)
      for (std::size_t t = 0; t < R * nb; ++t) {
        jc[t] += x.region_counts[t];
        if (weighted) jwc[t] += x.region_weighted[t];
      }
    out.dd.info.seconds += x.info.seconds;
    out.dd.info.pairs_evaluated += x.info.pairs_evaluated;
    out.dd.info.pairs_settled_fp64 += x.info.pairs_settled_fp64;
  };
  const auto add_dr = [&](Result&& x) { add(x, out.dr, out.wdr, J.dr, J.wdr); };
  const auto add_rr = [&](Result&& x) { add(x, out.rr, out.wrr, J.rr, J.wrr); };
  std::vector<std::shared_ptr<const PointSet>> prepared;
  prepared.reserve(randoms.size());
  std::size_t batch_first = 0;
  const auto flush_dr = [&](std::size_t upto) {
    // Join prepared[batch_first..upto) and count the data against them.
    const std::size_t first = batch_first;
    batch_first = upto;
    std::size_t n = 0;
    for (std::size_t q = first; q < upto; ++q) n += prepared[q]->size();
    if (first == upto) return;
    // One catalogue is counted as it is; several are joined first.
    std::shared_ptr<const PointSet> partners = prepared[first];
    if (upto - first > 1) {
      const auto t0 = std::chrono::steady_clock::now();
      auto joined = std::make_shared<PointSet>(d.dim(), n);
      bool all_weighted = true;
      for (std::size_t q = first; q < upto; ++q) all_weighted = all_weighted && prepared[q]->has_weights();
      std::vector<double> w(all_weighted ? n : 0);
      std::vector<std::int32_t> l(jackknife ? n : 0);
      std::size_t at = 0;
      for (std::size_t q = first; q < upto; ++q) {
        const PointSet& r = *prepared[q];
        const auto m = static_cast<std::int64_t>(r.size());
        // Threaded: serially, joining 10^7 points took ~0.2 s (more than their RR on the GPU).
        for (int dd = 0; dd < d.dim(); ++dd) {
          const double* src = r.coord(dd).data();
          double* dst = joined->coord(dd).data() + at;
#pragma omp parallel for schedule(static)
          for (std::int64_t k = 0; k < m; ++k) dst[k] = src[k];
        }
        if (all_weighted) std::copy(r.weights().begin(), r.weights().end(), w.begin() + static_cast<std::ptrdiff_t>(at));
        if (jackknife) std::copy(r.regions().begin(), r.regions().end(), l.begin() + static_cast<std::ptrdiff_t>(at));
        at += r.size();
      }
      if (all_weighted && n > 0) joined->set_weights(std::move(w));
      if (jackknife) joined->set_regions(std::move(l));
      partners = std::move(joined);
      out.t_join += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    // The catalogues' memory goes back when their runs end (the runs hold them).
    for (std::size_t q = first; q < upto; ++q) prepared[q].reset();
    submit(data, std::move(partners), counted, add_dr);
  };
  std::size_t batch_n = 0;
  for (std::size_t i = 0; i < randoms.size(); ++i) {
    Prepared p = overlap ? next.get() : prepare_one(i);
    if (overlap && i + 1 < randoms.size()) next = std::async(std::launch::async, prepare_one, i + 1);
    auto r = std::make_shared<const PointSet>(std::move(p.points));
    out.t_prepare += p.t_prepare;
    out.t_label += p.t_label;
    if (!reuse.rr) submit(r, nullptr, counted, add_rr);  // (may wait for a run in flight: not in t_sums)
    auto t = Clock::now();
    if (!reuse.rr) out.norm_rr += pair_norm(*r, nullptr, weighted);
    out.norm_dr += pair_norm(d, r.get(), weighted);
    out.n_randoms += r->size();
    if (jackknife) {
      const RegionSums rs(*r, R);
      for (std::size_t q = 0; q < R; ++q) {
        J.n_randoms[q] += static_cast<std::size_t>(rs.n[q]);
        J.norm_dr[q] += out.data_regions->size(q, weighted) * rs.size(q, weighted);
        if (!reuse.rr) J.norm_rr[q] += rs.auto_norm(q, weighted);
      }
    }
    out.t_sums += lap(t);
    if (batch_n > 0 && batch_n + r->size() > kBatchPoints) {
      flush_dr(prepared.size());
      batch_n = 0;
    }
    batch_n += r->size();
    prepared.push_back(std::move(r));
  }
  flush_dr(prepared.size());
  while (!inflight.empty()) finish_front();
  out.t_counts_wall = std::chrono::duration<double>(Clock::now() - counts_begin).count();
  if (reuse.rr) {
    // The random catalogues' RR normalisation comes with the counts, not from the catalogues.
    const SavedCounts& c = *reuse.rr;
    out.rr = c.rr;
    if (weighted) out.wrr = c.wrr;
    out.norm_rr = c.norm_rr;
    if (jackknife) {
      J.rr = c.jackknife->rr;
      if (weighted) J.wrr = c.jackknife->wrr;
      J.norm_rr = c.jackknife->norm_rr;
    }
  }
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

NormalisedCounts normalised(const CorrelationCounts& c, std::size_t k) {
  const bool w = c.weighted;
  return {(w ? c.dd.weighted[k] : static_cast<double>(c.dd.counts[k])) / c.norm_dd,
          (w ? c.wdr[k] : c.dr[k]) / c.norm_dr, (w ? c.wrr[k] : c.rr[k]) / c.norm_rr};
}

NormalisedCounts normalised_without(const CorrelationCounts& c, std::size_t r, std::size_t k) {
  const JackknifeResult& J = *c.jackknife;
  const std::size_t t = r * c.dr.size() + k;
  if (c.weighted)
    return {(c.dd.weighted[k] - J.wdd[t]) / J.norm_dd[r], (c.wdr[k] - J.wdr[t]) / J.norm_dr[r],
            (c.wrr[k] - J.wrr[t]) / J.norm_rr[r]};
  return {static_cast<double>(c.dd.counts[k] - J.dd[t]) / J.norm_dd[r],
          (c.dr[k] - static_cast<double>(J.dr[t])) / J.norm_dr[r], (c.rr[k] - static_cast<double>(J.rr[t])) / J.norm_rr[r]};
}

std::vector<double> jackknife_samples(const CorrelationCounts& c, Estimator e) {
  // Leave-one-region-out: every count minus the region's T[r][k], every normalisation without
  // the region's points; the counts of the whole sample are never recounted.
  const std::size_t R = c.jackknife->regions, nb = c.dr.size();
  std::vector<double> x(R * nb);
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t k = 0; k < nb; ++k) {
      const NormalisedCounts n = normalised_without(c, r, k);
      x[r * nb + k] = estimate(e, n.dd, n.dr, n.rr);
    }
  return x;
}

AnalyticEstimate analytic_box_estimate(CorrelationCounts& c, const PointSet& data, const std::vector<double>& volume,
                                       double box_volume, bool weighted) {
  const std::size_t nb = volume.size();
  double wsum = 0;
  for (double x : data.weights()) wsum += x;
  AnalyticEstimate e;
  e.pairs = analytic_pairs(static_cast<double>(data.size()), wsum, weighted);
  e.rr.resize(nb);
  e.xi.resize(nb);
  for (std::size_t k = 0; k < nb; ++k) {
    e.rr[k] = e.pairs * volume[k] / box_volume;
    const double dd = weighted ? c.dd.weighted[k] : static_cast<double>(c.dd.counts[k]);
    e.xi[k] = e.rr[k] > 0 ? dd / e.rr[k] - 1 : std::nan("");
  }
  if (c.jackknife) {
    JackknifeResult& J = *c.jackknife;
    const RegionSums& ds = *c.data_regions;
    J.dr.clear();
    J.rr.clear();
    J.wdr.clear();
    J.wrr.clear();
    J.norm_dr.clear();
    const std::size_t R = J.regions;
    e.samples.resize(R * nb);
    for (std::size_t r = 0; r < R; ++r) {
      J.norm_rr[r] = analytic_pairs(ds.size(r, false), ds.size(r, true), weighted);
      for (std::size_t k = 0; k < nb; ++k) {
        const std::size_t t = r * nb + k;
        const double dd = weighted ? c.dd.weighted[k] - J.wdd[t] : static_cast<double>(c.dd.counts[k] - J.dd[t]);
        const double rr_r = J.norm_rr[r] * volume[k] / box_volume;
        e.samples[t] = rr_r > 0 ? dd / rr_r - 1 : std::nan("");
      }
    }
  }
  return e;
}

}  // namespace detail

namespace {

// ξ in a periodic box without random catalogues: DD against the analytic RR of the box (Corrfunc's
// theory `xi`), with the 2-D estimators' jackknife (detail::analytic_box_estimate).
CorrelationResult analytic_box_correlation(detail::CorrelationCounts& c, const PointSet& data, const Binning& bins,
                                           const Box& box, bool weighted) {
  const std::size_t nb = bins.nbins();
  std::vector<double> volume(nb);
  for (std::size_t k = 0; k < nb; ++k) volume[k] = shell_volume(data.dim(), bins.lo(k), bins.hi(k));
  detail::AnalyticEstimate e = detail::analytic_box_estimate(c, data, volume, box.volume(), weighted);
  CorrelationResult out;
  out.binning = bins;
  out.norm_dd = c.norm_dd;
  out.norm_rr = e.pairs;
  out.analytic_rr = true;
  out.derived.push_back({weighted ? "wrr" : "rr", e.rr});
  out.derived.push_back({"xi", e.xi});
  if (c.jackknife) {
    JackknifeResult& J = *c.jackknife;
    J.estimator = Estimator::Natural;
    J.samples = std::move(e.samples);
    JackknifeSummary sum = jackknife_summary(J.samples, J.regions, nb);
    J.mean = std::move(sum.mean);
    J.sigma = std::move(sum.sigma);
    J.covariance = std::move(sum.covariance);
    out.jackknife = std::move(c.jackknife);
  }
  return out;
}

}  // namespace

CorrelationResult correlation(const PointSet& data, const std::vector<PointSet>& randoms, const Binning& bins,
                              CorrelationSpace space, const std::optional<Box>& box, bool weighted,
                              const RunOptions& opt, const JackknifeRequest& jk, const ReusedCounts& reuse) {
  detail::StatisticClock clock;
  if (space == CorrelationSpace::Box && !box) throw_config("a periodic correlation function needs the box");
  if (randoms.empty() && space != CorrelationSpace::Box)
    throw_config("a correlation function needs random catalogues (--randoms), or a periodic box (--box) for the "
                 "analytic random counts");
  if (randoms.empty() && reuse.rr)
    throw_config("a saved RR stands for random catalogues' RR: without random catalogues the RR is analytic "
                 "(give the random catalogues, or drop the saved RR)");
  Statistic s;
  s.metric = metric_of(space);
  if (box && space == CorrelationSpace::Box) s.box = *box;
  s.reduction = reduce::Histogram{bins, 0, opt.mean_separation};
  s.weighted = weighted;
  // Angles: unit vectors once per catalogue, not once per pair count.
  const auto prepare = [&](const PointSet& p) { return space == CorrelationSpace::Sky ? sky_to_unit_vectors(p) : p; };
  PointSet d = prepare(data);
  std::optional<detail::RegionLabeller> labeller;
  if (jk.use_labels || jk.regions != 0) {
    if (jk.sky_about_origin && space != CorrelationSpace::Open)
      throw_config("sky regions about an observer (survey mocks) are for open space only");
    // Mocks: patches of sky about the observer, as w(θ)'s (the nearest centre of a point needs
    // only its direction, so the Cartesian points are labelled as they are).
    const CorrelationSpace layout = jk.sky_about_origin ? CorrelationSpace::Sky : space;
    labeller = detail::make_labeller(jk, layout, box, data, jk.sky_about_origin ? detail::directions(d) : d, detail::pointers(randoms),
                                     reuse.rr);
    d.set_regions(labeller->label(data, d, "data"));
  }
  clock.data_ready();
  detail::CorrelationCounts c =
      detail::count_correlation(s, space, std::move(d), randoms, prepare, labeller ? &*labeller : nullptr, opt, reuse);

  const std::size_t nb = bins.nbins();
  if (randoms.empty()) {
    CorrelationResult out = analytic_box_correlation(c, data, bins, *box, weighted);
    out.raw = std::move(c.dd);
    add_mean_separation_columns(out);
    if (out.jackknife) {
      out.derived.push_back({"xi_jk_mean", out.jackknife->mean});
      out.derived.push_back({"xi_jk_sigma", out.jackknife->sigma});
    }
    clock.stamp(out.raw, &c);
    return out;
  }
  std::vector<double> nat(nb), dp(nb), ham(nb), ls(nb);
  for (std::size_t k = 0; k < nb; ++k) {
    const detail::NormalisedCounts n = detail::normalised(c, k);
    const Estimates e = estimate(n.dd, n.dr, n.rr);
    nat[k] = e.natural;
    dp[k] = e.davis_peebles;
    ham[k] = e.hamilton;
    ls[k] = e.landy_szalay;
  }
  CorrelationResult out;
  out.binning = bins;
  out.norm_dd = c.norm_dd;
  out.norm_dr = c.norm_dr;
  out.norm_rr = c.norm_rr;
  out.n_randoms = c.n_randoms;
  out.derived.push_back({"dr", c.dr});
  out.derived.push_back({"rr", c.rr});
  if (weighted) {
    out.derived.push_back({"wdr", c.wdr});
    out.derived.push_back({"wrr", c.wrr});
  }
  out.derived.push_back({"xi_natural", nat});
  out.derived.push_back({"xi_davis_peebles", dp});
  out.derived.push_back({"xi_hamilton", ham});
  out.derived.push_back({"xi_landy_szalay", ls});
  if (c.jackknife) {
    JackknifeResult& J = *c.jackknife;
    J.estimator = jk.estimator;
    J.samples = detail::jackknife_samples(c, jk.estimator);
    JackknifeSummary sum = jackknife_summary(J.samples, J.regions, nb);
    J.mean = std::move(sum.mean);
    J.sigma = std::move(sum.sigma);
    J.covariance = std::move(sum.covariance);
  }
  out.raw = std::move(c.dd);
  add_mean_separation_columns(out);
  if (c.jackknife) {
    out.derived.push_back({"xi_jk_mean", c.jackknife->mean});
    out.derived.push_back({"xi_jk_sigma", c.jackknife->sigma});
    out.jackknife = std::move(c.jackknife);
  }
  clock.stamp(out.raw, &c);
  return out;
}

}  // namespace twobody
