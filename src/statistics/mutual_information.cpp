// mutual_information (twobody/mutual_information.hpp) on the CPU, in the sparse direct form: per
// sample, k weights of one row times k of the other added into the pair's M × M joint table. The
// pairs are tiles of rows (tiled_traversal.hpp's executor); a tile's rows have their weights
// computed once for the tile (memory a few tiles, whatever n and d), and every entry is computed
// alone, so its bits depend on neither threads nor tiles.
#include "twobody/mutual_information.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <new>

#include "spline_weights.hpp"
#include "twobody/detail/cpu/tiled_traversal.hpp"
#include "twobody/error.hpp"
#include "twobody/extend/portable_math.hpp"

namespace twobody {

namespace {

constexpr std::size_t kTile = 16;  // rows a tile: weights of 2 × 16 rows, recomputed per tile pair

struct Shape {
  int bins = 0, order = 0;
  std::size_t d = 0;
};

// A row's range (lo, hi) and the weights of its samples: first[s] and w[s·k .. s·k + k).
struct RowRange {
  double lo = 0, hi = 0;
};

RowRange range_of(const double* x, std::size_t d) {
  RowRange r{x[0], x[0]};
  for (std::size_t s = 1; s < d; ++s) r.lo = std::min(r.lo, x[s]), r.hi = std::max(r.hi, x[s]);
  return r;
}

class TileWeights {
 public:
  explicit TileWeights(const Shape& s) : s_(s), row_(s.d), first_(kTile * s.d), w_(kTile * s.d * s.order) {}
  // Rows [r0, r1) of v (r1 − r0 ≤ kTile).
  void fill(const VectorSet& v, const std::vector<RowRange>& ranges, std::size_t r0, std::size_t r1) {
    r0_ = r0;
    const int k = s_.order;
    for (std::size_t r = r0; r < r1; ++r) {
      v.row_f64(r, row_.data());
      const RowRange g = ranges[r];
      std::int32_t* f = first_.data() + (r - r0) * s_.d;
      double* w = w_.data() + (r - r0) * s_.d * k;
      for (std::size_t s = 0; s < s_.d; ++s)
        f[s] = spline::weights(spline::position(row_[s], g.lo, g.hi, s_.bins, k), s_.bins, k, w + s * k);
    }
  }
  const std::int32_t* first(std::size_t r) const { return first_.data() + (r - r0_) * s_.d; }
  const double* w(std::size_t r) const { return w_.data() + (r - r0_) * s_.d * s_.order; }

 private:
  Shape s_;
  std::vector<double> row_;
  std::vector<std::int32_t> first_;
  std::vector<double> w_;
  std::size_t r0_ = 0;
};

// −Σ p log p over the cells in order, p = count / d (cells of count 0 add nothing): the rule's
// entropy in nats.
double entropy(const double* cells, std::size_t n, std::size_t d) {
  double sum = 0;
  const double samples = static_cast<double>(d);
  for (std::size_t c = 0; c < n; ++c)
    if (cells[c] > 0) {
      const double p = cells[c] / samples;
      sum = sum + p * portable::log(p);
    }
  return -sum;
}

// H of each row: the weights' sums per bin, sample by sample.
std::vector<double> row_entropies(const VectorSet& v, const std::vector<RowRange>& ranges, const Shape& s, int threads) {
  std::vector<double> h(v.size());
#pragma omp parallel num_threads(threads)
  {
    TileWeights tw(s);
    std::vector<double> p(static_cast<std::size_t>(s.bins));
#pragma omp for schedule(dynamic, 1)
    for (std::size_t t = 0; t < (v.size() + kTile - 1) / kTile; ++t) {
      const std::size_t r0 = t * kTile, r1 = std::min(v.size(), r0 + kTile);
      tw.fill(v, ranges, r0, r1);
      for (std::size_t r = r0; r < r1; ++r) {
        std::fill(p.begin(), p.end(), 0.0);
        const std::int32_t* f = tw.first(r);
        const double* w = tw.w(r);
        for (std::size_t x = 0; x < s.d; ++x)
          for (int u = 0; u < s.order; ++u) p[f[x] + u] = p[f[x] + u] + w[x * s.order + u];
        h[r] = entropy(p.data(), p.size(), s.d);
      }
    }
  }
  return h;
}

std::vector<RowRange> ranges_of(const VectorSet& v, int threads) {
  std::vector<RowRange> r(v.size());
#pragma omp parallel num_threads(threads)
  {
    std::vector<double> row(static_cast<std::size_t>(v.dim()));
#pragma omp for schedule(static)
    for (std::size_t i = 0; i < v.size(); ++i) {
      v.row_f64(i, row.data());
      r[i] = range_of(row.data(), row.size());
    }
  }
  return r;
}

// The tiles' evaluator: weights of the anchor and partner tiles, then each pair's joint table.
class MutualInformationTiles {
 public:
  struct Inputs {
    const VectorSet *a, *b;
    const std::vector<RowRange> *ra, *rb;
    const std::vector<double> *ha, *hb;
    Shape shape;
    double scale;  // 1 / ln(base)
    double* out;
    std::size_t cols;
  };
  explicit MutualInformationTiles(const Inputs& in)
      : in_(in), wa_(in.shape), wb_(in.shape), joint_(static_cast<std::size_t>(in.shape.bins) * in.shape.bins) {}

  void block(const cpu::BlockPair& bp) {
    if (bp.a0 >= bp.a1 || bp.b0 >= bp.b1) return;
    wa_.fill(*in_.a, *in_.ra, bp.a0, bp.a1);
    wb_.fill(*in_.b, *in_.rb, bp.b0, bp.b1);
    for (std::size_t i = bp.a0; i < bp.a1; ++i)
      for (std::size_t j = bp.triangle ? std::max(i, bp.b0) : bp.b0; j < bp.b1; ++j)
        in_.out[i * in_.cols + j] = pair(i, j);
  }

