// The planner of statistics over vectors (twobody/vectors.hpp): what a run may ask of vectors,
// its range in key space, and the plan's text.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "twobody/detail/engine/memory.hpp"
#include "twobody/detail/engine/overloaded.hpp"
#include "twobody/detail/engine/planner.hpp"
#include "twobody/detail/engine/reductions.hpp"
#include "twobody/error.hpp"

namespace twobody {

namespace {

void check_sets(const Statistic& s, const VectorSet& a, const VectorSet* b) {
  const bool is_auto = s.traversal == Traversal::Auto;
  if (is_auto && b) throw_config("auto traversal takes one vector set; use cross for two");
  if (!is_auto && !b) throw_config("cross traversal needs a second vector set");
  if (a.empty()) throw_input("the vector set is empty");
  if (b && b->empty()) throw_input("the second vector set is empty");
  if (b && b->dim() != a.dim())
    throw_config(fmt::format("the two vector sets have {} and {} dimensions", a.dim(), b->dim()));
}

void check_statistic(const Statistic& s) {
  refuse_value_reductions(s);
  if (s.metric != Metric::Euclidean && s.metric != Metric::Cosine)
    throw_config(fmt::format("vectors take the euclidean or cosine metric, not {}", to_string(s.metric)));
  if (s.weighted) throw_config("vectors carry no weights: weighted statistics take points (twobody/points.hpp)");
  std::visit(Overloaded{[](const reduce::Histogram2D&) {
                          throw_config("2-D (r_p, pi) and (s, mu) bins take 3-D points, not vectors");
                        },
                        [](const reduce::Histogram& h) {
                          if (h.regions > 0) throw_config("jackknife regions take points (with labels), not vectors");
                          if (h.mean_separation) throw_config("mean separations per bin take points, not vectors");
                        },
                        [](const reduce::PointSums&) {
                          throw_config("forces take points (twobody/forces.hpp), not vectors");
                        },
                        [](const reduce::Nearest& n) {
                          if (n.k < 1) throw_config(fmt::format("k nearest neighbours need k >= 1, not {}", n.k));
                        },
                        [](const auto&) {}},
             s.reduction);
}

// A range's or bins' edges in key space: the square for distances; for the cosine distance the
// value itself, a first edge at or below 0 taken down to -1 (a key 1 - a.b of two equal rows may
// round an ulp below 0, and "from 0" means every pair closer than the next edge).
KeyEdges key_edges(const Statistic& s) {
  const Binning& bins = s.binning();
  if (bins.nbins() == 0) throw_config("the statistic has no bins");
  std::vector<double> keys;
  keys.reserve(bins.edges().size());
  for (double e : bins.edges()) {
    if (s.metric == Metric::Euclidean) {
      if (e < 0) throw_config(fmt::format("distance edges start at 0, not {}", e));
      keys.push_back(e * e);
    } else {
      keys.push_back(e);
    }
  }
  if (s.metric == Metric::Cosine && keys.front() <= 0) keys.front() = -1.0;
  if (s.includes_hi()) keys.back() = std::nextafter(keys.back(), HUGE_VAL);
  return KeyEdges::from_keys(std::move(keys));
}

}  // namespace

VectorPlan make_vector_plan(const Statistic& s, const VectorSet& a, const VectorSet* b, const RunOptions& opt) {
  check_statistic(s);
  check_sets(s, a, b);
  const VectorSet& bb = b ? *b : a;
  const bool is_auto = s.traversal == Traversal::Auto;
  VectorPlan p;
  p.stat = &s;
  p.a = &a;
  p.b = &bb;
  p.threads = run_threads(opt);
  if (opt.precision != "auto" && opt.precision != "fp16" && opt.precision != "fp64")
    throw_config(fmt::format("unknown precision '{}' (auto, fp16 or fp64)", opt.precision));
  p.precision = opt.precision;
  if (opt.path != "auto" && opt.path != "brute" && opt.path != "grid")
    throw_config(fmt::format("unknown traversal path '{}' (auto, brute or grid)", opt.path));
  p.path = opt.path;
  p.max_pairs = opt.max_pairs;
  p.pair_sink = opt.pair_sink;
  p.progress = opt.progress;
  p.band = {0, a.size()};
  const OutputKind out = s.output();
  if (out == OutputKind::Nearest) {
    p.k = std::get<reduce::Nearest>(s.reduction).k;
    const std::size_t candidates = is_auto ? a.size() - 1 : bb.size();
    if (static_cast<std::size_t>(p.k) > candidates)
      throw_config(fmt::format("k = {} nearest neighbours, but a vector has only {} candidate{} ({})", p.k, candidates,
                               candidates == 1 ? "" : "s",
                               is_auto ? "the set's other vectors" : "the second set's vectors"));
    require_memory(24.0 * static_cast<double>(a.size()) * p.k,
                   fmt::format("{} nearest neighbours of {} vectors", p.k, a.size()));
  } else if (out == OutputKind::Matrix) {
    require_memory(8.0 * static_cast<double>(a.size()) * static_cast<double>(bb.size()),
                   fmt::format("a {} x {} matrix", a.size(), bb.size()));
  } else {
    p.edges = key_edges(s);
  }
  const std::string value = s.metric == Metric::Euclidean ? "distance" : "cosine distance";
  const std::string range =
      out == OutputKind::Nearest || out == OutputKind::Matrix
          ? std::string()
          : fmt::format(" [{}, {}{}", s.binning().lo(), s.binning().hi(), s.includes_hi() ? "]" : ")");
  p.explanation = fmt::format(
      "vectors: {} x {} of dimension {} ({}{}), {} (float64 rule: {})\n"
      "traversal {}: {} distinct pairs\noutput: {}{}",
      a.size(), bb.size(), a.dim(), to_string(a.element()), b && b->element() != a.element() ? std::string(" and ") + to_string(b->element()) : "",
      value,
      s.metric == Metric::Euclidean ? "key = sum over k of (a_k - b_k)^2 in stored order, no FMA; distance sqrt(key)"
                                    : "rows normalised in float64, key = 1 - sum over k of a_k b_k in stored order",
      is_auto ? "auto (each unordered pair once)" : "cross (every (i, j))", pair_total(a.size(), bb.size(), is_auto),
      to_string(out),
      out == OutputKind::Nearest
          ? fmt::format(": the {} nearest partners of every vector of the first set, by (key, index){}", p.k,
                        is_auto ? ", itself excluded" : "")
      : out == OutputKind::Matrix ? fmt::format(": every pair's {}", value)
      : out == OutputKind::PerPoint
          ? fmt::format(": for every vector, its partners with {} in{}", value, range)
          : fmt::format(" of the pairs with {} in{}", value, range));
  return p;
}

}  // namespace twobody
