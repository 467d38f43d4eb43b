#include "twobody/statistic.hpp"

#include <fmt/format.h>

#include "twobody/detail/engine/overloaded.hpp"
#include "twobody/error.hpp"

namespace twobody {

namespace {

// A histogram's options (regions, mean separation) live on both histogram types; `refusal` says
// why another reduction has none ("{}": its kind).
template <class Visit>
void with_histogram(Statistic& s, fmt::format_string<const char*> refusal, Visit&& v) {
  if (auto* h = std::get_if<reduce::Histogram>(&s.reduction)) return v(*h);
  if (auto* h = std::get_if<reduce::Histogram2D>(&s.reduction)) return v(*h);
  throw_config(fmt::format(refusal, to_string(s.output())));
}

}  // namespace

OutputKind Statistic::output() const {
  return std::visit(Overloaded{[](const reduce::Count&) { return OutputKind::Reduction; },
                               [](const reduce::Histogram&) { return OutputKind::Histogram; },
                               [](const reduce::Histogram2D&) { return OutputKind::Histogram; },
                               [](const reduce::PairList&) { return OutputKind::PairList; },
                               [](const reduce::PerPoint&) { return OutputKind::PerPoint; },
                               [](const reduce::Matrix&) { return OutputKind::Matrix; },
                               [](const reduce::Nearest&) { return OutputKind::Nearest; },
                               [](const reduce::Sum&) { return OutputKind::Reduction; },
                               [](const reduce::PerPointValue&) { return OutputKind::PerPoint; },
                               [](const reduce::PointSums&) { return OutputKind::PerPoint; }},
                    reduction);
}

const Binning& Statistic::binning() const {
  static const Binning none;
  return std::visit(Overloaded{[](const reduce::Count& c) -> const Binning& { return c.range; },
                               [](const reduce::Histogram& h) -> const Binning& { return h.bins; },
                               [](const reduce::PairList& l) -> const Binning& { return l.range; },
                               [](const reduce::PerPoint& p) -> const Binning& { return p.range; },
                               [](const reduce::PointSums& p) -> const Binning& { return p.range; },
                               [](const auto&) -> const Binning& { return none; }},
                    reduction);
}

bool Statistic::includes_hi() const {
  return std::visit(Overloaded{[](const reduce::Count& c) { return c.include_hi; },
                               [](const reduce::PairList& l) { return l.include_hi; },
                               [](const reduce::PerPoint& p) { return p.include_hi; },
                               [](const auto&) { return false; }},
                    reduction);
}

const Binning2D& Statistic::binning2d() const {
  static const Binning2D none;
  const auto* h = std::get_if<reduce::Histogram2D>(&reduction);
  return h ? h->bins : none;
}

int Statistic::regions() const {
  if (const auto* h = std::get_if<reduce::Histogram>(&reduction)) return h->regions;
  if (const auto* h = std::get_if<reduce::Histogram2D>(&reduction)) return h->regions;
  return 0;
}

bool Statistic::mean_separation() const {
  if (const auto* h = std::get_if<reduce::Histogram>(&reduction)) return h->mean_separation;
  if (const auto* h = std::get_if<reduce::Histogram2D>(&reduction)) return h->mean_separation;
  return false;
}

void Statistic::set_regions(int regions) {
  // None is meaningful for every reduction.
  if (regions == 0 && !std::holds_alternative<reduce::Histogram>(reduction) && !is_2d()) return;
  with_histogram(*this, "jackknife regions are counted for histograms, not for a {}", [&](auto& h) { h.regions = regions; });
}

void Statistic::set_mean_separation(bool on) {
  if (!on && !std::holds_alternative<reduce::Histogram>(reduction) && !is_2d()) return;
  with_histogram(*this, "mean separations are summed per histogram bin, not for a {}", [&](auto& h) { h.mean_separation = on; });
}

}  // namespace twobody