 private:
  double pair(std::size_t i, std::size_t j) {
    std::fill(joint_.begin(), joint_.end(), 0.0);
    switch (in_.shape.order) {  // the usual orders unrolled; the same operations in the same order
      case 1: add_joint<1>(i, j); break;
      case 2: add_joint<2>(i, j); break;
      case 3: add_joint<3>(i, j); break;
      case 4: add_joint<4>(i, j); break;
      default: add_joint<0>(i, j); break;
    }
    const double h_ab = entropy(joint_.data(), joint_.size(), in_.shape.d);
    return (((*in_.ha)[i] + (*in_.hb)[j]) - h_ab) * in_.scale;
  }

  // Sample by sample, the k × k products of the two rows' weights added into the joint table.
  template <int K>
  void add_joint(std::size_t i, std::size_t j) {
    const int k = K > 0 ? K : in_.shape.order;
    const std::size_t M = static_cast<std::size_t>(in_.shape.bins);
    const std::int32_t *fa = wa_.first(i), *fb = wb_.first(j);
    const double *wa = wa_.w(i), *wb = wb_.w(j);
    double* joint = joint_.data();
    for (std::size_t s = 0; s < in_.shape.d; ++s) {
      double* cell = joint + static_cast<std::size_t>(fa[s]) * M + static_cast<std::size_t>(fb[s]);
      const double* x = wa + s * k;
      const double* y = wb + s * k;
      for (int u = 0; u < k; ++u)
        for (int v = 0; v < k; ++v) cell[u * M + v] = cell[u * M + v] + x[u] * y[v];
    }
  }

  Inputs in_;
  TileWeights wa_, wb_;
  std::vector<double> joint_;
};

struct NoSink {};

void check(const VectorSet& a, const VectorSet* b, const MutualInformationOptions& o) {
  if (o.order < 1 || o.order > spline::kMaxOrder)
    throw_config(fmt::format("mutual information: the splines' order must be 1 to {}, not {}", spline::kMaxOrder, o.order));
  if (o.bins < o.order || o.bins > 1024)
    throw_config(fmt::format("mutual information: bins must be at least the order ({}) and at most 1024, not {}", o.order,
                             o.bins));
  if (a.dim() < 1) throw_input("mutual information: the rows have no samples");
  if (b && b->dim() != a.dim())
    throw_input(fmt::format("mutual information: data has {} samples a row and data2 {}: they must be paired", a.dim(),
                            b->dim()));
  a.check_finite("data");
  if (b) b->check_finite("data2");
}

}  // namespace

MutualInformationMatrix mutual_information(const VectorSet& a, const VectorSet* b, const MutualInformationOptions& o,
                                           const RunOptions& run) {
  const auto t0 = std::chrono::steady_clock::now();
  check(a, b, o);
  const VectorSet& B = b ? *b : a;
  const int threads = run.threads > 0 ? run.threads : omp_get_max_threads();
  const Shape shape{o.bins, o.order, static_cast<std::size_t>(a.dim())};
  MutualInformationMatrix m;
  m.rows = a.size();
  m.cols = B.size();
  try {
    m.values.resize(m.rows * m.cols);
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::Resource, fmt::format("mutual information: a {} x {} float64 matrix does not fit in memory",
                                                 m.rows, m.cols));
  }
  const std::vector<RowRange> ra = ranges_of(a, threads);
  const std::vector<RowRange> rb = b ? ranges_of(*b, threads) : std::vector<RowRange>{};
  // The tiles read the entropies in nats; the caller sees them in the unit asked for.
  const std::vector<double> ha = row_entropies(a, ra, shape, threads);
  const std::vector<double> hb = b ? row_entropies(*b, rb, shape, threads) : ha;
  const double scale = o.unit == InformationUnit::Bits ? 1.0 / portable::log(2.0) : 1.0;
  for (double h : ha) m.entropy_a.push_back(h * scale);
  if (b)
    for (double h : hb) m.entropy_b.push_back(h * scale);
  const MutualInformationTiles::Inputs in{&a, &B, &ra, b ? &rb : &ra, &ha, &hb, shape, scale, m.values.data(), m.cols};
  cpu::TraversalShape ts;
  ts.is_auto = b == nullptr;
  ts.threads = threads;
  ts.tile = kTile;
  ts.progress = run.progress ? &run.progress : nullptr;
  cpu::traverse(m.rows, m.cols, ts, [] { return NoSink{}; }, [&](NoSink&) { return MutualInformationTiles(in); });
  if (!b)  // the lower triangle mirrors the upper: MI is symmetric, and the rule computes i ≤ j
    for (std::size_t i = 1; i < m.rows; ++i)
      for (std::size_t j = 0; j < i; ++j) m.values[i * m.cols + j] = m.values[j * m.cols + i];
  m.info.backend = "cpu";
  m.info.device = "host";
  m.info.threads = threads;
  m.info.n_a = a.size();
  m.info.n_b = b ? b->size() : 0;
  m.info.pairs_evaluated = b ? m.rows * m.cols : m.rows * (m.rows + 1) / 2;
  m.info.plan = fmt::format("mutual information, B-splines of order {} on {} bins, {} samples a row; sparse direct form "
                            "on the CPU, tiles of {} rows, {} threads; {}",
                            o.order, o.bins, a.dim(), kTile, threads, o.unit == InformationUnit::Bits ? "bits" : "nats");
  m.info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return m;
}

}  // namespace twobody
