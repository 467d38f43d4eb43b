#include "twobody/detail/cpu/matrix_tiles.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "twobody/detail/cpu/expression_rows.hpp"
#include "twobody/detail/expr/ops.hpp"
#include "twobody/error.hpp"

namespace twobody::cpu {

using expr::Op;

namespace {

bool row_vector(const expr::Compiled& c, int id, int side) {
  const expr::Node& n = c.node(id);
  return n.vector && (n.side & expr::kSidePair) == side;
}

// A difference of a's row and b's row, in either order (squares and absolute values of the two
// are the same bits: negation is exact).
bool row_difference(const expr::Compiled& c, int id, int& u, int& v) {
  const expr::Node& s = c.node(id);
  if (s.op != Op::Sub || !s.vector) return false;
  if (row_vector(c, s.arg[0], expr::kSideA) && row_vector(c, s.arg[1], expr::kSideB)) {
    u = s.arg[0], v = s.arg[1];
    return true;
  }
  if (row_vector(c, s.arg[0], expr::kSideB) && row_vector(c, s.arg[1], expr::kSideA)) {
    u = s.arg[1], v = s.arg[0];
    return true;
  }
  return false;
}

// The finalise of a tile form: the pair's scalar nodes after (or beside) the reduction, each
// ops.hpp's operation on the reduction's value, the rows' scalars and the constants, in the
// interpreter's order: the same bits.
class Finaliser {
 public:
  Finaliser(const expr::Compiled& c, const ExpressionRows& rows, int reduction) {
    slot_.assign(c.g.nodes.size(), -1);
    for (int id : c.pair_nodes) {
      const expr::Node& x = c.node(id);
      if (x.vector || id == reduction) continue;
      Step st{x.op, x.index, x.arity(), {}, static_cast<int>(nslots_++)};
      for (int k = 0; k < st.nargs; ++k) st.args[k] = arg(c, rows, x.arg[k], reduction);
      slot_[static_cast<std::size_t>(id)] = st.dst;
      steps_.push_back(st);
    }
    root_ = arg(c, rows, c.g.root, reduction);
  }
  std::size_t slots() const { return nslots_; }

  double operator()(double reduced, std::size_t i, std::size_t j, double* s) const {
    for (const Step& st : steps_)
      s[st.dst] = expr::apply_op(st.op, st.index, get(st.args[0], reduced, i, j, s), get(st.args[1], reduced, i, j, s),
                                 get(st.args[2], reduced, i, j, s));
    return get(root_, reduced, i, j, s);
  }

 private:
  enum class Kind : unsigned char { None, Reduction, RowA, RowB, Value, Slot };
  struct Arg {
    Kind kind = Kind::None;
    const double* data = nullptr;
    double value = 0;
    int slot = 0;
  };
  struct Step {
    Op op;
    int index;
    int nargs;
    Arg args[3];
    int dst;
  };

  Arg arg(const expr::Compiled& c, const ExpressionRows& rows, int id, int reduction) const {
    Arg a;
    if (id == reduction) {
      a.kind = Kind::Reduction;
      return a;
    }
    const int side = c.node(id).side & expr::kSidePair;
    if (side == expr::kSidePair) {
      a.kind = Kind::Slot;
      a.slot = slot_[static_cast<std::size_t>(id)];
      if (a.slot < 0) throw Error(ErrorKind::Internal, "matrix tiles: a pair node read before it is computed");
    } else if (side == expr::kSideA || side == expr::kSideB) {
      a.kind = side == expr::kSideA ? Kind::RowA : Kind::RowB;
      a.data = rows.column(id);
      if (!a.data) throw Error(ErrorKind::Internal, "matrix tiles: a row scalar was not hoisted");
    } else {
      a.kind = Kind::Value;
      a.value = rows.value(id);
    }
    return a;
  }

  static double get(const Arg& a, double reduced, std::size_t i, std::size_t j, const double* s) {
    switch (a.kind) {
      case Kind::None: return 0.0;
      case Kind::Reduction: return reduced;
      case Kind::RowA: return a.data[i];
      case Kind::RowB: return a.data[j];
      case Kind::Value: return a.value;
      case Kind::Slot: break;
    }
    return s[a.slot];
  }

