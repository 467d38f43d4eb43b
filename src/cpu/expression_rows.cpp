#include "twobody/detail/cpu/expression_rows.hpp"

#include <fmt/format.h>

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <map>
#include <tuple>

#include "twobody/detail/expr/ops.hpp"
#include "twobody/error.hpp"

namespace twobody::cpu {

namespace {

using expr::Op;

// One operand of a lane loop: `uniform` (the same value on every lane, p[0]) or p[t].
struct Src {
  const double* p;
  bool uniform;
  double at(std::size_t t) const { return uniform ? p[0] : p[t]; }
};

template <class F>
void lanes1(const F& f, Src x, double* __restrict r, std::size_t n) {
  if (x.uniform) {
    const double v = f(x.p[0]);
    for (std::size_t t = 0; t < n; ++t) r[t] = v;
    return;
  }
#pragma omp simd
  for (std::size_t t = 0; t < n; ++t) r[t] = f(x.p[t]);
}

template <class F>
void lanes2(const F& f, Src x, Src y, double* __restrict r, std::size_t n) {
  if (!x.uniform && !y.uniform) {
#pragma omp simd
    for (std::size_t t = 0; t < n; ++t) r[t] = f(x.p[t], y.p[t]);
  } else if (x.uniform && !y.uniform) {
    const double u = x.p[0];
#pragma omp simd
    for (std::size_t t = 0; t < n; ++t) r[t] = f(u, y.p[t]);
  } else if (!x.uniform) {
    const double v = y.p[0];
#pragma omp simd
    for (std::size_t t = 0; t < n; ++t) r[t] = f(x.p[t], v);
  } else {
    const double v = f(x.p[0], y.p[0]);
    for (std::size_t t = 0; t < n; ++t) r[t] = v;
  }
}

// One element-wise operation over n lanes. The frequent ones get loops of their own (each the
// operation ops.hpp defines); the rest go through apply_op lane by lane.
void exec(Op op, int index, Src x, Src y, Src z, double* r, std::size_t n) {
  switch (op) {
    case Op::Add: return lanes2([](double u, double v) { return u + v; }, x, y, r, n);
    case Op::Sub: return lanes2([](double u, double v) { return u - v; }, x, y, r, n);
    case Op::Mul: return lanes2([](double u, double v) { return u * v; }, x, y, r, n);
    case Op::Div: return lanes2([](double u, double v) { return u / v; }, x, y, r, n);
    case Op::Neg: return lanes1([](double u) { return -u; }, x, r, n);
    case Op::Abs: return lanes1([](double u) { return std::fabs(u); }, x, r, n);
    case Op::Sqrt: return lanes1([](double u) { return std::sqrt(u); }, x, r, n);
    case Op::PowInt:
      if (index == 2) return lanes1([](double u) { return u * u; }, x, r, n);
      return lanes1([index](double u) { return expr::op_pow_int(u, index); }, x, r, n);
    case Op::Min2: return lanes2(expr::op_min, x, y, r, n);
    case Op::Max2: return lanes2(expr::op_max, x, y, r, n);
    case Op::Less: return lanes2([](double u, double v) { return expr::truth(u < v); }, x, y, r, n);
    case Op::LessEq: return lanes2([](double u, double v) { return expr::truth(u <= v); }, x, y, r, n);
    case Op::Greater: return lanes2([](double u, double v) { return expr::truth(u > v); }, x, y, r, n);
    case Op::GreaterEq: return lanes2([](double u, double v) { return expr::truth(u >= v); }, x, y, r, n);
    case Op::And: return lanes2([](double u, double v) { return expr::truth(u != 0 && v != 0); }, x, y, r, n);
    default:
      for (std::size_t t = 0; t < n; ++t) r[t] = expr::apply_op(op, index, x.at(t), y.at(t), z.at(t));
  }
}

// Each node's representative among the nodes that compute the same thing with b's columns read
// as a's: when b is a (auto), a node of b's row that mirrors one of a's shares its column.
std::vector<int> mirror_classes(const expr::Graph& g) {
  std::map<std::tuple<int, int, int, int, std::uint64_t, int, bool, bool>, int> seen;
  std::vector<int> rep(g.nodes.size());
  for (std::size_t id = 0; id < g.nodes.size(); ++id) {
    const expr::Node& x = g.nodes[id];
    const Op op = x.op == Op::ColB ? Op::ColA : x.op == Op::CoordB ? Op::CoordA : x.op == Op::VecB ? Op::VecA : x.op;
    int arg[3];
    for (int k = 0; k < 3; ++k) arg[k] = x.arg[k] < 0 ? -1 : rep[static_cast<std::size_t>(x.arg[k])];
    const auto key = std::make_tuple(static_cast<int>(op), arg[0], arg[1], arg[2], std::bit_cast<std::uint64_t>(x.value),
                                     x.index, x.vector, x.boolean);
    rep[id] = seen.emplace(key, static_cast<int>(id)).first->second;
  }
  return rep;
}

}  // namespace

ExpressionRows::ExpressionRows(const expr::Compiled& c, const PairTable& a, const PairTable& b, int threads)
    : c_(c), na_(a.size()), nb_(b.size()), dim_(c.g.dim) {
  const expr::Graph& g = c.g;
  const std::size_t nodes = g.nodes.size();
  column_of_.assign(nodes, nullptr);
  constant_.assign(nodes, 0.0);
  constant_vec_.assign(nodes, {});
  reg_of_.assign(nodes, -1);
  if (a.dim() != dim_ || b.dim() != dim_)
    throw_config(fmt::format("the expression was parsed for dimension {}; the data have {}", dim_, a.dim()));
  const std::size_t d = static_cast<std::size_t>(dim_);

  // Constants and parameters, once.
  const auto cval = [&](int id) { return constant_at(id, 0); };
  const auto cvec = [&](int id, std::size_t k) { return constant_at(id, k); };
  for (int id : c.constants) {
    const expr::Node& n = g.nodes[id];
    if (n.op == Op::Param) constant_[id] = g.scalars[n.index];
    else if (n.op == Op::ParamVec) constant_vec_[id] = g.vectors[n.index];
    else if (expr::is_reduction(n.op)) {
      double acc = 0;
      for (std::size_t k = 0; k < d; ++k) acc = expr::reduce_step(n.op, acc, cvec(n.arg[0], k), k == 0);
      constant_[id] = acc;
    } else if (n.vector) {
      constant_vec_[id].resize(d);
      for (std::size_t k = 0; k < d; ++k)
        constant_vec_[id][k] = expr::apply_op(n.op, n.index, n.arg[0] >= 0 ? cvec(n.arg[0], k) : 0,
                                              n.arg[1] >= 0 ? cvec(n.arg[1], k) : 0, n.arg[2] >= 0 ? cvec(n.arg[2], k) : 0);
    } else {
      constant_[id] = expr::apply_op(n.op, n.index, n.arg[0] >= 0 ? cval(n.arg[0]) : 0, n.arg[1] >= 0 ? cval(n.arg[1]) : 0,
                                     n.arg[2] >= 0 ? cval(n.arg[2]) : 0);
    }
  }

  store_.reserve(2 + c.rows_a.size() + c.rows_b.size());
  prepass(c.rows_a, a, true, threads);
  if (&a == &b) {
    // One table (auto): b's row nodes that mirror a's take their columns, computed once.
    const std::vector<int> rep = mirror_classes(g);
    std::map<int, const double*> of_rep;
    for (int id : c.rows_a) of_rep.emplace(rep[static_cast<std::size_t>(id)], column_of_[static_cast<std::size_t>(id)]);
    std::vector<int> rest;
    for (int id : c.rows_b) {
      const auto it = of_rep.find(rep[static_cast<std::size_t>(id)]);
      if (it != of_rep.end() && it->second) column_of_[static_cast<std::size_t>(id)] = it->second;
      else rest.push_back(id);
    }
    if (!rest.empty()) prepass(rest, b, false, threads);
  } else {
    prepass(c.rows_b, b, false, threads);
  }

  // The pair program: registers for the pair nodes; scalars before the loop over k unless they
  // read a reduction (then after it); vectors and the reductions' steps inside it.
  std::vector<char> after(g.nodes.size(), 0);
  for (int id : c.pair_nodes) {
    const expr::Node& x = g.nodes[id];
    reg_of_[id] = static_cast<int>(regs_++);
    bool late = expr::is_reduction(x.op);
    for (int a : x.arg)
      if (a >= 0 && c.is_pair(a) && after[a]) late = true;
    after[id] = late;
    Step st;
    st.op = x.op;
    st.index = x.index;
    st.dst = reg_of_[id];
    st.nargs = x.arity();
    for (int k = 0; k < st.nargs; ++k) st.args[k] = operand(x.arg[k]);
    if (x.vector || expr::is_reduction(x.op)) per_k_.push_back(st);
    else (late ? after_ : before_).push_back(st);
  }
  root_ = operand(g.root);

  // The compiled evaluator's view of the same columns and constants.
  slot_column_ = column_of_;
  slot_value_ = constant_;
  for (std::size_t id = 0; id < nodes; ++id) {
    if (!constant_vec_[id].empty()) slot_column_[id] = constant_vec_[id].data();
    if (g.nodes[id].op == Op::Const) slot_value_[id] = g.nodes[id].value;
  }
}

// The prepass of one side: every hoisted node a point at a time (and the coordinates k-major
// where something reads them there).
void ExpressionRows::prepass(const std::vector<int>& wanted, const PairTable& t, bool side_a, int threads) {
  const expr::Graph& g = c_.g;
  const std::size_t d = static_cast<std::size_t>(dim_);
  const auto cvec = [&](int id, std::size_t k) { return constant_at(id, k); };
  const std::size_t n = t.size();
  const Op col = side_a ? Op::ColA : Op::ColB, coord = side_a ? Op::CoordA : Op::CoordB, vec = side_a ? Op::VecA : Op::VecB;
  // The nodes to evaluate: the wanted ones and the row nodes under them.
  std::vector<char> need(g.nodes.size(), 0);
  std::function<void(int)> mark = [&](int id) {
    const expr::Node& x = g.nodes[id];
    if (need[id] || (x.side & expr::kSidePair) == 0) return;
    need[id] = 1;
    for (int a : x.arg)
      if (a >= 0) mark(a);
  };
  for (int id : wanted) mark(id);
  std::vector<int> order;
  for (std::size_t id = 0; id < need.size(); ++id)
    if (need[id]) order.push_back(static_cast<int>(id));
  // The coordinates k-major, where the pair part reads them (a, a[k]) or a prepass reads a[k]:
  // a function of the centred rows alone (Pearson) needs no copy of the data.
  const bool coords_read = std::any_of(order.begin(), order.end(), [&](int id) {
    const Op op = g.nodes[id].op;
    return op == coord || (op == vec && std::find(wanted.begin(), wanted.end(), id) != wanted.end());
  });
  std::vector<double>& coords = store_.emplace_back(coords_read ? n * d : 0);
  if (coords_read) {
    std::vector<double> row(d);
    for (std::size_t i = 0; i < n; ++i) {
      t.coordinates().row_f64(i, row.data());
      for (std::size_t k = 0; k < d; ++k) coords[k * n + i] = row[k];
    }
  }
  for (int id : wanted) {
    const expr::Node& x = g.nodes[id];
    if (x.op == col) column_of_[id] = t.column(static_cast<std::size_t>(x.index)).data();
    else if (x.op == coord) column_of_[id] = coords.data() + static_cast<std::size_t>(x.index) * n;
    else if (x.op == vec) column_of_[id] = coords.data();
    else column_of_[id] = store_.emplace_back(x.vector ? n * d : n).data();
  }
  const std::ptrdiff_t points = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel num_threads(std::max(1, threads))
  {
    std::vector<double> s(g.nodes.size()), v(order.empty() ? 0 : g.nodes.size() * d);
#pragma omp for schedule(static)
    for (std::ptrdiff_t ip = 0; ip < points; ++ip) {
      const std::size_t i = static_cast<std::size_t>(ip);
      // The value of argument `a` (element k of a vector) at point i.
      const auto val = [&](int a, std::size_t k) -> double {
        if (a < 0) return 0.0;
        const expr::Node& x = g.nodes[a];
        if ((x.side & expr::kSidePair) == 0) return cvec(a, k);
        return x.vector ? v[static_cast<std::size_t>(a) * d + k] : s[a];
      };
      // A vector argument's d values at once (a point's row nodes, a parameter vector), or a
      // scalar's one value broadcast: the lane loops of the pair part, run over k.
      const auto lanes = [&](int a) -> Src {
        static const double zero = 0.0;
        if (a < 0) return {&zero, true};
        const expr::Node& y = g.nodes[a];
        if ((y.side & expr::kSidePair) == 0) {
          if (y.vector) return {constant_vec_[a].data(), false};
          return {y.op == Op::Const ? &y.value : &constant_[a], true};
        }
        return y.vector ? Src{v.data() + static_cast<std::size_t>(a) * d, false} : Src{&s[a], true};
      };
      for (int id : order) {
        const expr::Node& x = g.nodes[id];
        if (x.op == col) s[id] = t.column(static_cast<std::size_t>(x.index))[i];
        else if (x.op == coord) s[id] = coords[static_cast<std::size_t>(x.index) * n + i];
        else if (x.op == vec)
          t.coordinates().row_f64(i, v.data() + static_cast<std::size_t>(id) * d);  // (coords' values, read along the row)
        else if (expr::is_reduction(x.op)) {
          double acc = 0;
          for (std::size_t k = 0; k < d; ++k) acc = expr::reduce_step(x.op, acc, val(x.arg[0], k), k == 0);
          s[id] = acc;
        } else if (x.vector) {
          exec(x.op, x.index, lanes(x.arg[0]), lanes(x.arg[1]), lanes(x.arg[2]), v.data() + static_cast<std::size_t>(id) * d, d);
        } else {
          s[id] = expr::apply_op(x.op, x.index, val(x.arg[0], 0), val(x.arg[1], 0), val(x.arg[2], 0));
        }
      }
      for (int id : wanted) {
        const expr::Node& x = g.nodes[id];
        if (x.op == col || x.op == coord || x.op == vec) continue;
        double* out = const_cast<double*>(column_of_[id]);
        if (x.vector)
          for (std::size_t k = 0; k < d; ++k) out[k * n + i] = v[static_cast<std::size_t>(id) * d + k];
        else out[i] = s[id];
      }
    }
  }
}

double ExpressionRows::constant_at(int id, std::size_t k) const {
  const expr::Node& n = c_.g.nodes[static_cast<std::size_t>(id)];
  if (n.vector) return constant_vec_[static_cast<std::size_t>(id)][k];
  return n.op == Op::Const ? n.value : constant_[static_cast<std::size_t>(id)];
}

ExpressionRows::Operand ExpressionRows::operand(int id) const {
  const expr::Node& x = c_.g.nodes[id];
  Operand o;
  o.vector = x.vector;
  const int side = x.side & expr::kSidePair;
  if (side == expr::kSidePair) {
    o.from = From::Register;
    o.reg = reg_of_[id];
  } else if (side == expr::kSideA || side == expr::kSideB) {
    o.from = side == expr::kSideA ? From::RowA : From::RowB;
    o.data = column_of_[id];
    if (!o.data) throw Error(ErrorKind::Internal, "a row node of a pair expression was not hoisted");
  } else if (x.vector) {
    o.from = From::ParamVector;
    o.data = constant_vec_[id].data();
  } else {
    o.from = From::Value;
    o.value = x.op == expr::Op::Const ? x.value : constant_[id];
  }
  return o;
}

void ExpressionRows::run_steps(const std::vector<Step>& steps, std::size_t i, std::size_t j0, std::size_t n,
                               std::size_t k, double* regs) const {
  const auto src = [&](const Operand& o) -> Src {
    switch (o.from) {
      case From::Value: return {&o.value, true};
      case From::ParamVector: return {o.data + k, true};
      case From::RowA: return {o.vector ? o.data + k * na_ + i : o.data + i, true};
      case From::RowB: return {o.vector ? o.data + k * nb_ + j0 : o.data + j0, false};
      case From::Register: break;
    }
    return {regs + static_cast<std::size_t>(o.reg) * kLanes, false};
  };
  static const double zero = 0.0;
  for (const Step& st : steps) {
    double* r = regs + static_cast<std::size_t>(st.dst) * kLanes;
    const Src x = st.nargs > 0 ? src(st.args[0]) : Src{&zero, true};
    if (expr::is_reduction(st.op)) {
      if (k == 0 && st.op == Op::Sum) lanes1([](double u) { return 0.0 + u; }, x, r, n);
      else if (k == 0) lanes1([](double u) { return u; }, x, r, n);
      else if (st.op == Op::Sum) lanes2([](double u, double v) { return u + v; }, Src{r, false}, x, r, n);
      else lanes2(st.op == Op::ReduceMin ? expr::op_min : expr::op_max, Src{r, false}, x, r, n);
      continue;
    }
    const Src y = st.nargs > 1 ? src(st.args[1]) : Src{&zero, true};
    const Src z = st.nargs > 2 ? src(st.args[2]) : Src{&zero, true};
    exec(st.op, st.index, x, y, z, r, n);
  }
}

void ExpressionRows::row(std::size_t i, std::size_t j0, std::size_t n, double* out, Workspace& w) const {
  if (compiled_) {
    const expr::TbRowArgs args{slot_column_.data(), slot_value_.data(), na_, nb_, static_cast<unsigned long long>(dim_), i, j0, n, out};
    compiled_(&args);
    return;
  }
  double* regs = w.regs.data();
  const bool predicate = c_.result == ValueType::Bool;
  const std::size_t d = static_cast<std::size_t>(dim_);
  for (std::size_t s = 0; s < n; s += kLanes) {
    const std::size_t m = std::min(kLanes, n - s), j = j0 + s;
    run_steps(before_, i, j, m, 0, regs);
    if (!per_k_.empty())
      for (std::size_t k = 0; k < d; ++k) run_steps(per_k_, i, j, m, k, regs);
    run_steps(after_, i, j, m, 0, regs);
    double* o = out + s;
    const Operand& r = root_;
    for (std::size_t t = 0; t < m; ++t) {
      double v;
      switch (r.from) {
        case From::Value: v = r.value; break;
        case From::RowA: v = r.data[i]; break;
        case From::RowB: v = r.data[j + t]; break;
        default: v = regs[static_cast<std::size_t>(r.reg) * kLanes + t]; break;
      }
      o[t] = predicate ? (v == 1.0 ? 1.0 : expr::nan_value()) : v;
    }
  }
}

}  // namespace twobody::cpu
