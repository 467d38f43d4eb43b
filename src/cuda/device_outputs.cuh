#pragma once
// The device arrays a pair run reduces into (counts, weighted sums, jackknife region counts, mean
// separation sums, per-point arrays) and the tables the kernels read (key edges, guard bands, the
// bin table): allocated and zeroed for the problem, bound to the kernels' arguments, and read back
// into a Result in the callers' point order. Floating sums are exact sums (Result::exact, read
// back as they are; the engine rounds them into the float64 sums).
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "twobody/detail/cuda/agent_choice.hpp"
#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/cuda/grid_index.cuh"
#include "twobody/detail/cuda/pair_output.cuh"
#include "twobody/error.hpp"
#include "twobody/result.hpp"

namespace twobody::cuda {

// Where the traversal's point k came from (a grid's cell order, downloaded when asked); empty
// (null) when the traversal kept the callers' order.
using DeviceSortedOrder = std::function<std::vector<std::uint32_t>()>;

struct DeviceOutputs {
  DeviceBuffer<double> edges64;
  DeviceBuffer<BandPair> bands;
  DeviceBuffer<std::uint16_t> cells;
  DeviceBuffer<unsigned long long> counts;
  DeviceBuffer<DeviceFixedSum> wsums;
  DeviceBuffer<unsigned long long> counters;  // pairs settled in float64, the next work item
  DeviceBuffer<unsigned long long> evaluations;
  DeviceBuffer<DeviceFixedSum> sep_sums, log_sep_sums;
  DeviceBuffer<unsigned long long> region_counts;
  DeviceBuffer<DeviceFixedSum> region_wsums;
  DeviceBuffer<unsigned long long> point_counts_a, point_counts_b;
  DeviceBuffer<DeviceFixedSum> point_wsums_a, point_wsums_b;
  // Forces: D + 1 sums a point, the run's energy and virial, the too-close record.
  DeviceBuffer<DeviceWideSum> point_sums_a, point_sums_b, totals;
  DeviceBuffer<unsigned long long> too_close;

  // `edges`: the key edges the float64 rule bins by (nkeys + 1 of them).
  DeviceOutputs(const PairProblem& p, const std::vector<double>& edges, int nkeys, const GuardTable& table)
      : edges64(std::vector<double>(edges.begin(), edges.begin() + nkeys + 1)),
        bands(table.bands),
        cells(table.cells),
        counts(hist(p) ? p.nbins : 1),
        wsums(hist(p) ? p.nbins : 1),
        counters(2),
        evaluations(1),
        sep_sums(p.means ? p.nbins : 0),
        log_sep_sums(p.means ? p.nbins : 0),
        region_counts(std::size_t(p.regions) * p.nbins),
        region_wsums(p.weighted ? std::size_t(p.regions) * p.nbins : 0),
        point_counts_a(per_point(p) || forces(p) ? p.n_a : 0),
        point_counts_b((per_point(p) || forces(p)) && !p.is_auto ? p.n_b : 0),
        point_wsums_a(per_point(p) && p.weighted ? p.n_a : 0),
        point_wsums_b(per_point(p) && p.weighted && !p.is_auto ? p.n_b : 0),
        point_sums_a(forces(p) ? p.n_a * static_cast<std::size_t>(p.dim + 1) : 0),
        point_sums_b(forces(p) && !p.is_auto ? p.n_b * static_cast<std::size_t>(p.dim + 1) : 0),
        totals(forces(p) ? 2 : 0),
        too_close(forces(p) ? 4 : 0) {
    for (auto* b : {&counts, &evaluations, &region_counts, &point_counts_a, &point_counts_b, &too_close}) b->zero();
    for (auto* b : {&wsums, &sep_sums, &log_sep_sums, &region_wsums, &point_wsums_a, &point_wsums_b}) b->zero();
    for (auto* b : {&point_sums_a, &point_sums_b, &totals}) b->zero();
  }

  template <class Args>
  void bind(Args& args, const PairProblem& p) {
    args.pair_grid = DeviceSumGrid(p.grids.pair_weight);
    args.point_grid = DeviceSumGrid(p.grids.point_weight);
    args.sep_grid = DeviceSumGrid(p.grids.separation);
    args.log_grid = DeviceSumGrid(p.grids.log_separation);
    args.edges64 = edges64.get();
    args.bands = bands.get();
    args.cells = cells.get();
    args.counts = counts.get();
    args.wsums = wsums.get();
    args.sep_sums = sep_sums.get();
    args.log_sep_sums = log_sep_sums.get();
    args.settled = counters.get();
    args.next_item = counters.get() + 1;
    if (p.regions > 0) {
      args.regions = p.regions;
      args.region_counts = region_counts.get();
      args.region_wsums = region_wsums.get();
    }
    if (per_point(p) || forces(p)) {
      args.point_counts_a = point_counts_a.get();
      args.point_counts_b = p.is_auto ? point_counts_a.get() : point_counts_b.get();
      args.point_wsums_a = point_wsums_a.get();
      args.point_wsums_b = p.is_auto ? point_wsums_a.get() : point_wsums_b.get();
    }
    if (forces(p)) {
      args.forces.sums_a = point_sums_a.get();
      args.forces.sums_b = p.is_auto ? point_sums_a.get() : point_sums_b.get();
      args.forces.totals = totals.get();
      args.forces.too_close = too_close.get();
    }
  }