  std::vector<int> slot_;
  std::vector<Step> steps_;
  std::size_t nslots_ = 0;
  Arg root_;
};

constexpr std::size_t kMr = 8, kNr = 16;  // the register tile: 8 rows of a x 16 of b

// One element's step of the reduction, as ops.hpp's reduce_step over the element's operations.
// (The maximum of absolute differences starts from +0 rather than element 0: the same value, as
// every element is +0 or above and none is NaN for finite rows.)
template <TileElement E, Op R>
inline double step(double acc, double a, double b) {
  if constexpr (E == TileElement::Product) {
    return acc + a * b;
  } else if constexpr (E == TileElement::SquaredDifference) {
    const double t = a - b;
    return acc + t * t;
  } else {
    const double t = std::fabs(a - b);
    if constexpr (R == Op::Sum) return acc + t;
    else return t > acc ? t : acc;
  }
}

// acc[8][16] carried through K elements of a packed slice: ap[k][8] of a, bp[k][16] of b (16
// accumulators in registers: a fifth less time than 4 x 16 on a Zen 4 at d = 5,419).
template <TileElement E, Op R>
void micro_tile(const double* __restrict ap, const double* __restrict bp, std::size_t K, double* __restrict acc) {
  double c[kMr][kNr];
  for (std::size_t q = 0; q < kMr; ++q)
    for (std::size_t t = 0; t < kNr; ++t) c[q][t] = acc[q * kNr + t];
  for (std::size_t k = 0; k < K; ++k) {
    const double* b = bp + k * kNr;
    for (std::size_t q = 0; q < kMr; ++q) {
      const double a = ap[k * kMr + q];
#pragma omp simd
      for (std::size_t t = 0; t < kNr; ++t) c[q][t] = step<E, R>(c[q][t], a, b[t]);
    }
  }
  for (std::size_t q = 0; q < kMr; ++q)
    for (std::size_t t = 0; t < kNr; ++t) acc[q * kNr + t] = c[q][t];
}

using MicroTile = void (*)(const double*, const double*, std::size_t, double*);

MicroTile micro_for(const TileForm& f) {
  switch (f.element) {
    case TileElement::Product: return micro_tile<TileElement::Product, Op::Sum>;
    case TileElement::SquaredDifference: return micro_tile<TileElement::SquaredDifference, Op::Sum>;
    case TileElement::AbsoluteDifference:
      return f.reduce == Op::Sum ? micro_tile<TileElement::AbsoluteDifference, Op::Sum>
                                 : micro_tile<TileElement::AbsoluteDifference, Op::ReduceMax>;
    case TileElement::None: break;
  }
  throw Error(ErrorKind::Internal, "matrix tiles: no tile form");
}

// One thread's buffers for a tile of R rows x C columns.
struct TileSpace {
  std::vector<double> bp, acc, slots;
};

// A block's rows of u packed for the register tiles, [quad][k][4] over the whole dimension (rows
// past r1 zero): read by every tile of the block, so packed once.
void pack_rows(const ExpressionRows& rows, const TileForm& form, std::size_t d, std::size_t r0, std::size_t r1,
               std::vector<double>& ap, int threads) {
  const std::size_t na = rows.size_a(), quads = (r1 - r0 + kMr - 1) / kMr;
  const double* u = rows.column(form.u);
  ap.resize(quads * d * kMr);
  const std::ptrdiff_t slices = static_cast<std::ptrdiff_t>((d + kSliceK - 1) / kSliceK);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::ptrdiff_t sp = 0; sp < slices; ++sp) {
    const std::size_t k0 = static_cast<std::size_t>(sp) * kSliceK, k1 = std::min(d, k0 + kSliceK);
    for (std::size_t k = k0; k < k1; ++k) {
      const double* ur = u + k * na;
      for (std::size_t q = 0; q < quads; ++q)
        for (std::size_t t = 0; t < kMr; ++t) {
          const std::size_t i = r0 + q * kMr + t;
          ap[(q * d + k) * kMr + t] = i < r1 ? ur[i] : 0.0;
        }
    }
  }
}

// Rows [r0, r1) x columns [j0, j1) of the tile form into buf (row r0 at buf, stride ld, column j
// at j), the rows packed in `ap`. Symmetric: register tiles wholly below the diagonal are skipped
// (the block's own diagonal square is completed from its upper half afterwards).
void tile_of_form(const MatrixJob& job, const TileForm& form, const ExpressionRows& rows, const Finaliser& fin,
                  MicroTile micro, const double* ap, std::size_t r0, std::size_t r1, std::size_t j0, std::size_t j1,
                  double* buf, std::size_t ld, TileSpace& w) {
  const std::size_t nb = rows.size_b(), d = static_cast<std::size_t>(job.f->g.dim);
  const std::size_t quads = (r1 - r0 + kMr - 1) / kMr, groups = (j1 - j0 + kNr - 1) / kNr;
  const double* v = rows.column(form.v);
  w.bp.resize(groups * kNr * kSliceK);
  w.acc.assign(quads * groups * kMr * kNr, 0.0);
  const auto below = [&](std::size_t q, std::size_t g) {
    return job.symmetric && j0 + g * kNr + kNr - 1 < r0 + q * kMr;
  };
  for (std::size_t k0 = 0; k0 < d; k0 += kSliceK) {
    const std::size_t kk = std::min(kSliceK, d - k0);
    for (std::size_t k = 0; k < kk; ++k) {
      const double* vr = v + (k0 + k) * nb;
      for (std::size_t g = 0; g < groups; ++g)
        for (std::size_t t = 0; t < kNr; ++t) {
          const std::size_t j = j0 + g * kNr + t;
          w.bp[(g * kk + k) * kNr + t] = j < j1 ? vr[j] : 0.0;
        }
    }
    for (std::size_t g = 0; g < groups; ++g)
      for (std::size_t q = 0; q < quads; ++q)
        if (!below(q, g))
          micro(ap + (q * d + k0) * kMr, w.bp.data() + g * kk * kNr, kk, w.acc.data() + (q * groups + g) * kMr * kNr);
  }
  w.slots.resize(std::max<std::size_t>(1, fin.slots()));
  for (std::size_t q = 0; q < quads; ++q)
    for (std::size_t g = 0; g < groups; ++g) {
      if (below(q, g)) continue;
      const double* acc = w.acc.data() + (q * groups + g) * kMr * kNr;
      for (std::size_t t = 0; t < kMr; ++t) {
        const std::size_t i = r0 + q * kMr + t;
        if (i >= r1) break;
        for (std::size_t s = 0; s < kNr; ++s) {
          const std::size_t j = j0 + g * kNr + s;
          if (j >= j1) break;
          buf[(i - r0) * ld + j] = fin(acc[t * kNr + s], i, j, w.slots.data());
        }
      }
    }
}

}  // namespace

