// The compiled CPU evaluator's source (emit_rows.hpp). The program is the interpreter's
// (expression_rows.cpp): pair scalars before the loop over k, the Vector nodes and the reductions'
// steps inside it (k = 0 … d−1, stored order; k = 0 starts each reduction as reduce_step does),
// the scalars that read a reduction after it; every operation is the text of ops.hpp's.
#include "twobody/detail/expr/emit_rows.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <set>

#include "twobody/detail/expr/rows_abi.hpp"
#include "twobody/error.hpp"

namespace twobody::expr {

namespace {

#define TWOBODY_STR2(...) #__VA_ARGS__
#define TWOBODY_STR(...) TWOBODY_STR2(__VA_ARGS__)

// ops.hpp's operations, as the generated code writes them (tests compare the bits of both).
constexpr const char* kOps = R"(
namespace tb {
inline double nan_value() { return twobody::portable::detail::nan(); }
inline double op_min(double x, double y) { return (x != x || y != y) ? nan_value() : (y < x ? y : x); }
inline double op_max(double x, double y) { return (x != x || y != y) ? nan_value() : (y > x ? y : x); }
inline double op_pow_int(double x, int n) {
  const int m = n < 0 ? -n : n;
  double p = m == 0 ? 1.0 : x;
  for (int k = 1; k < m; ++k) p = p * x;
  return n < 0 ? 1.0 / p : p;
}
inline double truth(bool b) { return b ? 1.0 : 0.0; }
inline double from_bits(unsigned long long u) { return twobody::portable::detail::from_bits(u); }
}  // namespace tb
)";

constexpr std::size_t kLanes = 256;  // as ExpressionRows::kLanes: partners a block

std::string literal(double v) {
  if (std::isfinite(v)) return fmt::format("({:a})", v);
  std::uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  return fmt::format("tb::from_bits({:#x}ull)", u);
}

// The expression of one element-wise operation on argument texts x, y, z (ops.hpp's apply_op).
std::string apply_text(Op op, int index, const std::string& x, const std::string& y, const std::string& z) {
  switch (op) {
    case Op::Neg: return fmt::format("(-{})", x);
    case Op::Add: return fmt::format("({} + {})", x, y);
    case Op::Sub: return fmt::format("({} - {})", x, y);
    case Op::Mul: return fmt::format("({} * {})", x, y);
    case Op::Div: return fmt::format("({} / {})", x, y);
    case Op::PowInt: return fmt::format("tb::op_pow_int({}, {})", x, index);
    case Op::Pow: return fmt::format("twobody::portable::pow({}, {})", x, y);
    case Op::Abs: return fmt::format("std::fabs({})", x);
    case Op::Sqrt: return fmt::format("std::sqrt({})", x);
    case Op::Exp: return fmt::format("twobody::portable::exp({})", x);
    case Op::Log: return fmt::format("twobody::portable::log_any({})", x);
    case Op::Min2: return fmt::format("tb::op_min({}, {})", x, y);
    case Op::Max2: return fmt::format("tb::op_max({}, {})", x, y);
    case Op::Less: return fmt::format("tb::truth({} < {})", x, y);
    case Op::LessEq: return fmt::format("tb::truth({} <= {})", x, y);
    case Op::Greater: return fmt::format("tb::truth({} > {})", x, y);
    case Op::GreaterEq: return fmt::format("tb::truth({} >= {})", x, y);
    case Op::Equal: return fmt::format("tb::truth({} == {})", x, y);
    case Op::NotEqual: return fmt::format("tb::truth({} != {})", x, y);
    case Op::And: return fmt::format("tb::truth({} != 0 && {} != 0)", x, y);
    case Op::Or: return fmt::format("tb::truth({} != 0 || {} != 0)", x, y);
    case Op::Not: return fmt::format("tb::truth({} == 0)", x);
    case Op::If: return fmt::format("({} != 0 ? {} : {})", x, y, z);
    case Op::Filter: return fmt::format("({} != 0 ? {} : tb::nan_value())", x, y);
    default: throw Error(ErrorKind::Internal, "an operation the CPU code generator does not know");
  }
}

enum class Phase { Before, PerK, After };

class RowsEmitter {
 public:
  explicit RowsEmitter(const Compiled& c) : c_(c), g_(c.g), late_(g_.nodes.size(), 0) {
    for (int id : c.pair_nodes) {
      const Node& x = g_.nodes[id];
      bool late = is_reduction(x.op);
      for (int a : x.arg)
        if (a >= 0 && c.is_pair(a) && late_[a]) late = true;
      late_[id] = late;
      if (x.vector || is_reduction(x.op)) per_k_.push_back(id);
      else (late ? after_ : before_).push_back(id);
    }
  }

