#pragma once
// The float32 fast path on the CPU, the host form of the CUDA backend's (fast_path.hpp,
// fast_proxies.hpp, cuda/pair_output.cuh): each pair's proxy is computed in float32 from
// coordinates shifted to the centre of the data, with the very proxy the GPU runs (FastPath<F>:
// the same operations, fmaf included, so fast_path_test's checks of the error model hold here),
// a row of partners at a time in a loop GCC vectorises; the pairs whose proxy can be in range go
// through the guard-band table, and those inside a band are settled in float64 by the binning
// rule. Counts equal the float64 ones.
#include <omp.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <bit>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "twobody/detail/engine/key_edges.hpp"
#include "twobody/detail/cpu/tiled_traversal.hpp"
#include "twobody/detail/exact/fast_proxies.hpp"

namespace twobody::cpu {

// A pair function has a fast path when FastPath<F> gives it a proxy with a finite error model;
// without one (a user's functor) every pair would be settled, and the float64 rows are faster.
template <class F>
inline constexpr bool has_fast_path = !std::is_same_v<typename FastPath<F>::Model, UnboundedErrorModel>;

// One point set's coordinates in float32, shifted (a copy in the traversal's order).
template <int D>
struct ShiftedFloats {
  std::vector<float> data;  // D x n
  const float* x[D > 0 ? D : 1];

  ShiftedFloats(const PointSet& p, const std::vector<double>& shift, int threads = 1) : data(std::size_t(D) * p.size()) {
    const auto n = static_cast<std::int64_t>(p.size());
    for (int d = 0; d < D; ++d) {
      const double* src = p.coord(d).data();
      float* dst = data.data() + std::size_t(d) * p.size();
      const double s = shift[d];
      // Threaded: serial, the copies were 0.08 s of a 10^7-point run's set-up.
#pragma omp parallel for num_threads(threads) schedule(static) if (n > 100000)
      for (std::int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i] - s);
      x[d] = dst;
    }
  }
};

// What every thread's rows share: the float32 copies, the guard-band table, the float64 edges.
template <class F>
struct FastRowsSetup {
  static constexpr int D = F::dim;
  const F& f;
  const KeyEdges& edges;
  FastSetup<F> setup;
  typename FastPath<F>::Proxy proxy;
  GuardTable table;
  ShiftedFloats<D> a32;
  std::unique_ptr<ShiftedFloats<D>> b32_owner;
  const ShiftedFloats<D>* b32;
  float lo0, top;  // a proxy outside [lo0, top) is certainly out of every bin
  struct alignas(64) Counter {
    std::uint64_t n = 0;
  };
  mutable std::vector<Counter> settled;  // per thread