  // The reductions into `r`. `order_a`, `order_b`: where the traversal's point k came from (the
  // grid's cell order), or null.
  void collect(Result& r, const PairProblem& p, const DeviceSortedOrder& order_a, const DeviceSortedOrder& order_b) const {
    if (forces(p)) {
      check_too_close(p, order_a, order_b);
      const auto oa = order_a ? order_a() : std::vector<std::uint32_t>{};
      take_point_sums(point_counts_a, point_sums_a, oa, p.dim + 1, r.per_point_a, r.exact.point_sums_a);
      if (!p.is_auto) {
        const auto ob = order_b ? order_b() : std::vector<std::uint32_t>{};
        take_point_sums(point_counts_b, point_sums_b, ob, p.dim + 1, r.per_point_b, r.exact.point_sums_b);
      }
      const auto t = totals.download();
      r.exact.totals = {as_wide(t[0]), as_wide(t[1])};
      return;
    }
    if (per_point(p)) {
      take_points(point_counts_a, point_wsums_a, order_a, r.per_point_a, r.exact.point_weighted_a);
      if (!p.is_auto) take_points(point_counts_b, point_wsums_b, order_b, r.per_point_b, r.exact.point_weighted_b);
      return;
    }
    if (p.mode == OutputMode::PairList) return;
    const auto c = counts.download();
    r.counts.assign(c.begin(), c.end());
    if (p.weighted) take_sums(wsums, r.weighted, r.exact.weighted);
    if (p.means) {
      take_sums(sep_sums, r.separation_sum, r.exact.separation_sum);
      take_sums(log_sep_sums, r.log_separation_sum, r.exact.log_separation_sum);
    }
    if (p.regions > 0) {
      r.regions = static_cast<std::size_t>(p.regions);
      const auto rc = region_counts.download();
      r.region_counts.assign(rc.begin(), rc.end());
      if (p.weighted) take_sums(region_wsums, r.region_weighted, r.exact.region_weighted);
    }
  }

 private:
  static bool hist(const PairProblem& p) { return p.mode == OutputMode::Histogram; }
  static bool per_point(const PairProblem& p) { return p.mode == OutputMode::PerPoint; }
  static bool forces(const PairProblem& p) { return p.mode == OutputMode::PointSums; }

  static WideSum as_wide(const DeviceWideSum& d) {
    WideSum w;
    w.lo = (static_cast<UFixedSum>(d.w[1]) << 64) | d.w[0];
    w.hi = static_cast<std::int64_t>(d.w[2]);
    return w;
  }
  // Forces: the counts and the D + 1 sums a point back to the callers' order (`order`: where the
  // traversal's point k came from; empty: its own).
  static void take_point_sums(const DeviceBuffer<unsigned long long>& c, const DeviceBuffer<DeviceWideSum>& s,
                              const std::vector<std::uint32_t>& order, int cols, PointReductions& out,
                              std::vector<WideSum>& exact) {
    const auto counts = c.download();
    const auto sums = s.download();
    const std::size_t n = counts.size(), w = static_cast<std::size_t>(cols);
    out.counts.assign(n, 0);
    out.components = w;
    exact.assign(n * w, WideSum{});
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t to = order.empty() ? k : order[k];
      out.counts[to] = counts[k];
      for (std::size_t q = 0; q < w; ++q) exact[to * w + q] = as_wide(sums[k * w + q]);
    }
  }
  // A pair closer than the closest separation the grids were fixed for: refused, as on the CPU,
  // with the points in the callers' numbering.
  void check_too_close(const PairProblem& p, const DeviceSortedOrder& order_a, const DeviceSortedOrder& order_b) const {
    const auto c = too_close.download();
    if (c.empty() || c[0] == 0) return;
    std::size_t i = c[1], j = c[2];
    if (order_a) i = order_a()[i];
    if (p.is_auto) {
      if (order_a) j = order_a()[j];
    } else if (order_b) {
      j = order_b()[j];
    }
    if (p.is_auto && i > j) std::swap(i, j);
    double r2 = 0;
    std::memcpy(&r2, &c[3], sizeof r2);
    char text[256];
    if (r2 == 0)
      std::snprintf(text, sizeof text, "points %zu and %zu coincide: the force between them is infinite (remove duplicates)",
                    i + 1, j + 1);
    else
      std::snprintf(text, sizeof text, "points %zu and %zu are %.17g apart, closer than the closest separation the sums' "
                    "grid was fixed for", i + 1, j + 1, std::sqrt(r2));
    throw Error(ErrorKind::Input, text);
  }

  static FixedSum as_fixed(const DeviceFixedSum& d) {
    FixedSum f;
    std::memcpy(&f, &d, sizeof f);
    return f;
  }
  // Exact sums read back (their float64 values sized, to be rounded by the engine).
  static void take_sums(const DeviceBuffer<DeviceFixedSum>& d, std::vector<double>& values, std::vector<FixedSum>& exact) {
    const auto v = d.download();
    exact.resize(v.size());
    for (std::size_t k = 0; k < v.size(); ++k) exact[k] = as_fixed(v[k]);
    values.assign(v.size(), 0.0);
  }
  // Per-point arrays back to the callers' point order.
  static void take_points(const DeviceBuffer<unsigned long long>& c, const DeviceBuffer<DeviceFixedSum>& w,
                          const DeviceSortedOrder& sorted, PointReductions& out, std::vector<FixedSum>& exact) {
    const auto counts = c.download();
    const auto wsums = w.download();
    const auto order = sorted ? sorted() : std::vector<std::uint32_t>{};
    out.counts.assign(counts.size(), 0);
    out.weighted.assign(wsums.size(), 0.0);
    exact.assign(wsums.size(), 0);
    for (std::size_t k = 0; k < counts.size(); ++k) {
      const std::size_t to = order.empty() ? k : order[k];
      out.counts[to] = counts[k];
      if (!wsums.empty()) exact[to] = as_fixed(wsums[k]);
    }
  }
};

}  // namespace twobody::cuda
