// Fuzz target for the pair-expression front end and the CPU's evaluators: any text must either
// parse, or end in twobody::Error(Config); a text that parses must explain itself, emit its
// compiled evaluator's source and evaluate on a few adversarial points (zeros, a negative, a
// duplicate, a huge and a tiny value) through the interpreter without a crash, a hang or a
// sanitizer report. The input is the pair function, optionally a tab and a --where predicate.
// Built by scripts/fuzz-expressions under libFuzzer (clang, ASan, UBSan); the CPU suite runs it
// on the corpus and on random mutations of it (tests/expression_fuzz_test.cpp).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "twobody/detail/cpu/expression_rows.hpp"
#include "twobody/detail/expr/emit_rows.hpp"
#include "twobody/error.hpp"
#include "twobody/expression.hpp"

namespace {

const twobody::PairTable& fuzz_table() {
  static const twobody::PairTable t = [] {
    const std::vector<double> x = {0, 0, 0, 1, -2, 3.5, 1, -2, 3.5, 1e300, -1e-300, 5e-324, -0.0, 7, 1e8};
    std::vector<std::vector<double>> cols(4);
    for (std::size_t i = 0; i < 5; ++i) {
      for (int k = 0; k < 3; ++k) cols[k].push_back(x[i * 3 + k]);
      cols[3].push_back(static_cast<double>(i % 2));
    }
    return twobody::PairTable(twobody::VectorSet::from_rows(x, 5, 3), {"x", "y", "z", "t"}, cols);
  }();
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 2048) return 0;  // the parser is recursive: depth grows with the text
  const std::string in(reinterpret_cast<const char*>(data), size);
  const std::size_t tab = in.find('\t');
  const std::string text = in.substr(0, tab), where = tab == std::string::npos ? "" : in.substr(tab + 1);
  twobody::ExpressionParams params;
  params.scalars = {{"p", 3.0}, {"h", 0.5}, {"eps", 0.1}};
  params.vectors = {{"w", {1.0, 2.0, 0.5}}};
  const twobody::PairTable& t = fuzz_table();
  try {
    const auto f = twobody::PairExpression::parse(text, t.schema(), nullptr, params, where);
    if (f.explain().empty() || f.canonical().empty()) std::abort();
    if (twobody::expr::emit_rows_source(f.compiled()).find("tb_rows") == std::string::npos) std::abort();
    twobody::cpu::ExpressionRows rows(f.compiled(), t, t, 1);
    auto ws = rows.workspace();
    double out[5];
    for (std::size_t i = 0; i < 5; ++i) {
      rows.row(i, 0, 5, out, ws);
      for (double v : out)
        if (f.result() == twobody::ValueType::Bool && !(v == 1.0 || v != v)) std::abort();  // a predicate: 1 or NaN
    }
  } catch (const twobody::Error& e) {
    if (e.kind() != twobody::ErrorKind::Config) std::abort();
  }
  return 0;
}
