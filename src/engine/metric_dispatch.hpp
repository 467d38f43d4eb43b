#pragma once
// Turns the run-time (metric, dimension) of a statistic into a compile-time pair function, so
// each backend instantiates its kernels once per metric and dimension and nowhere else.
#include <utility>

#include <fmt/format.h>

#include "twobody/error.hpp"
#include "twobody/extend/pair_function.hpp"
#include "twobody/statistic.hpp"

namespace twobody {

template <template <int> class Metric, class Visitor>
decltype(auto) visit_dimension(int dim, Visitor&& v, auto&&... args) {
  switch (dim) {
    case 1: return v(Metric<1>(args...));
    case 2: return v(Metric<2>(args...));
    case 3: return v(Metric<3>(args...));
    case 4: return v(Metric<4>(args...));
    case 5: return v(Metric<5>(args...));
    case 6: return v(Metric<6>(args...));
    case 7: return v(Metric<7>(args...));
    case 8: return v(Metric<8>(args...));
  }
  throw_config("unsupported dimension " + std::to_string(dim));
}

// Calls v(pair_function) with the pair function that `s` declares for `dim` coordinates.
template <class Visitor>
decltype(auto) visit_pair_function(const Statistic& s, int dim, Visitor&& v) {
  switch (s.metric) {
    case Metric::Euclidean: return visit_dimension<Euclidean>(dim, std::forward<Visitor>(v));
    case Metric::Periodic:
      // A triclinic cell is 3-D (Box); a box without tilts keeps the orthorhombic function.
      if (s.box.triclinic()) {
        if (dim != 3) throw_config(fmt::format("a triclinic cell takes 3-D points, not {}-D", dim));
        return v(PeriodicTriclinic(s.box));
      }
      return visit_dimension<PeriodicEuclidean>(dim, std::forward<Visitor>(v), s.box);
    case Metric::Angular: return v(AngularSeparation{});
    case Metric::Cosine: break;  // vectors only (the planner refuses it for points)
  }
  throw_config("unknown metric");
}

}  // namespace twobody