  std::string source() {
    // The statements first: they decide which operands need declarations.
    std::string before, first_k, next_k, after;
    for (int id : before_) before += fmt::format("      const double p{} = {};\n", id, value_of(id, Phase::Before));
    for (int id : per_k_) {
      first_k += step(id, true);
      next_k += step(id, false);
    }
    for (int id : after_) after += fmt::format("      const double p{} = {};\n", id, value_of(id, Phase::After));
    const bool loop_k = !per_k_.empty();
    const Phase last = loop_k || !after_.empty() ? Phase::After : Phase::Before;
    const std::string root = ref(g_.root, last);
    const std::string store_out = c_.result == ValueType::Bool
                                      ? fmt::format("      out[t] = {} == 1.0 ? 1.0 : tb::nan_value();\n", root)
                                      : fmt::format("      out[t] = {};\n", root);
    for (int id : before_)
      if (stored_.count(id)) before += fmt::format("      S{}[t] = p{};\n", id, id);

    std::string s = "// Generated by twobody (src/expr/emit_rows.cpp): a pair expression's CPU evaluator.\n";
    s += fmt::format("// canonical: {}\n// value: {}\n", c_.canonical, c_.result == ValueType::Bool ? "Bool" : "Scalar");
    s += kRowsPrelude;
    s += kOps;
    s += "struct TbRowArgs {\n  " TWOBODY_STR(TWOBODY_ROW_ARGS_FIELDS) "\n};\n";
    s += fmt::format("extern \"C\" int tb_rows_abi() {{ return {}; }}\n", kRowsAbi);
    s += "extern \"C\" void tb_rows(const TbRowArgs* args) {\n";
    s += "  const unsigned long long na = args->na, nb = args->nb, d = args->d, i = args->i;\n";
    s += "  (void)na; (void)nb; (void)d; (void)i;\n";
    s += outer_;
    s += fmt::format("  for (unsigned long long s = 0; s < args->n; s += {}) {{\n", kLanes);
    s += fmt::format("    const unsigned long long m = args->n - s < {0} ? args->n - s : {0}, j = args->j0 + s;\n", kLanes);
    s += "    double* const out = args->out + s;\n    (void)j;\n";
    s += inner_;
    for (int id : stored_) s += fmt::format("    double S{}[{}];\n", id, kLanes);
    for (int id : per_k_)
      if (is_reduction(g_.nodes[id].op)) s += fmt::format("    double R{}[{}];\n", id, kLanes);
    s += "    for (unsigned long long t = 0; t < m; ++t) {\n" + before;
    if (last == Phase::Before) s += store_out;
    s += "    }\n";
    if (loop_k) {
      s += "    {\n      const unsigned long long k = 0;\n      for (unsigned long long t = 0; t < m; ++t) {\n" + first_k +
           "      }\n    }\n";
      s += "    for (unsigned long long k = 1; k < d; ++k)\n      for (unsigned long long t = 0; t < m; ++t) {\n" + next_k +
           "      }\n";
    }
    if (last == Phase::After) s += "    for (unsigned long long t = 0; t < m; ++t) {\n" + after + store_out + "    }\n";
    s += "  }\n}\n";
    return s;
  }

 private:
  // One step inside the loop over k: a Vector node's element k, or a reduction's update.
  std::string step(int id, bool first) {
    const Node& x = g_.nodes[id];
    if (!is_reduction(x.op)) return fmt::format("        const double v{} = {};\n", id, value_of(id, Phase::PerK));
    const std::string v = ref(x.arg[0], Phase::PerK);
    if (x.op == Op::Sum) return fmt::format("        R{0}[t] = {1} + {2};\n", id, first ? "0.0" : fmt::format("R{}[t]", id), v);
    if (first) return fmt::format("        R{}[t] = {};\n", id, v);
    return fmt::format("        R{0}[t] = tb::{1}(R{0}[t], {2});\n", id, x.op == Op::ReduceMin ? "op_min" : "op_max", v);
  }

  std::string value_of(int id, Phase phase) {
    const Node& x = g_.nodes[id];
    std::string a[3];
    for (int k = 0; k < x.arity(); ++k) a[k] = ref(x.arg[k], phase);
    return apply_text(x.op, x.index, a[0], a[1], a[2]);
  }

  // The text that reads node `id` from a statement of `phase`, declaring what it needs.
  std::string ref(int id, Phase phase) {
    const Node& x = g_.nodes[id];
    const int side = x.side & kSidePair;
    if (side == kSidePair) {
      if (is_reduction(x.op)) return fmt::format("R{}[t]", id);
      if (x.vector) return fmt::format("v{}", id);
      if (phase == Phase::Before || (phase == Phase::After && late_[id])) return fmt::format("p{}", id);
      stored_.insert(id);
      return fmt::format("S{}[t]", id);
    }
    if (side == kSideA) {
      if (declared_.insert(id).second) {
        if (x.vector) outer_ += fmt::format("  const double* const A{0} = args->column[{0}] + i;\n", id);
        else outer_ += fmt::format("  const double a{0} = args->column[{0}][i];\n", id);
      }
      return x.vector ? fmt::format("A{}[k * na]", id) : fmt::format("a{}", id);
    }
    if (side == kSideB) {
      if (declared_.insert(id).second) inner_ += fmt::format("    const double* const B{0} = args->column[{0}] + j;\n", id);
      return x.vector ? fmt::format("B{}[k * nb + t]", id) : fmt::format("B{}[t]", id);
    }
    if (x.op == Op::Const) return literal(x.value);
    if (declared_.insert(id).second) {
      if (x.vector) outer_ += fmt::format("  const double* const q{0} = args->column[{0}];\n", id);
      else outer_ += fmt::format("  const double c{0} = args->value[{0}];\n", id);
    }
    return x.vector ? fmt::format("q{}[k]", id) : fmt::format("c{}", id);
  }

  const Compiled& c_;
  const Graph& g_;
  std::vector<char> late_;
  std::vector<int> before_, per_k_, after_;
  std::set<int> stored_, declared_;
  std::string outer_, inner_;  // declarations: once a call, once a block of partners
};

}  // namespace

std::string emit_rows_source(const Compiled& c) { return RowsEmitter(c).source(); }

}  // namespace twobody::expr
