// Saved correlation counts: what a correlation run's result holds that a later run can reuse (RR);
// the file format is src/io/saved_counts_file.cpp.
#include <fmt/format.h>

#include <algorithm>

#include "twobody/clustering2d.hpp"
#include "twobody/correlation.hpp"
#include "twobody/error.hpp"

namespace twobody {

namespace {

const std::vector<double>& column(const std::vector<NamedColumn>& derived, const std::string& name) {
  for (const auto& c : derived)
    if (c.name == name) return c.values;
  throw_config(fmt::format("the correlation result has no column '{}'", name));
}

// What a CorrelationResult and a Binned2DResult (with random catalogues) have alike: the counts,
// their normalisations and the jackknife's region counts.
// A cross-correlation's (columns d1r2, r1d2, r1r2) are D1D2, ΣD1R2, ΣR1D2 and ΣR1R2.
template <class CorrelationLike>
SavedCounts counts_of(const CorrelationLike& r, CorrelationSpace space, const std::optional<Box>& box, bool weighted) {
  SavedCounts c;
  c.cross = std::any_of(r.derived.begin(), r.derived.end(), [](const NamedColumn& x) { return x.name == "d1r2"; });
  c.space = space;
  if (space == CorrelationSpace::Box) c.box = box;
  c.weighted = weighted;
  c.n_data = r.raw.info.n_a;
  if (c.cross) c.n_data2 = r.raw.info.n_b;
  c.n_randoms = r.n_randoms;
  c.randoms_hash = r.randoms_hash;
  c.norm_dd = r.norm_dd;
  c.norm_dr = r.norm_dr;
  c.norm_rr = r.norm_rr;
  c.dd = r.raw.counts;
  c.dr = column(r.derived, c.cross ? "d1r2" : "dr");
  c.rr = column(r.derived, c.cross ? "r1r2" : "rr");
  if (c.cross) {
    c.rd = column(r.derived, "r1d2");
    c.norm_rd = r.norm_rd;
  }
  if (weighted) {
    c.wdd = r.raw.weighted;
    c.wdr = column(r.derived, c.cross ? "wd1r2" : "wdr");
    c.wrr = column(r.derived, c.cross ? "wr1r2" : "wrr");
    if (c.cross) c.wrd = column(r.derived, "wr1d2");
  }
  if (r.jackknife) {
    JackknifeResult j = *r.jackknife;
    j.samples.clear();
    j.mean.clear();
    j.sigma.clear();
    j.covariance.clear();
    c.jackknife = std::move(j);
  }
  return c;
}

}  // namespace

SavedCounts saved_counts(const CorrelationResult& r, CorrelationSpace space, const std::optional<Box>& box,
                         bool weighted) {
  if (r.analytic_rr)
    throw_config("the analytic RR is not counted: save the counts of a run with random catalogues");
  SavedCounts c = counts_of(r, space, box, weighted);
  c.binning = r.binning;
  return c;
}

SavedCounts saved_counts(const Binned2DResult& r, const std::optional<Box>& box, bool weighted) {
  if (r.analytic_rr)
    throw_config("the analytic RR is not counted: save the counts of a run with random catalogues");
  SavedCounts c = counts_of(r, box ? CorrelationSpace::Box : CorrelationSpace::Open, box, weighted);
  c.binning2d = r.binning;
  return c;
}

}  // namespace twobody