  // A and B: the sets as traversed (B == A for auto); the shift is the centre of their joint range.
  FastRowsSetup(const F& fn, const KeyEdges& e, const PointSet& A, const PointSet& B, bool same, int threads)
      : f(fn), edges(e), setup(make_fast_setup(fn, A, B)), proxy(FastPath<F>::proxy(fn)),
        table(make_guard_table(make_guard_bands(e, setup.model), 16384)), a32(A, setup.shift, threads),
        b32_owner(same ? nullptr : std::make_unique<ShiftedFloats<D>>(B, setup.shift, threads)),
        b32(same ? &a32 : b32_owner.get()), lo0(table.lo0), top(table.bands[e.nbins].hi), settled(threads) {
    // The counting rows' table: make_guard_table's own table at 16384 cells, so that fewer pairs
    // land in a cell that holds a band, each entry turned into the first of its bin's
    // kCountCopies interleaved counters (outside: nbins, uncertain: nbins + 1; both discarded),
    // so that every pair indexes a counter without a branch.
    const GuardTable fine = make_guard_table(make_guard_bands(e, setup.model), 16384, 16384);
    const int nbins = e.nbins;
    count_base = fine.base_bits;
    count_top = fine.top_bits;
    count_shift = fine.shift;
    count_cells.resize(fine.cells.size());
    for (std::size_t c = 0; c < fine.cells.size(); ++c) {
      const int entry = (fine.cells[c] & kUncertain) ? nbins + 1 : static_cast<int>(fine.cells[c]);
      count_cells[c] = static_cast<std::uint16_t>(kCountCopies * static_cast<std::size_t>(entry));
    }
    uncertain_entry = static_cast<std::uint16_t>(kCountCopies * static_cast<std::size_t>(nbins + 1));
    for (int k = 0; k < kVecBins; ++k) {
      // Beyond the bins there are, an empty interval.
      vec_lo[k] = k < nbins ? table.bands[nbins - 1 - k].hi : 1.0f;
      vec_hi[k] = k < nbins ? table.bands[nbins - 1 - k].lo_next : 0.0f;
    }
  }
  // The counting rows' last kVecBins bins, each as the proxies certainly in it: [the top of its
  // lower edge's guard band, the bottom of its upper edge's). Most of the pairs a grid finds lie
  // there (the shell volume grows with r): uniform points, 20 log bins, 87 % in the last two.
  static constexpr int kVecBins = 2;
  float vec_lo[kVecBins] = {}, vec_hi[kVecBins] = {};
  static constexpr std::size_t kCountCopies = 4;
  // Counting rows serve histograms up to this many bins (their entries are 16-bit).
  static constexpr int kCountBins = 65535 / kCountCopies - 2;
  std::vector<std::uint16_t> count_cells;
  std::uint16_t uncertain_entry = 0;
  std::uint32_t count_base = 0, count_top = 0;  // the counting table's range of float bits
  int count_shift = 0;

  // Shifted coordinates small enough that no float32 proxy overflows (|dx| <= 2M, D <= 8 terms).
  bool usable() const {
    if constexpr (requires { setup.model.M; }) return setup.model.M < 1e18;
    return true;
  }
  std::uint64_t settled_total() const {
    std::uint64_t s = 0;
    for (const auto& c : settled) s += c.n;
    return s;
  }
};

// The table classifier takes bins as 15-bit cell entries (fast_path.hpp, kMaxTableBins).
inline bool fast_rows_fit(const KeyEdges& e) { return e.nbins <= kMaxTableBins; }

// One thread's fast rows: proxies and an in-range flag per partner in one vectorised loop, then
// only the flagged partners are classified, settled when in a band, and accepted.
template <class F, class Sink>
class FastRows {
  static constexpr int D = F::dim;

 public:
  FastRows(const FastRowsSetup<F>& s, const SoaView<D>& A64, const SoaView<D>& B64, std::size_t max_row, Sink& sink)
      : s_(s), A64_(A64), B64_(B64), prox_(max_row + 8), flag_(max_row + 32), sink_(sink),
        settled_(s.settled[omp_get_thread_num()].n) {
    if constexpr (requires { sink_.add_count(0, std::uint64_t(0)); }) {
      own_counts_ = !sink.weighted() && s.edges.nbins <= FastRowsSetup<F>::kCountBins;
#if defined(__AVX512F__)
      if (own_counts_) rest_.resize(max_row + 32);
#endif
      // The bins, outside and uncertain, kCopies interleaved counters each (count_cells).
      counts_.assign(own_counts_ ? kCopies * (std::size_t(s.edges.nbins) + 2) : 0, 0);
    }
  }

