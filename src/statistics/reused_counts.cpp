// Saved counts (an RR, a cross-correlation's R1R2) reused by a later run: they hold only for the
// setting they were counted in.
#include <fmt/format.h>

#include "twobody/detail/statistics/correlation_counts.hpp"
#include "twobody/error.hpp"

namespace twobody::detail {

namespace {

const char* space_name(CorrelationSpace s) {
  return s == CorrelationSpace::Box ? "box" : s == CorrelationSpace::Open ? "open" : "sky";
}

bool same_bins_2d(const Binning2D& a, const Binning2D& b) {
  return a.kind() == b.kind() && a.line_of_sight() == b.line_of_sight() && a.outer().edges() == b.outer().edges() &&
         a.inner().edges() == b.inner().edges();
}

}  // namespace

// Reused counts hold only for the setting they were counted in: a mismatch is a request error
// that names the first difference.
void check_reusable(const SavedCounts& c, const std::string& what, CorrelationSpace space, const Statistic& s,
                    const JackknifeResult* J, bool cross, std::size_t n_randoms, std::uint64_t randoms_hash) {
  const auto fail = [&](const std::string& why) {
    throw_config(fmt::format("{} cannot be reused: {}", what, why));
  };
  if (c.cross != cross)
    fail(c.cross ? "they are a cross-correlation's (R1R2), this run is an auto-correlation"
                 : "they are an auto-correlation's (RR), this run is a cross-correlation");
  if (c.space != space)
    fail(fmt::format("counted in {} space, this run is in {} space", space_name(c.space), space_name(space)));
  if (space == CorrelationSpace::Box) {
    const bool same = c.box && *c.box == s.box;
    if (!same) fail(fmt::format("counted in the box {}, this run's box is {}", c.box ? c.box->describe() : "?",
                                s.box.describe()));
  }
  if (c.weighted != s.weighted)
    fail(c.weighted ? "the counts are weighted, this run is not" : "the counts are unweighted, this run is weighted");
  if (c.n_randoms != n_randoms)
    fail(fmt::format("counted with {} random points, this run has {}", c.n_randoms, n_randoms));
  if (c.randoms_hash == 0)
    fail("the file does not say which random catalogues they were counted on (saved before twobody kept their "
         "content hash): count them again");
  if (c.randoms_hash != randoms_hash)
    fail(fmt::format("counted on other random catalogues of the same size (content hash {:016x}, this run's {:016x})",
                     c.randoms_hash, randoms_hash));
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

}  // namespace twobody::detail
