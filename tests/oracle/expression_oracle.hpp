#pragma once
// An independent float64 oracle for pair expressions: each test expression written again by hand
// as plain C++ over one pair (a loop over k for each reduction, in stored order, the sum from +0;
// exp, log and pow from twobody::portable, as the rule says), and every output computed from the
// list of all pairs by brute force. Nothing here reads the IR or the interpreter.
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "twobody/exact_sums.hpp"
#include "twobody/extend/portable_math.hpp"

namespace oracle {

struct Rows {
  std::size_t n = 0;
  int d = 0;
  std::vector<double> x;                    // row-major n × d
  std::map<std::string, std::vector<double>> col;
  const double* row(std::size_t i) const { return x.data() + i * static_cast<std::size_t>(d); }
};

struct Pt {
  const Rows* t;
  std::size_t i;
  double operator[](int k) const { return t->row(i)[k]; }
  double c(const char* name) const { return t->col.at(name)[i]; }
  int d() const { return t->d; }
};

// The value of a pair; NaN for none (a predicate false, a where false, or NaN itself).
using PairValue = std::function<double(const Pt& a, const Pt& b)>;

struct Valued {
  std::uint64_t i, j;
  double v;
};

// Every pair (auto: i < j) with its value, NaN included, in (i, j) order.
inline std::vector<Valued> all_pairs(const PairValue& f, const Rows& a, const Rows* b) {
  std::vector<Valued> out;
  const Rows& bb = b ? *b : a;
  for (std::size_t i = 0; i < a.n; ++i)
    for (std::size_t j = b ? 0 : i + 1; j < bb.n; ++j) out.push_back({i, j, f(Pt{&a, i}, Pt{&bb, j})});
  return out;
}

// Σ of the non-NaN values, exactly as the documented rule: each rounded onto the grid of the
// largest |value| (exact_sums.hpp), the integers added.
inline std::pair<double, std::uint64_t> exact_sum(const std::vector<double>& v) {
  double m = 0;
  for (double x : v)
    if (x == x) m = std::fmax(m, std::fabs(x));
  const twobody::SumGrid g = twobody::SumGrid::for_bound(m);
  twobody::FixedSum s = 0;
  std::uint64_t n = 0;
  for (double x : v)
    if (x == x) {
      s += g.steps(x);
      ++n;
    }
  return {g.value(s), n};
}

inline double minimum(double x, double y) { return (x != x || y != y) ? NAN : (y < x ? y : x); }
inline double maximum(double x, double y) { return (x != x || y != y) ? NAN : (y > x ? y : x); }

}  // namespace oracle
