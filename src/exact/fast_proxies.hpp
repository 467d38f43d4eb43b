#pragma once
// float32 proxies of the built-in pair functions (see twobody/fast_path.hpp for the exactness
// argument), and the trait that pairs each pair function with its proxy and error model. Host and
// device share them, so the CPU tests check the error model on the very arithmetic the GPU runs.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>
#include <vector>

#include "twobody/points.hpp"

#include "twobody/detail/exact/fast_path.hpp"
#include "twobody/extend/pair_function.hpp"

namespace twobody {

template <int D>
struct SquaredDistanceProxy {
  TWOBODY_HD float operator()(const float* a, const float* b) const {
    float s = 0.f;
TWOBODY_UNROLL
    for (int d = 0; d < D; ++d) {
      const float dx = a[d] - b[d];
      s = fmaf(dx, dx, s);
    }
    return s;
  }
};

template <int D>
struct PeriodicSquaredDistanceProxy {
  float length[D];
  float half[D];
  TWOBODY_HD float operator()(const float* a, const float* b) const {
    float s = 0.f;
TWOBODY_UNROLL
    for (int d = 0; d < D; ++d) {
      float dx = a[d] - b[d];
      dx = dx > half[d] ? dx - length[d] : dx;
      dx = dx < -half[d] ? dx + length[d] : dx;
      s = fmaf(dx, dx, s);
    }
    return s;
  }
};

// chord² between unit vectors: monotone in θ and, unlike 1 − cos θ, resolved by float32 at small θ.
struct ChordProxy {
  TWOBODY_HD float operator()(const float* a, const float* b) const {
    const float dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    return fmaf(dz, dz, fmaf(dy, dy, dx * dx));
  }
};

// A pair function without a float32 proxy and error model (a user's functor): every band is
// infinite, so every pair is settled with the function itself in float64. Exact, and as fast as
// float64 and the partner loads allow; a user may specialise FastPath for a faster path.
struct SettleEverythingProxy {
  TWOBODY_HD float operator()(const float*, const float*) const { return 0.0f; }
};
struct UnboundedErrorModel {
  double proxy_of_key(double k) const { return k; }
  double d_of_proxy(double) const { return 0.0; }
  double bound(double) const { return HUGE_VAL; }
};

// FastPath<F>: the proxy, the error model, and whether coordinates may be shifted to their centre.
template <class F>
struct FastPath {
  using Proxy = SettleEverythingProxy;
  using Model = UnboundedErrorModel;
  static constexpr bool shift = false;
  static Proxy proxy(const F&) { return {}; }
};

template <int D>
struct FastPath<Euclidean<D>> {
  using Proxy = SquaredDistanceProxy<D>;
  using Model = DistanceErrorModel;
  static constexpr bool shift = true;
  static Proxy proxy(const Euclidean<D>&) { return {}; }
};

template <int D>
struct FastPath<PeriodicEuclidean<D>> {
  using Proxy = PeriodicSquaredDistanceProxy<D>;
  using Model = DistanceErrorModel;
  static constexpr bool shift = true;  // by a common L/2: differences and wraps are unchanged
  static Proxy proxy(const PeriodicEuclidean<D>& f) {
    Proxy p;
    for (int d = 0; d < D; ++d) {
      p.length[d] = static_cast<float>(f.length[d]);
      p.half[d] = static_cast<float>(f.half[d]);
    }
    return p;
  }
};

template <>
struct FastPath<AngularSeparation> {
  using Proxy = ChordProxy;
  using Model = ChordErrorModel;
  static constexpr bool shift = false;
  static Proxy proxy(const AngularSeparation&) { return {}; }
};

// The float32 view a fast kernel uses: coordinates shifted to the centre of the joint range of
// both sets (distances; angles are unit vectors and stay as they are), and the error model for
// the shifted data.
template <class F>
struct FastSetup {
  std::vector<double> shift;
  typename FastPath<F>::Model model{};
};

// `frame` holds every point of both sets (open space; a periodic box is its own frame).
template <class F>
FastSetup<F> make_fast_setup(const F& f, const Frame& frame) {
  constexpr int D = F::dim;
  FastSetup<F> fs;
  fs.shift.assign(D, 0.0);
  if constexpr (FastPath<F>::shift) {
    double M = 0, offset = 0;
    for (int d = 0; d < D; ++d) {
      // A periodic box holds every point in [0, L) (the planner checked): its centre and half side
      // bound the shifted coordinates without another pass over the points (~17 ms at 10^7).
      std::pair<double, double> range;
      if constexpr (std::is_same_v<F, PeriodicEuclidean<D>>) range = {0.0, f.length[d]};
      else range = {frame.lo[d], frame.hi[d]};
      const auto [lo, hi] = range;
      fs.shift[d] = 0.5 * (lo + hi);
      M = std::max({M, std::abs(hi - fs.shift[d]), std::abs(lo - fs.shift[d])});
      offset = std::max({offset, std::abs(lo), std::abs(hi)});
    }
    fs.model.dim = D;
    fs.model.M = M;
    fs.model.offset = offset;
    if constexpr (requires { f.length[0]; }) {
      for (int d = 0; d < D; ++d) fs.model.wrap = std::max(fs.model.wrap, f.length[d]);
    }
  }
  return fs;
}

// Whether make_fast_setup reads the frame (open-space distances), i.e. needs the points' range.
template <class F>
constexpr bool kFastSetupNeedsFrame = FastPath<F>::shift && !std::is_same_v<F, PeriodicEuclidean<F::dim>>;

template <class F>
FastSetup<F> make_fast_setup(const F& f, const PointSet& A, const PointSet& B) {
  Frame frame;
  frame.dim = F::dim;
  if constexpr (kFastSetupNeedsFrame<F>) frame = Frame::of(A, B);
  return make_fast_setup(f, frame);
}

}  // namespace twobody
