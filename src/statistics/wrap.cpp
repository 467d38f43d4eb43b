#include <cmath>

#include "twobody/statistics.hpp"

namespace twobody {

void wrap_into_box(PointSet& p, const Box& box) {
  for (int d = 0; d < p.dim(); ++d) {
    const double L = box.length[d];
    for (double& x : p.coord(d)) {
      if (x >= 0.0 && x < L) continue;
      x -= L * std::floor(x / L);
      if (x >= L || x < 0.0) x = 0.0;  // -tiny wraps to L in rounding; L is the image of 0
    }
  }
}

}  // namespace twobody
