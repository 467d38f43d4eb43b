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
#include <functional>
#include <new>

#include "spline_weights.hpp"
#include "twobody/detail/cpu/tiled_traversal.hpp"
#include "twobody/detail/io/matrix_writer.hpp"
#include "twobody/detail/statistics/mutual_information_into.hpp"
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
    double* out;   // entry (i, j) at out[(i − r0) · ld + (j − c0)]: a block of rows
    std::size_t r0, c0, ld;
  };
  explicit MutualInformationTiles(const Inputs& in)
      : in_(in), wa_(in.shape), wb_(in.shape), joint_(static_cast<std::size_t>(in.shape.bins) * in.shape.bins) {}

  void block(const cpu::BlockPair& bp) {
    if (bp.a0 >= bp.a1 || bp.b0 >= bp.b1) return;
    wa_.fill(*in_.a, *in_.ra, bp.a0, bp.a1);
    wb_.fill(*in_.b, *in_.rb, bp.b0, bp.b1);
    for (std::size_t i = bp.a0; i < bp.a1; ++i)
      for (std::size_t j = bp.triangle ? std::max(i, bp.b0) : bp.b0; j < bp.b1; ++j)
        in_.out[(i - in_.r0) * in_.ld + (j - in_.c0)] = pair(i, j);
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

// What a run needs before its blocks: the rows' ranges and entropies, the scale of the unit.
struct Prepared {
  Shape shape;
  int threads = 1;
  std::vector<RowRange> ra, rb;
  std::vector<double> ha, hb;  // nats
  double scale = 1;
};

Prepared prepare(const VectorSet& a, const VectorSet* b, const MutualInformationOptions& o, const RunOptions& run) {
  check(a, b, o);
  Prepared p;
  p.threads = run.threads > 0 ? run.threads : omp_get_max_threads();
  p.shape = Shape{o.bins, o.order, static_cast<std::size_t>(a.dim())};
  p.ra = ranges_of(a, p.threads);
  if (b) p.rb = ranges_of(*b, p.threads);
  // The tiles read the entropies in nats; the caller sees them in the unit asked for.
  p.ha = row_entropies(a, p.ra, p.shape, p.threads);
  if (b) p.hb = row_entropies(*b, p.rb, p.shape, p.threads);
  p.scale = o.unit == InformationUnit::Bits ? 1.0 / portable::log(2.0) : 1.0;
  return p;
}

// Rows [r0, r1) of the matrix into out (row-major at stride ld, from column c0 = r0 for A × A,
// else 0): tiles of kTile rows over the threads; A × A computes i ≤ j and mirrors the block's own
// square below its diagonal.
// `progress`: the run's, when the block is the whole matrix.
void run_block(const VectorSet& a, const VectorSet* b, const Prepared& p, std::size_t r0, std::size_t r1, double* out,
               std::size_t ld, const std::function<void(double)>* progress) {
  const VectorSet& B = b ? *b : a;
  const std::size_t cols = B.size();
  const std::size_t c0 = b ? 0 : r0;
  std::vector<cpu::BlockPair> items;
  for (std::size_t a0 = r0; a0 < r1; a0 += kTile) {
    const std::size_t a1 = std::min(r1, a0 + kTile);
    if (!b) items.push_back({a0, a1, a0, a1, true});
    for (std::size_t b0 = b ? 0 : a1; b0 < cols; b0 += kTile) items.push_back({a0, a1, b0, std::min(cols, b0 + kTile), false});
  }
  const MutualInformationTiles::Inputs in{&a, &B, &p.ra, b ? &p.rb : &p.ra, &p.ha, b ? &p.hb : &p.ha, p.shape, p.scale,
                                          out, r0, c0, ld};
  cpu::TraversalShape ts;
  ts.is_auto = b == nullptr;
  ts.threads = p.threads;
  ts.tile = kTile;
  ts.progress = progress && *progress ? progress : nullptr;
  cpu::traverse_blocks(
      items.size(), [&](std::size_t k) { return items[k]; }, ts, [] { return NoSink{}; },
      [&](NoSink&) { return MutualInformationTiles(in); });
  if (!b) mirror_upper_square(out, r1 - r0, ld);  // (MI is symmetric, and the rule computes i ≤ j)
}

RunInfo info_of(const VectorSet& a, const VectorSet* b, const MutualInformationOptions& o, const Prepared& p,
                std::chrono::steady_clock::time_point t0, const std::string& blocks) {
  RunInfo info;
  info.backend = "cpu";
  info.device = "host";
  info.threads = p.threads;
  info.n_a = a.size();
  info.n_b = b ? b->size() : 0;
  info.pairs_evaluated = b ? a.size() * b->size() : a.size() * (a.size() + 1) / 2;
  info.plan = fmt::format("mutual information, B-splines of order {} on {} bins, {} samples a row; sparse direct form "
                          "on the CPU, tiles of {} rows, {} threads{}; {}",
                          o.order, o.bins, a.dim(), kTile, p.threads, blocks,
                          o.unit == InformationUnit::Bits ? "bits" : "nats");
  info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return info;
}

}  // namespace

MutualInformationMatrix mutual_information(const VectorSet& a, const VectorSet* b, const MutualInformationOptions& o,
                                           const RunOptions& run) {
  const auto t0 = std::chrono::steady_clock::now();
  const Prepared p = prepare(a, b, o, run);
  MutualInformationMatrix m;
  m.rows = a.size();
  m.cols = b ? b->size() : a.size();
  try {
    m.values.resize(m.rows * m.cols);
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::Resource, fmt::format("mutual information: a {} x {} float64 matrix does not fit in memory",
                                                 m.rows, m.cols));
  }
  for (double h : p.ha) m.entropy_a.push_back(h * p.scale);
  for (double h : p.hb) m.entropy_b.push_back(h * p.scale);
  // (one block: the matrix itself)
  run_block(a, b, p, 0, m.rows, m.values.data(), m.cols, &run.progress);
  m.info = info_of(a, b, o, p, t0, "");
  return m;
}

RunInfo mutual_information_into(const VectorSet& a, const VectorSet* b, const MutualInformationOptions& o,
                                std::size_t block_rows, MatrixSink& sink, const RunOptions& run) {
  const auto t0 = std::chrono::steady_clock::now();
  const Prepared p = prepare(a, b, o, run);
  const std::size_t rows = a.size(), cols = b ? b->size() : a.size();
  const std::size_t R = std::max<std::size_t>(1, std::min(block_rows, rows));
  MatrixValues buf(R * cols);
  const double total = b ? static_cast<double>(rows) * static_cast<double>(cols)
                         : 0.5 * static_cast<double>(rows) * static_cast<double>(rows + 1);
  double done = 0;
  for (std::size_t r0 = 0; r0 < rows; r0 += R) {
    const std::size_t r1 = std::min(rows, r0 + R), nr = r1 - r0;
    const std::size_t c0 = b ? 0 : r0, ld = cols - c0;
    run_block(a, b, p, r0, r1, buf.data(), ld, nullptr);
    sink.put_block(r0, nr, c0, buf.data(), ld, !b);
    done += b ? static_cast<double>(nr) * static_cast<double>(cols)
              : static_cast<double>(nr) * (static_cast<double>(cols - r0) - 0.5 * static_cast<double>(nr - 1));
    if (run.progress) run.progress(std::min(1.0, done / total));
  }
  return info_of(a, b, o, p, t0, fmt::format(", blocks of {} rows", R));
}

}  // namespace twobody
