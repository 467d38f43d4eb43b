#include "twobody/binning.hpp"

#include <cmath>
#include <fmt/format.h>

#include "twobody/detail/engine/key_edges.hpp"
#include "twobody/error.hpp"
#include "twobody/statistic.hpp"

namespace twobody {

namespace {
void check_edges(const std::vector<double>& e, bool negative_ok) {
  if (e.size() < 2) throw_config("binning needs at least one bin (two edges)");
  for (std::size_t k = 0; k < e.size(); ++k) {
    if (!std::isfinite(e[k])) throw_config(fmt::format("bin edge {} is not finite", k));
    if (e[k] < 0 && !negative_ok) throw_config(fmt::format("bin edge {} is negative ({})", k, e[k]));
    if (k > 0 && !(e[k] > e[k - 1]))
      throw_config(fmt::format("bin edges must increase strictly: edge {} ({}) follows {}", k, e[k],
                               e[k - 1]));
  }
}

std::vector<double> linear_edges(double lo, double hi, std::size_t n) {
  if (n == 0) throw_config("the number of bins must be positive");
  if (!(hi > lo)) throw_config(fmt::format("rmax ({}) must exceed rmin ({})", hi, lo));
  std::vector<double> e(n + 1);
  // Each edge from lo and hi directly (not by accumulation), and the last is hi exactly.
  for (std::size_t k = 0; k <= n; ++k) e[k] = lo + (hi - lo) * static_cast<double>(k) / n;
  e[n] = hi;
  return e;
}
}  // namespace

Binning Binning::from_edges(std::vector<double> e) {
  check_edges(e, false);
  return Binning(std::move(e));
}

Binning Binning::of_values(std::vector<double> e) {
  check_edges(e, true);
  return Binning(std::move(e));
}

Binning Binning::linear(double lo, double hi, std::size_t n) { return from_edges(linear_edges(lo, hi, n)); }

Binning Binning::linear_values(double lo, double hi, std::size_t n) { return of_values(linear_edges(lo, hi, n)); }

Binning Binning::logarithmic(double lo, double hi, std::size_t n) {
  if (n == 0) throw_config("the number of bins must be positive");
  if (!(lo > 0)) throw_config(fmt::format("logarithmic bins need rmin > 0, not {}", lo));
  if (!(hi > lo)) throw_config(fmt::format("rmax ({}) must exceed rmin ({})", hi, lo));
  std::vector<double> e(n + 1);
  const double a = std::log10(lo), b = std::log10(hi);
  for (std::size_t k = 0; k <= n; ++k) e[k] = std::pow(10.0, a + (b - a) * static_cast<double>(k) / n);
  e[0] = lo;
  e[n] = hi;
  return from_edges(std::move(e));
}

KeyEdges KeyEdges::from_keys(std::vector<double> keys) {
  // Distances are compared squared (the key r²): an edge beyond ~1.3e154 squares to infinity, one
  // below ~1.5e-154 (but the first, 0) to zero, and either would merge bins silently.
  for (std::size_t k = 0; k < keys.size(); ++k)
    if (!std::isfinite(keys[k]))
      throw_config(fmt::format("bin edge {} is too large for the pair function: its key (for distances, the "
                               "square) overflows float64; rescale the data or the bins (distances up to 1e154)", k));
  for (std::size_t k = 1; k < keys.size(); ++k)
    if (keys[k] == 0.0 && keys[k - 1] == 0.0)
      throw_config(fmt::format("bin edges {} and {} are too small for the pair function: their keys (for "
                               "distances, the squares) underflow to zero; rescale the data or the bins (distances "
                               "down to 1e-154)", k - 1, k));
  for (std::size_t k = 1; k < keys.size(); ++k)
    if (!(keys[k] > keys[k - 1]))
      throw_config(fmt::format("bin edges {} and {} coincide after mapping to the pair function's "
                               "key (too close to tell apart in float64)", k - 1, k));
  KeyEdges e;
  e.nbins = static_cast<int>(keys.size()) - 1;
  std::size_t p = 1;
  e.steps = 0;
  while (p < keys.size()) {
    p *= 2;
    ++e.steps;
  }
  e.padded = std::move(keys);
  e.padded.resize(p, HUGE_VAL);
  return e;
}

const char* to_string(Metric m) {
  switch (m) {
    case Metric::Euclidean: return "euclidean";
    case Metric::Periodic: return "periodic";
    case Metric::Angular: return "angular";
    case Metric::Cosine: return "cosine";
  }
  return "?";
}

const char* to_string(OutputKind k) {
  switch (k) {
    case OutputKind::Reduction: return "reduction";
    case OutputKind::Histogram: return "histogram";
    case OutputKind::PairList: return "pair list";
    case OutputKind::Matrix: return "matrix";
    case OutputKind::PerPoint: return "per-point reduction";
    case OutputKind::Nearest: return "nearest-neighbour list";
  }
  return "?";
}

}  // namespace twobody
