#pragma once
// reduce::PointSums on the GPU (short-range forces, twobody/forces.hpp): the CPU's PointSumsRows
// (cpu/point_sums.hpp) pair for pair. A pair in range (the range's float32 verdict, settled in
// float64 in its bands, as every reduction) has its displacement d = x_i − x_j (the minimum image
// by the metric's own operations) and r² recomputed in float64 in coordinate order, its energy and
// force factor from twobody/pair_force.hpp, and each term put on its grid by the one rounding of
// SumGrid::steps: (F·d_k) to i and −(F·d_k) to j, E/2 to both, E/2 twice to the run's energy and
// F·r² once to its virial. A term of 2^63 steps or more (a close contact's) is added as the exact
// 192-bit integer WideSum::of_integer makes of it. Sums are 192-bit integers (three 64-bit words,
// two's complement, added by atomics with their carries), so they are the CPU's whatever the order.
//
// AnchorSlots 1 (the grid agent: one anchor a lane until flush_anchors): the anchor's partners and
// its ordinary terms in registers; otherwise (the brute-force tiles' eight anchors a thread) every
// term goes to the global arrays at once.
#include "twobody/detail/cuda/output/output_common.cuh"

namespace twobody::cuda {

// v (an integer-valued double, |v| ≥ 2^63 allowed) as a 192-bit two's complement integer: the
// value WideSum::of_integer gives on the host.
__device__ __forceinline__ void wide_words(double v, unsigned long long (&w)[3]) {
  w[0] = w[1] = w[2] = 0;
  const double m = fabs(v);
  if (m < 0x1p63) {
    const unsigned long long u = static_cast<unsigned long long>(m);
    w[0] = u;
  } else {
    int e = 0;
    const double f = frexp(m, &e);  // m = f·2^e, f in [1/2, 1), e ≥ 64
    const unsigned long long mant = static_cast<unsigned long long>(ldexp(f, 53));  // 53 bits
    const int shift = e - 53;                                                       // ≥ 11, ≤ 139 (|v| < 2^192)
    const int word = shift / 64, bit = shift % 64;
    w[word] = mant << bit;
    if (bit > 0 && word + 1 < 3) w[word + 1] = mant >> (64 - bit);
  }
  if (v < 0) {  // two's complement: invert, add one
    w[0] = ~w[0];
    w[1] = ~w[1];
    w[2] = ~w[2];
    if (++w[0] == 0 && ++w[1] == 0) ++w[2];
  }
}

// *s += (w2·2^128 + w1·2^64 + w0): each word's carry, seen in the value its atomic returns, goes to
// the next (as add_sum does with two).
__device__ __forceinline__ void add_wide(DeviceWideSum* s, unsigned long long w0, unsigned long long w1, unsigned long long w2) {
  unsigned long long carry = 0;
  if (w0) {
    const unsigned long long old = atomicAdd(&s->w[0], w0);
    carry = old + w0 < old ? 1ull : 0ull;
  }
  const unsigned long long add1 = w1 + carry;
  unsigned long long carry2 = add1 < w1 ? 1ull : 0ull;  // w1 = 2^64 − 1 with a carry: 0, carried on
  if (add1) {
    const unsigned long long old = atomicAdd(&s->w[1], add1);
    carry2 += old + add1 < old ? 1ull : 0ull;
  }
  const unsigned long long add2 = w2 + carry2;
  if (add2) atomicAdd(&s->w[2], add2);
}
__device__ __forceinline__ void add_wide(DeviceWideSum* s, long long v) {
  const unsigned long long sign = v < 0 ? ~0ull : 0ull;
  add_wide(s, static_cast<unsigned long long>(v), sign, sign);
}
__device__ __forceinline__ void add_wide(DeviceWideSum* s, __int128 v) {
  const unsigned long long hi = static_cast<unsigned long long>(static_cast<unsigned __int128>(v) >> 64);
  add_wide(s, static_cast<unsigned long long>(v), hi, v < 0 ? ~0ull : 0ull);
}

template <int D, bool Weighted, class Proxy, class Exact, int AnchorSlots>
struct PointSumsOutput : OutputCommon<PointSumsOutput<D, Weighted, Proxy, Exact, AnchorSlots>, D, Proxy, Exact> {
  using Common = OutputCommon<PointSumsOutput, D, Proxy, Exact>;
  using Common::args;
  static constexpr int kCols = D + 1;
  static constexpr bool kRegisters = AnchorSlots == 1;
  // The grid agent's anchor since its last flush: its partners and ordinary terms.
  unsigned a_count = 0;
  __int128 a_sum[kRegisters ? kCols : 1] = {};
  // This thread's ordinary terms of the run's energy and virial.
  __int128 energy = 0, virial = 0;

  __device__ PointSumsOutput(const PairKernelArgs<Proxy, Exact>& a, unsigned char*, int, int, int = 1)
      : Common(a, a.range_lo0) {}

