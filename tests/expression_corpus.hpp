#pragma once
// The corpus of pair expressions the front-end tests parse (expression_parse_test), the compiled
// evaluator runs (expression_codegen_test) and the fuzz target starts from (tests/fuzz): valid
// texts with their canonical forms and classes, and invalid ones with their golden messages. The
// first ones are written here; the rest are lines of tests/expression_corpus/valid.txt (text, tab,
// canonical form, tab, class) and invalid.txt (text, tab, message with "\n" for its line breaks).
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "twobody/expression.hpp"

namespace expression_corpus {

struct Valid {
  std::string text, canonical;
  twobody::FunctionClass cls;
};
struct Invalid {
  std::string text, message;
};

inline std::string corpus_file(const char* name) { return std::string(TWOBODY_TESTS_DIR) + "/expression_corpus/" + name; }

// The lines of a corpus file, each split at its tabs.
inline std::vector<std::vector<std::string>> corpus_lines(const char* name) {
  std::ifstream in(corpus_file(name));
  if (!in) throw std::runtime_error("cannot read " + corpus_file(name));
  std::vector<std::vector<std::string>> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    std::vector<std::string> fields;
    for (std::size_t s = 0, e; s <= line.size(); s = e + 1) {
      e = std::min(line.find('\t', s), line.size());
      fields.push_back(line.substr(s, e - s));
    }
    out.push_back(std::move(fields));
  }
  return out;
}

inline twobody::FunctionClass class_named(const std::string& s) {
  if (s == "pointwise") return twobody::FunctionClass::Pointwise;
  if (s == "decomposable") return twobody::FunctionClass::Decomposable;
  if (s == "dot-like") return twobody::FunctionClass::DotLike;
  throw std::runtime_error("unknown class " + s);
}

inline std::vector<Valid> valid() {
  using twobody::FunctionClass;
  std::vector<Valid> corpus = {
      {"sum(abs(a - b)^p)^(1/p)", "pow(sum(pow(abs((a - b)), $0)), (1 / $0))", FunctionClass::Decomposable},
      {"exp(-dot(a-b, a-b)/(2*h^2))", "exp(((-sum(((a - b) * (a - b)))) / (2 * ($0 ^ 2))))", FunctionClass::Decomposable},
      {"a.t < b.t and abs(a.x - b.x) < 5", "((a.t < b.t) and (abs((a.x - b.x)) < 5))", FunctionClass::Pointwise},
      {"sum((a-b)^2)", "sum(((a - b) ^ 2))", FunctionClass::Decomposable},
      {"sqrt(sum((a-b)^2))", "sqrt(sum(((a - b) ^ 2)))", FunctionClass::Decomposable},
      {"1 - dot(a, b)/(norm(a)*norm(b))", "(1 - (sum((a * b)) / (sqrt(sum((a * a))) * sqrt(sum((b * b))))))",
       FunctionClass::DotLike},
      {"dot(a - mean(a), b - mean(b)) / (norm(a - mean(a)) * norm(b - mean(b)))",
       "(sum(((a - (sum(a) / 3)) * (b - (sum(b) / 3)))) / (sqrt(sum(((a - (sum(a) / 3)) * (a - (sum(a) / 3))))) * "
       "sqrt(sum(((b - (sum(b) / 3)) * (b - (sum(b) / 3)))))))",
       FunctionClass::DotLike},
      {"max(abs(a - b))", "max(abs((a - b)))", FunctionClass::Decomposable},
      {"min(a.x, b.x) + max(a.y, b.y)", "(min(a.x, b.x) + max(a.y, b.y))", FunctionClass::Pointwise},
      {"2*3 + a[0]*b[2]", "(6 + (a[0] * b[2]))", FunctionClass::Pointwise},
      {"a[0]*2*3 - b[1]", "(((a[0] * 2) * 3) - b[1])", FunctionClass::Pointwise},
      {"-a.x^2 + b.x", "((-(a.x ^ 2)) + b.x)", FunctionClass::Pointwise},
      {"2^-1 * a.x - b.x", "((0.5 * a.x) - b.x)", FunctionClass::Pointwise},
      {"a.x^b.x^2", "pow(a.x, (b.x ^ 2))", FunctionClass::Pointwise},
      {"if(a.t > b.t, a.t - b.t, 0)", "if((a.t > b.t), (a.t - b.t), 0)", FunctionClass::Pointwise},
      {"not a.t == b.t or a.x != b.x", "((not (a.t == b.t)) or (a.x != b.x))", FunctionClass::Pointwise},
      {"sum(w * (a - b)^2)", "sum(($0 * ((a - b) ^ 2)))", FunctionClass::Decomposable},
      {"sum(if(a > b, a - b, 0))", "sum(if((a > b), (a - b), 0))", FunctionClass::Decomposable},
      {"log(1 + a.x*b.x) + exp(a.y) * pow(b.z, 0.5)", "(log((1 + (a.x * b.x))) + (exp(a.y) * pow(b.z, 0.5)))",
       FunctionClass::Pointwise},
      {"d * a.x - b.x", "((3 * a.x) - b.x)", FunctionClass::Pointwise},
      {"1.5e3 - .25 + a.x / b.x", "(1499.75 + (a.x / b.x))", FunctionClass::Pointwise},
      {"(a.x - b.x)^-2", "((a.x - b.x) ^ -2)", FunctionClass::Pointwise},
      {"sum(a - b) + sum((a - b)^2) + max(a * b) + min(a + b)", "(((sum((a - b)) + sum(((a - b) ^ 2))) + max((a * b))) + min((a + b)))",
       FunctionClass::Decomposable},
      {"a.x < 1", "(a.x < 1)", FunctionClass::Pointwise},
  };
  for (const auto& f : corpus_lines("valid.txt")) corpus.push_back({f.at(0), f.at(1), class_named(f.at(2))});
  return corpus;
}

inline std::vector<Invalid> invalid_from_file() {
  std::vector<Invalid> corpus;
  for (const auto& f : corpus_lines("invalid.txt")) {
    std::string m = f.at(1);
    for (std::size_t k = m.find("\\n"); k != std::string::npos; k = m.find("\\n", k + 1)) m.replace(k, 2, "\n");
    corpus.push_back({f.at(0), m});
  }
  return corpus;
}

}  // namespace expression_corpus