const char* to_string(TileElement e) {
  switch (e) {
    case TileElement::Product: return "products";
    case TileElement::SquaredDifference: return "squared differences";
    case TileElement::AbsoluteDifference: return "absolute differences";
    case TileElement::None: break;
  }
  return "none";
}

TileForm tile_form(const expr::Compiled& c) {
  TileForm f;
  if (c.result != ValueType::Scalar || !c.where.text.empty() || c.pair_reductions.size() != 1) return f;
  const int r = c.pair_reductions[0];
  if (c.g.root != r && !(c.is_pair(c.g.root) && !c.node(c.g.root).vector)) return f;
  const expr::Node& red = c.node(r);
  const expr::Node& x = c.node(red.arg[0]);
  int u = -1, v = -1, chain = 0;
  TileElement e = TileElement::None;
  if (x.op == Op::Mul && x.arg[0] != x.arg[1]) {
    if (row_vector(c, x.arg[0], expr::kSideA) && row_vector(c, x.arg[1], expr::kSideB)) u = x.arg[0], v = x.arg[1];
    else if (row_vector(c, x.arg[0], expr::kSideB) && row_vector(c, x.arg[1], expr::kSideA)) u = x.arg[1], v = x.arg[0];
    if (u >= 0) e = TileElement::Product, chain = 1;
  } else if (((x.op == Op::PowInt && x.index == 2) || (x.op == Op::Mul && x.arg[0] == x.arg[1])) &&
             row_difference(c, x.arg[0], u, v)) {
    e = TileElement::SquaredDifference, chain = 2;
  } else if (x.op == Op::Abs && row_difference(c, x.arg[0], u, v)) {
    e = TileElement::AbsoluteDifference, chain = 2;
  }
  if (e == TileElement::None) return f;
  if (red.op != Op::Sum && !(red.op == Op::ReduceMax && e == TileElement::AbsoluteDifference)) return f;
  // Nothing else of the pair may be a vector: the tiles hold only the reduction's element.
  const auto vectors = std::count_if(c.pair_nodes.begin(), c.pair_nodes.end(), [&](int id) { return c.node(id).vector; });
  if (vectors != chain) return f;
  f.element = e;
  f.reduce = red.op;
  f.reduction = r;
  f.u = u;
  f.v = v;
  return f;
}

