// The host's side of the GPU's lattice gather: lattice_tiles.hpp.
#include "twobody/detail/cuda/lattice_tiles.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "twobody/error.hpp"

namespace twobody::cuda {

std::vector<long long> tile_runs(const lattice::AxisBins& axis, long long shape, long long tiles) {
  std::vector<long long> out(static_cast<std::size_t>(tiles * kMaxRuns * 2), -1);
  std::vector<std::pair<std::int64_t, std::int64_t>> runs;
  for (long long t = 0; t < tiles; ++t) {
    const long long lo = t * kTile, hi = std::min(shape, lo + kTile) - 1;
    axis.runs_near(lo, hi, runs);
    if (runs.size() > static_cast<std::size_t>(kMaxRuns))
      throw Error(ErrorKind::Internal, "lattice gather: more runs of bins near a tile than one wrap gives");
    for (std::size_t r = 0; r < runs.size(); ++r) {
      out[static_cast<std::size_t>(t * kMaxRuns * 2) + 2 * r] = runs[r].first;
      out[static_cast<std::size_t>(t * kMaxRuns * 2) + 2 * r + 1] = runs[r].second;
    }
  }
  return out;
}

LatticeTraversal choose_lattice_traversal(const LatticePlan& plan, const lattice::PairScreen& screen) {
  LatticeTraversal t;
  const Lattice& L = plan.stat->lattice;
  const char* forced = std::getenv("TWOBODY_LATTICE_TRAVERSAL");  // gather | scatter (tests, benchmarks)
  const std::string force = forced ? forced : "";
  if (!force.empty() && force != "gather" && force != "scatter" && force != "auto")
    throw Error(ErrorKind::Config, "TWOBODY_LATTICE_TRAVERSAL=" + force + ": expected gather, scatter or auto");
  if (force == "gather") {
    t.why = "gather (TWOBODY_LATTICE_TRAVERSAL)";
    return t;
  }
  if (plan.stat->binning == LatticeBinning::Regular || !screen.on) {
    t.why = std::string("gather (scatter takes ") +
            (plan.stat->binning == LatticeBinning::Regular ? "compact bins" : "the float32 screen, off for this lattice") + ")";
    return t;
  }
  // The stencil: beyond sqrt(out_sq) along an axis the screen's square exceeds out_sq, so the pair
  // is Out whatever the other axes; the slack covers the float32 roundings of f − R and f + R.
  double ratio = 1;
  for (int k = 0; k < L.dim; ++k) {
    const double r = std::sqrt(static_cast<double>(screen.out_sq)) / static_cast<double>(screen.h[k]);
    t.stencil[k] = static_cast<float>(r * (1 + 0x1p-16) + 0x1p-16);
    const double w = std::floor(2 * static_cast<double>(t.stencil[k])) + 1;
    ratio *= w / (kTile + w - 1);
  }
  char text[200];
  std::snprintf(text, sizeof text, "a stencil of %.3g spacings either side: %.0f%% of gather's pairs", static_cast<double>(t.stencil[0]),
                100 * ratio);
  // A scattered pair costs a shared atomic beside its evaluation: scatter when it evaluates under a
  // quarter of gather's pairs (MRI 7%, CutCP 67%).
  t.scatter = force == "scatter" || ratio < 0.25;
  t.why = std::string(t.scatter ? "scatter (" : "gather (") + text + (force == "scatter" ? ", TWOBODY_LATTICE_TRAVERSAL)" : ")");
  return t;
}

RegularBins regular_bins(const lattice::Binned& bins, long long cap, double room, std::size_t free_bytes) {
  RegularBins r;
  const std::size_t nbins = bins.start.size() - 1;
  std::uint64_t deepest = 0;
  for (std::size_t b = 0; b < nbins; ++b) deepest = std::max<std::uint64_t>(deepest, bins.start[b + 1] - bins.start[b]);
  r.depth = cap > 0 ? static_cast<unsigned long long>(cap) : std::max<std::uint64_t>(deepest, 1);
  std::uint64_t kept = 0;
  for (std::size_t b = 0; b < nbins; ++b) kept += std::min<std::uint64_t>(bins.start[b + 1] - bins.start[b], r.depth);
  const double spill = static_cast<double>(bins.sources.size() - kept);
  const double bytes = (static_cast<double>(nbins) * static_cast<double>(r.depth) + spill) * sizeof(lattice::Source) +
                       static_cast<double>(nbins) * (sizeof(std::uint32_t) + sizeof(std::uint64_t));
  if (bytes > room) {
    char text[320];
    std::snprintf(text, sizeof text, "regular bins of depth %llu (the deepest bin holds %llu sources) need %.3g GB for %zu "
                  "bins beside the map, and the device has %.3g GB free: cap the depth (--bin-depth) or use compact bins",
                  r.depth, static_cast<unsigned long long>(deepest), bytes / 1e9, nbins, static_cast<double>(free_bytes) / 1e9);
    throw Error(ErrorKind::Resource, text);
  }
  lattice::Source pad{};
  for (int k = 0; k < 3; ++k) pad.x[k] = INFINITY;  // never within any cutoff: |inf − node| < C is false (and a wrap's NaN too)
  r.slots.assign(nbins * r.depth, pad);
  r.count.resize(nbins);
  r.spill_start.assign(nbins + 1, 0);
  for (std::size_t b = 0; b < nbins; ++b) {
    const std::uint64_t n = bins.start[b + 1] - bins.start[b], keep = std::min<std::uint64_t>(n, r.depth);
    std::copy_n(bins.sources.begin() + static_cast<std::ptrdiff_t>(bins.start[b]), keep, r.slots.begin() + static_cast<std::ptrdiff_t>(b * r.depth));
    r.count[b] = static_cast<std::uint32_t>(keep);
    r.spill.insert(r.spill.end(), bins.sources.begin() + static_cast<std::ptrdiff_t>(bins.start[b] + keep),
                   bins.sources.begin() + static_cast<std::ptrdiff_t>(bins.start[b + 1]));
    r.spill_start[b + 1] = r.spill.size();
  }
  return r;
}

}  // namespace twobody::cuda