  // A row of a windowed grid block: in a periodic box its partners that can be in range are all
  // in the block's image, so the anchor moves into that image once (a32 - q·L in float32) and the
  // plain squared difference replaces the periodic one (2 vector operations a coordinate instead
  // of 6). Exact: per coordinate this rounds a32 - q·L and then the difference, |error| <=
  // u(3M + 2L + d), inside the periodic model's 3η + 4uL; a pair out of range in this image is out
  // of range in every image or lies in another block, and a pair in the top band is settled in
  // float64 with the minimum image as before.
  template <class Block>
  void operator()(std::size_t i, std::size_t j0, std::size_t j1, const Block& b) {
    if constexpr (requires { s_.proxy.length[0]; b.image[0]; }) {
      if (own_counts_) {
        float a[D];
        for (int d = 0; d < D; ++d) a[d] = s_.a32.x[d][i] - static_cast<float>(b.image[d]) * s_.proxy.length[d];
        return count_row(i, j0, j1, a, SquaredDistanceProxy<D>{});
      }
    }
    (*this)(i, j0, j1);
  }

  void operator()(std::size_t i, std::size_t j0, std::size_t j1) {
    if (own_counts_) {
      float a[D];
      for (int d = 0; d < D; ++d) a[d] = s_.a32.x[d][i];
      return count_row(i, j0, j1, a, s_.proxy);
    }
    const std::size_t n = j1 - j0;
    float a[D];
    for (int d = 0; d < D; ++d) a[d] = s_.a32.x[d][i];
    const float* bx[D];
    for (int d = 0; d < D; ++d) bx[d] = s_.b32->x[d] + j0;
    const auto proxy = s_.proxy;
    const float lo0 = s_.lo0, top = s_.top;
    float* __restrict prox = prox_.data();
    std::uint32_t* __restrict flag = flag_.data();
    // A plain loop: GCC vectorises it (8 lanes) with a run-time check that the outputs do not
    // overlap the inputs; `omp simd` would turn the coordinate arrays into per-lane arrays and
    // keep it scalar. Flags are 32-bit like the proxies: byte flags made the vectoriser take 32
    // lanes a step and run every row shorter than 31 partners (most grid rows) in scalar code.
    for (std::size_t t = 0; t < n; ++t) {
      float b[D];
      for (int d = 0; d < D; ++d) b[d] = bx[d][t];
      const float v = proxy(a, b);
      prox[t] = v;
      flag[t] = static_cast<std::uint32_t>((v >= lo0) & (v < top));
    }
    const GuardTable& g = s_.table;
    const int ncells = static_cast<int>(g.cells.size());
    const std::uint16_t* __restrict cells = g.cells.data();
    // The pair's float64 key, for the pairs the proxy cannot decide and for outputs that keep it.
    const auto key64_of = [this, i](std::size_t j) {
      return [this, i, j] {
        double a64[D], b64[D];
        for (int d = 0; d < D; ++d) {
          a64[d] = A64_.x[d][i];
          b64[d] = B64_.x[d][j];
        }
        return s_.f.key(a64, b64);
      };
    };
    // A pair whose table cell holds a band: walk the bands, and settle in float64 inside one.
    const auto settle = [&](std::size_t t) {
      int k = classify_table(g.bands.data(), cells, ncells, g.lo0, g.base_bits, g.shift, g.nbins, prox[t]);
      if (k == -2) {
        ++settled_;
        k = find_bin(s_.edges.padded.data(), s_.edges.nbins, s_.edges.steps, key64_of(j0 + t)());
      }
      return k;
    };
    const std::uint32_t base_bits = g.base_bits, top_bits = g.top_bits;
    const int shift = g.shift;
    const std::uint32_t nbins = static_cast<std::uint32_t>(g.nbins);
    // The flags of 64 partners into one mask (a vectorised loop), then one branch per flagged pair.
    for (std::size_t w = 0; w < n; w += 64) {
      const std::size_t len = std::min<std::size_t>(64, n - w);
      std::uint64_t m = 0;
      for (std::size_t l = 0; l < len; ++l) m |= std::uint64_t(flag[w + l]) << l;
      while (m) {
        const std::size_t t = w + std::countr_zero(m);
        m &= m - 1;
        // One table load decides most pairs; the cells that hold a band walk the bands.
        const std::uint32_t e = direct_lookup(cells, base_bits, top_bits, shift, prox[t]);
        if (!(e & kUncertain)) {
          if (e >= nbins) continue;
          sink_.accept(static_cast<int>(e), i, j0 + t, key64_of(j0 + t),
                       [this](double key) { return s_.f.natural_of(key); });
          continue;
        }
        const int k = settle(t);
        if (k < 0) continue;
        sink_.accept(k, i, j0 + t, key64_of(j0 + t), [this](double key) { return s_.f.natural_of(key); });
      }
    }
  }

#if defined(__AVX512F__)
  // Unweighted histograms with AVX-512: the pairs certainly in one of the last kVecBins bins are
  // counted in vector registers, 16 proxies at a time, and only the other pairs in range are
  // compressed (vcompressps) into a short list that indexes the counting table, kCopies
  // interleaved counters a bin as below. The pairs out of range (about half of those a grid
  // evaluates) and those of the last bins (most of the rest) cost no scalar work: on the 2-core
  // host, uniform 3·10^5 points, r < 100, one thread, 0.40 s against 0.55 s for the scalar
  // counting below (bench/RESULTS.md). Each compare into a mask register is one uop on one port,
  // which is why kVecBins stays small. The plain squared distance (windowed periodic rows, open
  // space) is computed in the same 16-lane loop, with the proxy's own operations.
  template <class Proxy>
  void count_row(std::size_t i, std::size_t j0, std::size_t j1, const float* anchor, Proxy proxy) {
    const std::size_t n = j1 - j0;
    float a[D];
    for (int d = 0; d < D; ++d) a[d] = anchor[d];
    const float* bx[D];
    for (int d = 0; d < D; ++d) bx[d] = s_.b32->x[d] + j0;
    float* __restrict prox = prox_.data();
    // ChordProxy is SquaredDistanceProxy<3> operation for operation (fmaf(dx, dx, 0) rounds dx·dx
    // once, as its first product does): the same bits.
    constexpr bool fused = std::is_same_v<Proxy, SquaredDistanceProxy<D>> || std::is_same_v<Proxy, ChordProxy>;
    if constexpr (!fused) {
      for (std::size_t t = 0; t < n; ++t) {
        float b[D];
        for (int d = 0; d < D; ++d) b[d] = bx[d][t];
        prox[t] = proxy(a, b);
      }
    }
    __m512 av[D];
    for (int d = 0; d < D; ++d) av[d] = _mm512_set1_ps(a[d]);
    constexpr int K = FastRowsSetup<F>::kVecBins;
    __m512 blo[K], bhi[K];
    __m512i acc[K];
    for (int q = 0; q < K; ++q) {
      blo[q] = _mm512_set1_ps(s_.vec_lo[q]);
      bhi[q] = _mm512_set1_ps(s_.vec_hi[q]);
      acc[q] = _mm512_setzero_si512();
    }
    const __m512 lo0 = _mm512_set1_ps(s_.lo0), top = _mm512_set1_ps(s_.top);
    __m512i index = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);  // of each lane's partner
    const __m512i sixteen = _mm512_set1_epi32(16);
    const __m512i one = _mm512_set1_epi32(1);
    float* __restrict rest = rest_.data();
    std::uint32_t* __restrict at = flag_.data();
    std::size_t m = 0;
    for (std::size_t t = 0; t < n; t += 16) {
      const __mmask16 valid = n - t >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - t)) - 1);
      __m512 v;
      if constexpr (fused) {
        // SquaredDistanceProxy's very operations (fmaf(dx, dx, s) from s = 0), 16 lanes at once.
        v = _mm512_setzero_ps();
        for (int d = 0; d < D; ++d) {
          const __m512 dx = _mm512_sub_ps(av[d], _mm512_maskz_loadu_ps(valid, bx[d] + t));
          v = _mm512_fmadd_ps(dx, dx, v);
        }
      } else {
        v = _mm512_maskz_loadu_ps(valid, prox + t);
      }
      // The bins' certain intervals lie inside [lo0, top) and apart: independent compares.
      __mmask16 k = _mm512_mask_cmp_ps_mask(valid, v, lo0, _CMP_GE_OQ) & _mm512_cmp_ps_mask(v, top, _CMP_LT_OQ);
      __mmask16 vec = 0;
      for (int q = 0; q < K; ++q) {
        const __mmask16 in = _mm512_mask_cmp_ps_mask(valid, v, blo[q], _CMP_GE_OQ) & _mm512_cmp_ps_mask(v, bhi[q], _CMP_LT_OQ);
        acc[q] = _mm512_mask_add_epi32(acc[q], in, acc[q], one);
        vec |= in;
      }
      k &= static_cast<__mmask16>(~vec);
      // The register form and a full store (the buffers have 32 floats of slack): the memory
      // form of vcompressps is microcoded on Intel.
      _mm512_storeu_ps(rest + m, _mm512_maskz_compress_ps(k, v));
      _mm512_storeu_si512(at + m, _mm512_maskz_compress_epi32(k, index));
      index = _mm512_add_epi32(index, sixteen);
      m += static_cast<std::size_t>(std::popcount(static_cast<unsigned>(k)));
    }
    std::uint64_t* __restrict c = counts_.data();
    for (int q = 0; q < K && q < s_.edges.nbins; ++q) {
      alignas(64) std::uint32_t lanes[16];  // (GCC 12 warns inside _mm512_reduce_add_epi32)
      _mm512_store_si512(lanes, acc[q]);
      std::uint64_t sum = 0;
      for (const std::uint32_t l : lanes) sum += l;
      c[std::size_t(s_.edges.nbins - 1 - q) * kCopies] += sum;
    }
    const auto entry = [this](float v) {  // the counting table's entry
      return direct_lookup(s_.count_cells.data(), s_.count_base, s_.count_top, s_.count_shift, v);
    };
    std::size_t q = 0;
    for (; q + kCopies <= m; q += kCopies)
      for (std::size_t h = 0; h < kCopies; ++h) ++c[entry(rest[q + h]) + h];
    for (; q < m; ++q) ++c[entry(rest[q])];
    // The uncertain pairs: their discarded counters moved, so the list holds some.
    const std::uint16_t U = s_.uncertain_entry;
    std::uint64_t uncertain = 0;
    for (std::size_t h = 0; h < kCopies; ++h) uncertain += c[U + h];
    if (uncertain == uncertain_seen_) return;
    uncertain_seen_ = uncertain;
    for (q = 0; q < m; ++q)
      if (entry(rest[q]) == U) settle_counted(i, j0 + at[q], rest[q]);
  }
