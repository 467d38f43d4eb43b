#pragma once
// float32 proxies of the built-in pair functions (see twobody/fast_path.hpp for the exactness
// argument), and the trait that pairs each pair function with its proxy and error model.
#include "twobody/fast_path.hpp"
#include "twobody/pair_function.hpp"

namespace twobody::cuda {

template <int D>
struct SquaredDistanceProxy {
  __device__ __forceinline__ float operator()(const float* a, const float* b) const {
    float s = 0.f;
#pragma unroll
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
  __device__ __forceinline__ float operator()(const float* a, const float* b) const {
    float s = 0.f;
#pragma unroll
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
  __device__ __forceinline__ float operator()(const float* a, const float* b) const {
    const float dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    return fmaf(dz, dz, fmaf(dy, dy, dx * dx));
  }
};

// FastPath<F>: the proxy, the error model, and whether coordinates may be shifted to their centre.
template <class F>
struct FastPath;

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

}  // namespace twobody::cuda