void matrix_shape(MatrixJob& job, std::size_t rows, std::size_t cols, std::size_t d) {
  const std::size_t threads = static_cast<std::size_t>(std::max(1, job.threads));
  // Tiles of up to 256 columns, and at least two a thread where the width allows.
  const std::size_t per = (cols + 2 * threads - 1) / (2 * threads);
  job.tile_cols = std::clamp<std::size_t>((per + kNr - 1) / kNr * kNr, kNr, 256);
  if (job.block_rows > 0) return;
  // 256 rows where a block's float64 buffer stays within 256 MiB and its packed rows within 64
  // MiB, fewer (at least 8, a multiple of the register tile's 8) beyond. Tall blocks matter to
  // the mirror of a symmetric file: each block writes a strip of every later row, a page fault a
  // row, so the faults are n^2 / rows.
  const std::size_t mib = std::size_t{1} << 20;
  const std::size_t fit = std::min(256 * mib / (sizeof(double) * std::max<std::size_t>(1, cols)),
                                   64 * mib / (sizeof(double) * std::max<std::size_t>(1, d)));
  job.block_rows = std::clamp<std::size_t>(fit / kMr * kMr, std::max<std::size_t>(8, 4 * threads), 256);
  job.block_rows = std::min(job.block_rows, std::max<std::size_t>(rows, 1));
}

void run_matrix_tiles(const MatrixJob& job, const TileForm& form, MatrixSink& sink) {
  ExpressionRows rows(*job.f, *job.a, *job.b, job.threads);
  rows.use_compiled(job.compiled);
  const std::size_t n1 = rows.size_a(), n2 = rows.size_b(), R = job.block_rows, C = job.tile_cols;
  if (R == 0 || C == 0) throw Error(ErrorKind::Internal, "matrix tiles: no shape");
  const bool tiles = form.element != TileElement::None;
  std::optional<Finaliser> fin;
  MicroTile micro = nullptr;
  if (tiles) {
    fin.emplace(*job.f, rows, form.reduction);
    micro = micro_for(form);
  }
  std::vector<double> buf(std::min(R, n1) * n2);
  const int threads = std::max(1, job.threads);
  std::vector<TileSpace> spaces(static_cast<std::size_t>(threads));
  std::vector<double> ap;
  const std::size_t d = static_cast<std::size_t>(job.f->g.dim);
  std::vector<ExpressionRows::Workspace> ws;
  if (!tiles)
    for (int t = 0; t < threads; ++t) ws.push_back(rows.workspace());
  const double total = job.symmetric ? 0.5 * static_cast<double>(n1) * static_cast<double>(n1 + 1)
                                     : static_cast<double>(n1) * static_cast<double>(n2);
  double done = 0;
  for (std::size_t r0 = 0; r0 < n1; r0 += R) {
    const std::size_t r1 = std::min(n1, r0 + R), nr = r1 - r0;
    const std::size_t c0 = job.symmetric ? r0 : 0;
    const std::size_t ntiles = (n2 - c0 + C - 1) / C;
    if (tiles) {
      pack_rows(rows, form, d, r0, r1, ap, threads);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
      for (std::size_t t = 0; t < ntiles; ++t) {
        const std::size_t j0 = c0 + t * C, j1 = std::min(n2, j0 + C);
        tile_of_form(job, form, rows, *fin, micro, ap.data(), r0, r1, j0, j1, buf.data(), n2,
                     spaces[static_cast<std::size_t>(omp_get_thread_num())]);
      }
    } else {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
      for (std::size_t i = r0; i < r1; ++i) {
        const std::size_t j = job.symmetric ? i : 0;
        rows.row(i, j, n2 - j, buf.data() + (i - r0) * n2 + j, ws[static_cast<std::size_t>(omp_get_thread_num())]);
      }
    }
    if (job.symmetric) mirror_upper_square(buf.data() + r0, nr, n2);
    // One NaN (the quiet NaN, 0x7ff8...) for every entry without a value: an arithmetic NaN's
    // bits are the processor's own (x86 and the GPU differ), and a matrix is the same bits anywhere.
    for (std::size_t i = r0; i < r1; ++i)
      for (std::size_t j = c0; j < n2; ++j)
        if (double& v = buf[(i - r0) * n2 + j]; v != v) v = expr::nan_value();
    sink.put_block(r0, nr, c0, buf.data() + c0, n2, job.symmetric);
    done += job.symmetric ? static_cast<double>(nr) * (static_cast<double>(n2 - r0) - 0.5 * static_cast<double>(nr - 1))
                          : static_cast<double>(nr) * static_cast<double>(n2);
    if (job.progress && *job.progress) (*job.progress)(std::min(1.0, done / total));
  }
}

}  // namespace twobody::cpu