#else
  // Unweighted histograms, every partner without a branch: the vectorised loop turns each proxy
  // into its counting-table index, and the counting loop adds each pair to the counter its entry
  // names (kCopies private copies by partner, so that pairs in the same bin, most of them in the
  // last bins, do not wait on each other's increment); pairs outside land in a discarded counter,
  // and so do the uncertain ones, whose counter tells whether the row holds any: only then is the
  // row scanned for them, and they are settled. A branch per pair on its bin mispredicted often
  // (the in-range flag and the bin of consecutive partners follow the geometry, not a pattern).
  template <class Proxy>
  void count_row(std::size_t i, std::size_t j0, std::size_t j1, const float* anchor, Proxy proxy) {
    const std::size_t n = j1 - j0;
    float a[D];
    for (int d = 0; d < D; ++d) a[d] = anchor[d];
    const float* bx[D];
    for (int d = 0; d < D; ++d) bx[d] = s_.b32->x[d] + j0;
    const std::int32_t lo = static_cast<std::int32_t>(s_.count_base), hi = static_cast<std::int32_t>(s_.count_top);
    const int shift = s_.count_shift;
    std::uint32_t* __restrict index = flag_.data();
    for (std::size_t t = 0; t < n; ++t) {
      float b[D];
      for (int d = 0; d < D; ++d) b[d] = bx[d][t];
      // direct_lookup's clamp (negative floats compare below `lo` as signed integers).
      const std::int32_t u = std::bit_cast<std::int32_t>(proxy(a, b));
      const std::int32_t c = u < lo ? lo : (u > hi ? hi : u);
      index[t] = static_cast<std::uint32_t>(c - lo) >> shift;
    }
    const std::uint16_t* __restrict cells = s_.count_cells.data();
    std::uint64_t* __restrict c = counts_.data();
    const std::uint16_t U = s_.uncertain_entry;
    // Chunks of kChunk partners: a chunk whose uncertain counters moved is scanned again for its
    // uncertain pairs (most rows hold one near the last edge; scanning whole rows cost 17 %).
    for (std::size_t w = 0; w < n; w += kChunk) {
      const std::size_t end = std::min(n, w + kChunk);
      std::size_t t = w;
      for (; t + kCopies <= end; t += kCopies) {
        std::uint32_t x[kCopies];
        for (std::size_t h = 0; h < kCopies; ++h) x[h] = index[t + h];
        for (std::size_t h = 0; h < kCopies; ++h) ++c[cells[x[h]] + h];
      }
      for (; t < end; ++t) ++c[cells[index[t]]];
      std::uint64_t uncertain = 0;
      for (std::size_t h = 0; h < kCopies; ++h) uncertain += c[U + h];
      if (uncertain == uncertain_seen_) continue;
      uncertain_seen_ = uncertain;
      for (t = w; t < end; ++t) {
        if (cells[index[t]] != U) continue;
        // The proxy again (the same float32 operations, so the same value), then the guard table.
        float b[D];
        for (int d = 0; d < D; ++d) b[d] = bx[d][t];
        settle_counted(i, j0 + t, proxy(a, b));
      }
    }
  }
