#pragma once
// A software model of the tensor cores' FP16 arithmetic for the Gram bounds' CPU tests
// (gram_bounds_test.cpp, gram_cosine_bounds_test.cpp): FP16 rounding to nearest with subnormals,
// exact products, each MMA's addends truncated to 22 bits of the largest and the sum rounded to
// float32 (the assumption exact/gram_bounds.hpp makes and the GPU suite measures).
#include <algorithm>
#include <cmath>
#include <vector>

namespace gram_model {

inline double fp16_round(double v) {
  if (v == 0) return 0;
  const double a = std::fabs(v);
  const double q = a < 0x1p-14 ? 0x1p-24 : std::ldexp(1.0, std::ilogb(a) - 10);
  return std::copysign(std::nearbyint(a / q) * q, v);
}

// The tensor cores' sum of the products, MMA by MMA (K products each) into a float32 accumulator;
// with `fold` F > 0, the accumulator restarts from 0 every F MMAs and each partial is added to a
// running float32 sum (the joins' tiles: exact::GramFormat::fold).
inline float mma_model_dot(const std::vector<double>& hi, const std::vector<double>& hj, int depth, int fold = 0) {
  float acc = 0, running = 0;
  bool folded = false;
  const std::size_t d = hi.size();
  for (std::size_t k0 = 0, mma = 0; k0 < d; k0 += static_cast<std::size_t>(depth), ++mma) {
    if (fold > 0 && mma > 0 && mma % static_cast<std::size_t>(fold) == 0) {
      running = folded ? running + acc : acc;
      folded = true;
      acc = 0;
    }
    std::vector<double> add{static_cast<double>(acc)};
    for (std::size_t k = k0; k < std::min(d, k0 + static_cast<std::size_t>(depth)); ++k) add.push_back(hi[k] * hj[k]);
    double m = 0;
    for (double a : add) m = std::max(m, std::fabs(a));
    if (m == 0) continue;
    const double q = std::ldexp(1.0, std::ilogb(m) - 22);
    double sum = 0;
    for (double a : add) sum += std::trunc(a / q) * q;  // exact: multiples of q, few bits
    acc = static_cast<float>(sum);
  }
  return folded ? running + acc : acc;
}

}  // namespace gram_model
