#pragma once
// The pair expressions that tests run against the oracle (tests/oracle/expression_oracle.hpp), each
// with its hand-written float64 value, and the data they run on: shared by expression_run_test
// (every output) and expression_codegen_test (the compiled evaluator, value by value).
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "oracle/expression_oracle.hpp"
#include "twobody/extend/portable_math.hpp"
#include "twobody/pair_table.hpp"

namespace expression_cases {

using oracle::Pt;
namespace portable = twobody::portable;

struct Case {
  const char* text;
  const char* where;
  oracle::PairValue f;
  bool predicate = false;
};

inline double dist2(const Pt& a, const Pt& b) {
  double s = 0;
  for (int k = 0; k < a.d(); ++k) {
    const double t = a[k] - b[k];
    s = s + t * t;
  }
  return s;
}

inline const double kP = 3, kH = 0.7;
inline const double kNone = std::numeric_limits<double>::quiet_NaN();

inline std::vector<Case> cases() {
  return {
      {"sqrt(sum((a-b)^2))", "", [](const Pt& a, const Pt& b) { return std::sqrt(dist2(a, b)); }},
      {"sum(abs(a - b)^p)^(1/p)", "",
       [](const Pt& a, const Pt& b) {
         double s = 0;
         for (int k = 0; k < a.d(); ++k) s = s + portable::pow(std::fabs(a[k] - b[k]), kP);
         return portable::pow(s, 1 / kP);
       }},
      {"exp(-dot(a-b, a-b)/(2*h^2))", "", [](const Pt& a, const Pt& b) { return portable::exp(-dist2(a, b) / (2 * (kH * kH))); }},
      {"a.t < b.t and abs(a.x - b.x) < 5", "",
       [](const Pt& a, const Pt& b) { return (a.c("t") < b.c("t") && std::fabs(a.c("x") - b.c("x")) < 5) ? 1.0 : kNone; },
       true},
      {"1 - dot(a, b)/(norm(a)*norm(b))", "",
       [](const Pt& a, const Pt& b) {
         double ab = 0, aa = 0, bb = 0;
         for (int k = 0; k < a.d(); ++k) {
           ab = ab + a[k] * b[k];
           aa = aa + a[k] * a[k];
           bb = bb + b[k] * b[k];
         }
         return 1 - ab / (std::sqrt(aa) * std::sqrt(bb));
       }},
      {"sqrt(a.x - b.x) + log(a.t + 1) * b.y", "",  // NaN where a.x < b.x: no value
       [](const Pt& a, const Pt& b) { return std::sqrt(a.c("x") - b.c("x")) + portable::log_any(a.c("t") + 1) * b.c("y"); }},
      {"a.x - b.x", "a.t <= b.t", [](const Pt& a, const Pt& b) { return a.c("t") <= b.c("t") ? a.c("x") - b.c("x") : kNone; }},
      {"max(abs(a-b)) + min(a*b)", "",
       [](const Pt& a, const Pt& b) {
         double m = std::fabs(a[0] - b[0]), n = a[0] * b[0];
         for (int k = 1; k < a.d(); ++k) {
           m = oracle::maximum(m, std::fabs(a[k] - b[k]));
           n = oracle::minimum(n, a[k] * b[k]);
         }
         return m + n;
       }},
      {"if(a.t == b.t, (a.x - b.x)^3, -(a.y*b.z)^2)", "a.x + b.x > 0",
       [](const Pt& a, const Pt& b) {
         if (!(a.c("x") + b.c("x") > 0)) return kNone;
         const double u = a.c("x") - b.c("x"), v = a.c("y") * b.c("z");
         return a.c("t") == b.c("t") ? (u * u) * u : -(v * v);
       }},
      // Cutoffs on the points' distance (src/expr/cutoff.hpp): the CPU may take a cell grid, which
      // must give what every pair gives. In a --where of the coordinates written out:
      {"a.t * b.t - b.x", "sqrt((a[0]-b[0])^2 + (a[1]-b[1])^2 + (a[2]-b[2])^2) < 1.5",
       [](const Pt& a, const Pt& b) { return std::sqrt(dist2(a, b)) < 1.5 ? a.c("t") * b.c("t") - b.c("x") : kNone; }},
      // in an asymmetric predicate, squared, against a parameter's expression:
      {"dot(a-b, a-b) <= h*2 and a.t < b.t", "",
       [](const Pt& a, const Pt& b) { return (dist2(a, b) <= kH * 2 && a.c("t") < b.c("t")) ? 1.0 : kNone; }, true},
      // with a value symmetric bit for bit (the grid's half shell on auto runs):
      {"a.t * b.t / (1 + sum((a-b)^2))", "norm(a - b) < 1.2",
       [](const Pt& a, const Pt& b) {
         return std::sqrt(dist2(a, b)) < 1.2 ? a.c("t") * b.c("t") / (1 + dist2(a, b)) : kNone;
       }},
      // as b - a, with a value whose sums and extremes it bounds:
      {"exp(-sum((a-b)^2)/h) * (a.t + 1)", "norm(b - a) < 2*h",
       [](const Pt& a, const Pt& b) {
         return std::sqrt(dist2(a, b)) < 2 * kH ? portable::exp(-dist2(a, b) / kH) * (a.c("t") + 1) : kNone;
       }},
      // More scalars of each side than the GPU's slots (18 > 16) and more nodes than its
      // parameter bank's columns (pair_abi.hpp): the rest read from the columns.
      {"(a.x + 1)*(b.y - 1) + (a.x + 2)*(b.y - 2) + (a.x + 3)*(b.y - 3) + (a.x + 4)*(b.y - 4) + (a.x + 5)*(b.y - 5) + (a.x + 6)*(b.y - 6) + (a.x + 7)*(b.y - 7) + (a.x + 8)*(b.y - 8) + (a.x + 9)*(b.y - 9) + (a.x + 10)*(b.y - 10) + (a.x + 11)*(b.y - 11) + (a.x + 12)*(b.y - 12) + (a.x + 13)*(b.y - 13) + (a.x + 14)*(b.y - 14) + (a.x + 15)*(b.y - 15) + (a.x + 16)*(b.y - 16) + (a.x + 17)*(b.y - 17) + (a.x + 18)*(b.y - 18)", "",
       [](const Pt& a, const Pt& b) {
         double s = (a.c("x") + 1) * (b.c("y") - 1);
         for (int k = 2; k <= 18; ++k) s = s + (a.c("x") + k) * (b.c("y") - k);
         return s;
       }},
  };
}

// Points of dimension 3 with columns x, y, z (the coordinates again) and t (an integer key).
inline oracle::Rows make_rows(int kind, std::size_t n, std::mt19937_64& rng) {
  oracle::Rows r;
  r.n = n;
  r.d = 3;
  std::uniform_real_distribution<double> u(-2, 2);
  for (std::size_t i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) {
      double v = u(rng);
      if (kind == 1) v = std::round(v * 2) / 2;          // a lattice: values on the edges
      if (kind == 2) v = 1e8 + v;                         // a large offset
      if (kind == 3 && i % 3 == 1) v = r.x[(i - 1) * 3 + k];  // duplicates
      r.x.push_back(v);
    }
  const char* names[] = {"x", "y", "z"};
  for (int k = 0; k < 3; ++k)
    for (std::size_t i = 0; i < n; ++i) r.col[names[k]].push_back(r.x[i * 3 + k]);
  for (std::size_t i = 0; i < n; ++i) r.col["t"].push_back(static_cast<double>(rng() % 4));
  return r;
}

inline twobody::PairTable table_of(const oracle::Rows& r) {
  return twobody::PairTable(twobody::VectorSet::from_rows(r.x, r.n, 3), {"x", "y", "z", "t"},
                            {r.col.at("x"), r.col.at("y"), r.col.at("z"), r.col.at("t")});
}

}  // namespace expression_cases
