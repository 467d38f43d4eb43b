// The pair-expression front end (src/expr): a corpus of valid texts with their canonical forms
// and classes, and of invalid ones with their golden messages (column and caret).
#include <gtest/gtest.h>

#include <string>

#include "expression_corpus.hpp"
#include "twobody/error.hpp"
#include "twobody/expression.hpp"

namespace {

using twobody::ExpressionParams;
using twobody::FunctionClass;
using twobody::PairExpression;

twobody::Schema schema() {
  twobody::Schema s;
  s.dim = 3;
  s.names = {"x", "y", "z", "t"};
  s.exact_in_float32 = {false, false, false, true};
  return s;
}

ExpressionParams params() {
  ExpressionParams p;
  p.scalars = {{"p", 3.0}, {"h", 0.5}, {"eps", 0.1}};
  p.vectors = {{"w", {1.0, 2.0, 0.5}}};
  return p;
}

PairExpression parse(const std::string& text, const std::string& where = {}) {
  const auto s = schema();
  return PairExpression::parse(text, s, nullptr, params(), where);
}

std::string error_of(const std::string& text, const std::string& where = {}) {
  try {
    parse(text, where);
  } catch (const twobody::Error& e) {
    EXPECT_EQ(e.kind(), twobody::ErrorKind::Config) << text;
    return e.what();
  }
  return "(no error)";
}

TEST(ExpressionParse, ValidCorpusCanonicalForms) {
  const auto corpus = expression_corpus::valid();
  EXPECT_GE(corpus.size(), 150u);
  for (const auto& v : corpus) {
    SCOPED_TRACE(v.text);
    const PairExpression e = parse(v.text);
    EXPECT_EQ(e.canonical(), v.canonical);
    EXPECT_EQ(e.function_class(), v.cls);
    EXPECT_EQ(e.text(), v.text);
    EXPECT_FALSE(e.explain().empty());
  }
}

TEST(ExpressionParse, HoistingAndTraits) {
  const PairExpression cosine = parse("1 - dot(a, b)/(norm(a)*norm(b))");
  EXPECT_NE(cosine.explain().find("per point of a: sqrt(sum((a * a))) (a scalar, computed once a point)"), std::string::npos)
      << cosine.explain();
  EXPECT_NE(cosine.explain().find("per point of b: sqrt(sum((b * b)))"), std::string::npos);
  const PairExpression nlj = parse("a.t < b.t and abs(a.x - b.x) < 5");
  EXPECT_NE(nlj.explain().find("pointwise (2 per-point columns a side)"), std::string::npos) << nlj.explain();
  EXPECT_EQ(nlj.result(), twobody::ValueType::Bool);
  EXPECT_NE(parse("sum((a-b)^2)").explain().find("squared Euclidean"), std::string::npos);
  EXPECT_NE(parse("sum((a-b)*(a-b))").explain().find("squared Euclidean"), std::string::npos);
  EXPECT_NE(parse("sqrt(sum((a-b)^2))").explain().find("sqrt at the top"), std::string::npos);
  // Common subexpressions are one node: a - mean(a) is computed once a point.
  const PairExpression pearson = parse("dot(a - mean(a), b - mean(b)) / (norm(a - mean(a)) * norm(b - mean(b)))");
  EXPECT_NE(pearson.explain().find("per point of a: (a - (sum(a) / 3)) (a row of d, computed once a point)"), std::string::npos)
      << pearson.explain();
  const PairExpression filtered = parse("a.x - b.x", "a.t < b.t");
  EXPECT_EQ(filtered.canonical(), "where((a.t < b.t), (a.x - b.x))");
  // Parameters are slots: another value, the same canonical form.
  twobody::Schema s = schema();
  ExpressionParams q = params();
  q.scalars["p"] = 7;
  EXPECT_EQ(PairExpression::parse("sum(abs(a - b)^p)", s, nullptr, q).canonical(), parse("sum(abs(a - b)^p)").canonical());
}

struct Invalid {
  const char* text;
  const char* message;
};

TEST(ExpressionParse, InvalidCorpusGoldenMessages) {
  const Invalid corpus[] = {
      {"sum(abs(a - b)^p)^(1/q)",
       "pair function, column 22: unknown name 'q' (parameters: eps, h, p, w; columns of a and b: x, y, z, t)\n"
       "  sum(abs(a - b)^p)^(1/q)\n                       ^"},
      {"a + ", "pair function, column 5: the expression ends where an operand was expected\n  a + \n      ^"},
      {"", "pair function, column 1: the expression is empty\n  \n  ^"},
      {"a < b", "pair function, column 1: the expression is a Vector of Bools: compare scalars; reduce the vectors first\n  a < b\n  ^"},
      {"a - b", "pair function, column 1: the expression is a Vector: reduce it with sum, dot, norm, min, max or mean\n  a - b\n  ^"},
      {"sum(a.x)", "pair function, column 5: sum reduces a Vector over the dimension; this is a Scalar\n  sum(a.x)\n      ^"},
      {"foo(a)", "pair function, column 1: unknown function 'foo' (functions: abs, sqrt, exp, log, pow, min, max, sum, dot, "
                 "norm, mean, if)\n  foo(a)\n  ^"},
      {"sum(a, b)", "pair function, column 1: sum takes one Vector (1), got 2\n  sum(a, b)\n  ^"},
      {"a.q < b.x", "pair function, column 3: a has no column 'q' (its columns: x, y, z, t)\n  a.q < b.x\n    ^"},
      {"a[3] - b[0]", "pair function, column 3: index 3 is beyond the dimension 3 (a[0] … a[2])\n  a[3] - b[0]\n    ^"},
      {"a.x < b.x < 1", "pair function, column 11: comparisons do not chain: write 'x < y and y < z'\n  a.x < b.x < 1\n            ^"},
      {"(a.x < b.x) + 1", "pair function, column 13: '+' of a Bool and a Scalar: arithmetic and comparisons take values\n"
                          "  (a.x < b.x) + 1\n              ^"},
      {"a.x and b.x", "pair function, column 1: and takes Bools (comparisons), not a Scalar\n  a.x and b.x\n  ^"},
      {"a.x ** 2", "pair function, column 5: write powers with '^' ('**' is not an operator)\n  a.x ** 2\n      ^"},
      {"a.x = b.x", "pair function, column 5: '=' is not an operator: compare with '=='\n  a.x = b.x\n      ^"},
      {"a.x && b.x", "pair function, column 5: '&' is not an operator: write 'and'\n  a.x && b.x\n      ^"},
      {"(a.x - b.x", "pair function, column 11: expected ')', found the end\n  (a.x - b.x\n            ^"},
      {"a.x - b.x)", "pair function, column 10: unmatched ')'\n  a.x - b.x)\n           ^"},
      {"2 a.x", "pair function, column 3: expected an operator before 'a'\n  2 a.x\n    ^"},
      {"c.x - b.x", "pair function, column 1: only a and b have columns: write a.x or b.x\n  c.x - b.x\n  ^"},
      {"a[1.5]", "pair function, column 3: an index is a whole number written out (a[0], a[2])\n  a[1.5]\n    ^"},
      {"sum(sum(a - b) * (a - b))", "pair function, column 5: a reduction over the dimension inside another, both of a and b "
                                    "(d² work a pair): reduce one row first or write the two reductions side by side\n"
                                    "  sum(sum(a - b) * (a - b))\n      ^"},
      {"sum(a-b)+sum(a*b)+sum(a+b)+sum(a/b)+max(a-b)", "pair function, column 37: 5 reductions over the dimension of both a and b; at most 4 (each "
                                                      "holds registers a pair)\n  sum(a-b)+sum(a*b)+sum(a+b)+sum(a/b)+max(a-b)\n"
                                                      "                                      ^"},
      {"if(a.x, 1, 2)", "pair function, column 4: if's condition takes Bools (comparisons), not a Scalar\n  if(a.x, 1, 2)\n     ^"},
      {"if(a.x < 1, 1, a.x < 2)", "pair function, column 16: if's branches must be alike: a Scalar and a Bool\n"
                                  "  if(a.x < 1, 1, a.x < 2)\n                 ^"},
      {"a.x $ b.x", "pair function, column 5: unexpected character '$'\n  a.x $ b.x\n      ^"},
      {"1e", "pair function, column 2: a number's exponent needs digits\n  1e\n   ^"},
      {"1e999 * a.x", "pair function, column 1: the number 1e999 is not a finite double\n  1e999 * a.x\n  ^"},
      {"p(a)", "pair function, column 1: 'p' is not a function\n  p(a)\n  ^"},
      {"min(a.x, b.x, 1)", "pair function, column 1: min takes one Vector (its least element) or two values, got 3 arguments\n"
                           "  min(a.x, b.x, 1)\n  ^"},
      {"not a.x", "pair function, column 5: not takes Bools (comparisons), not a Scalar\n  not a.x\n      ^"},
      {"-(a.x < 1)", "pair function, column 3: '-' takes values, not a Bool\n  -(a.x < 1)\n    ^"},
      {"sqrt()", "pair function, column 6: sqrt() needs an argument\n  sqrt()\n       ^"},
      {"if x", "pair function, column 4: expected '(' after 'if': if(condition, then, else)\n  if x\n     ^"},
  };
  for (const Invalid& v : corpus) EXPECT_EQ(error_of(v.text), v.message) << v.text;
  const auto more = expression_corpus::invalid_from_file();
  EXPECT_GE(std::size(corpus) + more.size(), 80u);
  for (const auto& v : more) EXPECT_EQ(error_of(v.text), v.message) << v.text;
  EXPECT_EQ(error_of("a.x - b.x", "a.x + 1"),
            "where predicate, column 1: the predicate is a value: compare it (x < y, x == y)\n  a.x + 1\n  ^");
  EXPECT_EQ(error_of("a.x - b.x", "a.x < "),
            "where predicate, column 7: the expression ends where an operand was expected\n  a.x < \n        ^");
}

TEST(ExpressionParse, ParameterAndSchemaErrors) {
  const twobody::Schema s = schema();
  ExpressionParams bad;
  bad.scalars["sum"] = 1;
  EXPECT_THROW(PairExpression::parse("a.x", s, nullptr, bad), twobody::Error);
  ExpressionParams nan;
  nan.scalars["h"] = std::nan("");
  EXPECT_THROW(PairExpression::parse("a.x", s, nullptr, nan), twobody::Error);
  ExpressionParams shortv;
  shortv.vectors["w"] = {1.0};
  EXPECT_THROW(PairExpression::parse("sum(w*a)", s, nullptr, shortv), twobody::Error);
  twobody::Schema other = s;
  other.dim = 2;
  EXPECT_THROW(PairExpression::parse("a.x", s, &other), twobody::Error);
}

// Every recursive pass stays well inside the stack: the text's length and nesting are limited.
TEST(ExpressionParse, LimitsOfLengthAndNesting) {
  std::string chain = "a.x";
  while (chain.size() < 4000) chain += "+d";
  EXPECT_EQ(parse(chain).function_class(), FunctionClass::Pointwise);
  EXPECT_NE(error_of(chain + std::string(100, '+') + "d").find("column 4097: the text is longer than 4096 characters"), std::string::npos);
  const std::string deep = std::string(250, '(') + "a.x" + std::string(250, ')');
  EXPECT_NE(error_of(deep).find("column 201: nested more than 200 deep"), std::string::npos) << error_of(deep);
  EXPECT_NE(error_of(std::string(300, '-') + "a.x").find("nested more than 200 deep"), std::string::npos);
  std::string tower = "a.x";
  for (int k = 0; k < 300; ++k) tower += "^a.x";
  EXPECT_NE(error_of(tower).find("nested more than 200 deep"), std::string::npos);
  EXPECT_EQ(parse(std::string(150, '(') + "a.x" + std::string(150, ')')).canonical(), "a.x");
}

}  // namespace
