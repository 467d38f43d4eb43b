#include "twobody/detail/expr/emit_common.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "twobody/error.hpp"

namespace twobody::expr {

const Dialect kHostDialect{"tb::", "std::fabs", "std::sqrt", "twobody::portable::exp", "twobody::portable::log_any",
                           "twobody::portable::pow"};
// fabs and sqrt are CUDA's (exact: IEEE's correctly rounded square root); exp, log and pow are the
// kernel library's wrappers of twobody::portable (expression_kernels.cu), linked in by nvJitLink.
const Dialect kDeviceDialect{"tb_", "fabs", "sqrt", "tb_exp", "tb_log", "tb_pow"};

PairSchedule pair_schedule(const Compiled& c) {
  PairSchedule s;
  s.late.assign(c.g.nodes.size(), 0);
  for (int id : c.pair_nodes) {
    const Node& x = c.g.nodes[static_cast<std::size_t>(id)];
    bool late = is_reduction(x.op);
    for (int a : x.arg)
      if (a >= 0 && c.is_pair(a) && s.late[static_cast<std::size_t>(a)]) late = true;
    s.late[static_cast<std::size_t>(id)] = late;
    if (x.vector || is_reduction(x.op)) s.per_k.push_back(id);
    else (late ? s.after : s.before).push_back(id);
  }
  return s;
}

std::string literal(double v, const Dialect& d) {
  if (std::isfinite(v)) return fmt::format("({:a})", v);
  std::uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  return fmt::format("{}from_bits({:#x}ull)", d.helpers, u);
}

std::string apply_text(Op op, int index, const std::string& x, const std::string& y, const std::string& z,
                       const Dialect& d) {
  const char* h = d.helpers;
  switch (op) {
    case Op::Neg: return fmt::format("(-{})", x);
    case Op::Add: return fmt::format("({} + {})", x, y);
    case Op::Sub: return fmt::format("({} - {})", x, y);
    case Op::Mul: return fmt::format("({} * {})", x, y);
    case Op::Div: return fmt::format("({} / {})", x, y);
    case Op::PowInt: return fmt::format("{}op_pow_int({}, {})", h, x, index);
    case Op::Pow: return fmt::format("{}({}, {})", d.pow, x, y);
    case Op::Abs: return fmt::format("{}({})", d.fabs, x);
    case Op::Sqrt: return fmt::format("{}({})", d.sqrt, x);
    case Op::Exp: return fmt::format("{}({})", d.exp, x);
    case Op::Log: return fmt::format("{}({})", d.log, x);
    case Op::Min2: return fmt::format("{}op_min({}, {})", h, x, y);
    case Op::Max2: return fmt::format("{}op_max({}, {})", h, x, y);
    case Op::Less: return fmt::format("{}truth({} < {})", h, x, y);
    case Op::LessEq: return fmt::format("{}truth({} <= {})", h, x, y);
    case Op::Greater: return fmt::format("{}truth({} > {})", h, x, y);
    case Op::GreaterEq: return fmt::format("{}truth({} >= {})", h, x, y);
    case Op::Equal: return fmt::format("{}truth({} == {})", h, x, y);
    case Op::NotEqual: return fmt::format("{}truth({} != {})", h, x, y);
    case Op::And: return fmt::format("{}truth({} != 0 && {} != 0)", h, x, y);
    case Op::Or: return fmt::format("{}truth({} != 0 || {} != 0)", h, x, y);
    case Op::Not: return fmt::format("{}truth({} == 0)", h, x);
    case Op::If: return fmt::format("({} != 0 ? {} : {})", x, y, z);
    case Op::Filter: return fmt::format("({} != 0 ? {} : {}nan_value())", x, y, h);
    default: throw Error(ErrorKind::Internal, "an operation the code generators do not know");
  }
}

}  // namespace twobody::expr