  __device__ __forceinline__ int classify(float s) const { return this->classify_range(s); }
  __device__ __forceinline__ bool quick(float s, std::uint32_t i, std::uint32_t j, double wprod, int = -1) {
    return this->quick_range(s, i, j, wprod);
  }
  __device__ __forceinline__ void accept(int, std::uint32_t i, std::uint32_t j, double, int = -1) { add_pair(i, j); }

  __device__ void add_pair(std::uint32_t i, std::uint32_t j) {
    const PointSumsArgs& f = args.forces;
    double d[D], r2 = 0;
#pragma unroll
    for (int k = 0; k < D; ++k) {
      double dx = args.A.x64[k][i] - args.B.x64[k][j];
      if (f.periodic) {
        dx = dx > f.half[k] ? dx - f.length[k] : dx;
        dx = dx < -f.half[k] ? dx + f.length[k] : dx;
      }
      d[k] = dx;
      r2 += dx * dx;
    }
    if (r2 < f.closest2) {
      too_close(i, j, r2);
      return;
    }
    const double qq = Weighted ? args.A.w[i] * args.B.w[j] : 1.0;
    const PairTerm t = f.coulomb ? f.coulomb_terms(r2, qq) : f.lj_terms(r2, qq);
    DeviceWideSum* sj = f.sums_b + static_cast<std::size_t>(j) * kCols;
    DeviceWideSum* si = f.sums_a + static_cast<std::size_t>(i) * kCols;
#pragma unroll
    for (int k = 0; k < D; ++k) put(si, sj, k, f.force, t.f * d[k], true);
    put(si, sj, D, f.energy, 0.5 * t.energy, false);
    // The run's energy takes both halves, its virial d·F once.
    const double half_e = 0.5 * t.energy * f.energy.inverse_step * f.energy.inverse_step2;
    const double x = t.f * r2 * f.virial.inverse_step * f.virial.inverse_step2;
    if (fabs(half_e) < 0x1p63) {
      energy += 2 * static_cast<__int128>(__double2ll_rn(half_e));
    } else {
      add_integer(f.totals, rint(half_e), false);
      add_integer(f.totals, rint(half_e), false);
    }
    if (fabs(x) < 0x1p63) virial += __double2ll_rn(x);
    else add_integer(f.totals + 1, rint(x), false);
    atomicAdd(&args.point_counts_b[j], 1ull);
    if constexpr (kRegisters) ++a_count;
    else atomicAdd(&args.point_counts_a[i], 1ull);
  }

  // The grid agent's anchor: its count and sums to the global arrays, then cleared.
  __device__ __forceinline__ void flush_anchors(const std::uint32_t* anchors) {
    if constexpr (kRegisters) {
      if (a_count == 0) return;
      atomicAdd(&args.point_counts_a[anchors[0]], static_cast<unsigned long long>(a_count));
      a_count = 0;
      DeviceWideSum* si = args.forces.sums_a + static_cast<std::size_t>(anchors[0]) * kCols;
#pragma unroll
      for (int c = 0; c < kCols; ++c) {
        if (a_sum[c] != 0) add_wide(si + c, a_sum[c]);
        a_sum[c] = 0;
      }
    }
  }

  __device__ void finish(int tid) {
    Common::finish(tid);
    if (energy != 0) add_wide(args.forces.totals, energy);
    if (virial != 0) add_wide(args.forces.totals + 1, virial);
  }

 private:
  // A term on grid g to point i's column c and (negated when `opposite`) to j's.
  __device__ __forceinline__ void put(DeviceWideSum* si, DeviceWideSum* sj, int c, const DeviceSumGrid& g, double term,
                                      bool opposite) {
    const double x = term * g.inverse_step * g.inverse_step2;
    if (fabs(x) < 0x1p63) {
      const long long v = __double2ll_rn(x);
      if constexpr (kRegisters) a_sum[c] += v;
      else add_wide(si + c, v);
      add_wide(sj + c, opposite ? -v : v);
      return;
    }
    const double r = rint(x);  // a close contact's term: exact as three words
    add_integer(si + c, r, false);
    add_integer(sj + c, r, opposite);
  }
  __device__ __forceinline__ static void add_integer(DeviceWideSum* s, double r, bool negate) {
    unsigned long long w[3];
    wide_words(negate ? -r : r, w);
    add_wide(s, w[0], w[1], w[2]);
  }
  // The first pair found closer than the closest separation the grids were fixed for: the run is
  // refused with it (the host names the points).
  __device__ void too_close(std::uint32_t i, std::uint32_t j, double r2) {
    unsigned long long* c = args.forces.too_close;
    if (atomicCAS(c, 0ull, 1ull) == 0ull) {
      c[1] = i;
      c[2] = j;
      c[3] = static_cast<unsigned long long>(__double_as_longlong(r2));
    }
  }
};

}  // namespace twobody::cuda