#endif

  // An uncertain pair of a counting row: the band walk, and float64 inside a band.
  void settle_counted(std::size_t i, std::size_t j, float v) {
    const GuardTable& g = s_.table;
    int k = classify_table(g.bands.data(), g.cells.data(), static_cast<int>(g.cells.size()), g.lo0, g.base_bits,
                           g.shift, g.nbins, v);
    if (k == -2) {
      ++settled_;
      double a64[D], b64[D];
      for (int d = 0; d < D; ++d) {
        a64[d] = A64_.x[d][i];
        b64[d] = B64_.x[d][j];
      }
      k = find_bin(s_.edges.padded.data(), s_.edges.nbins, s_.edges.steps, s_.f.key(a64, b64));
    }
    if (k >= 0) ++counts_[std::size_t(k) * kCopies];
  }

  // Hands the private counts to the sink, after the thread's last row.
  void finish() {
    if constexpr (requires { sink_.add_count(0, std::uint64_t(0)); }) {
      for (std::size_t h = 0; h < kCopies && own_counts_; ++h)
        for (int k = 0; k < s_.edges.nbins; ++k) sink_.add_count(k, counts_[std::size_t(k) * kCopies + h]);
      counts_.assign(counts_.size(), 0);
      uncertain_seen_ = 0;
    }
  }

 private:
  const FastRowsSetup<F>& s_;
  const SoaView<D>& A64_;
  const SoaView<D>& B64_;
  std::vector<float> prox_;
  std::vector<std::uint32_t> flag_;
  std::vector<float> rest_;  // counting rows with AVX-512: the proxies left for the counting table
  bool own_counts_ = false;
  static constexpr std::size_t kCopies = FastRowsSetup<F>::kCountCopies;
  static constexpr std::size_t kChunk = 32;
  std::vector<std::uint64_t> counts_;
  std::uint64_t uncertain_seen_ = 0;  // the discarded uncertain counters' sum after the last row
  Sink& sink_;
  std::uint64_t& settled_;
};

}  // namespace twobody::cpu
