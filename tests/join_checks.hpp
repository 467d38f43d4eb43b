#pragma once
// A join checked against the float64 rule written apart (oracle/vector_brute_force.hpp): its pairs
// (i, j and distance, bit for bit), total, per-vector counts and neighbour lists, through every
// join output. Shared by the join tests of every traversal (brute force, EGO).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "oracle/vector_brute_force.hpp"
#include "twobody/joins.hpp"

namespace testing_support {

inline oracle::Rows rows_of(const twobody::VectorSet& v) {
  oracle::Rows r;
  r.n = v.size();
  r.d = v.dim();
  r.v.resize(r.n * static_cast<std::size_t>(r.d));
  for (std::size_t i = 0; i < r.n; ++i) v.row_f64(i, r.v.data() + i * static_cast<std::size_t>(r.d));
  return r;
}

// The key limit of eps, as the join states it.
inline double limit_of(double eps, twobody::Metric m) { return m == twobody::Metric::Cosine ? eps : eps * eps; }

// `run`: the backend and options to check (the cpu backend when left as it comes).
inline void expect_join_equals_oracle(const twobody::VectorSet& a, const twobody::VectorSet* b, double eps, twobody::Metric m,
                                      const std::string& what, twobody::RunOptions run) {
  using namespace twobody;
  const oracle::Rows A = rows_of(a);
  const oracle::Rows B = b ? rows_of(*b) : oracle::Rows{};
  const auto want = oracle::join(A, b ? &B : nullptr, limit_of(eps, m), m == Metric::Cosine);
  JoinOptions o;
  o.eps = eps;
  o.metric = m;
  const JoinResult pairs = similarity_join(a, b, o, run);
  ASSERT_EQ(pairs.pairs.size(), want.size()) << what;
  for (std::size_t t = 0; t < want.size(); ++t) {
    ASSERT_EQ(pairs.pairs[t].i, want[t].i) << what << " pair " << t;
    ASSERT_EQ(pairs.pairs[t].j, want[t].j) << what << " pair " << t;
    const double nat = m == Metric::Cosine ? want[t].key : std::sqrt(want[t].key);
    ASSERT_EQ(pairs.pairs[t].value, nat) << what << " pair " << t;
  }
  EXPECT_EQ(pairs.total, want.size()) << what;
  // The other outputs agree with the pairs.
  o.output = JoinOutput::Total;
  EXPECT_EQ(similarity_join(a, b, o, run).total, want.size()) << what;
  o.output = JoinOutput::Counts;
  const JoinResult counts = similarity_join(a, b, o, run);
  std::vector<std::uint64_t> ca(a.size(), 0), cb(b ? b->size() : 0, 0);
  for (const auto& p : want) {
    ++ca[p.i];
    if (b) ++cb[p.j];
    else ++ca[p.j];
  }
  EXPECT_EQ(counts.counts, ca) << what;
  if (b) EXPECT_EQ(counts.counts_b, cb) << what;
  EXPECT_EQ(counts.total, want.size()) << what;
  o.output = JoinOutput::Csr;
  const JoinResult csr = similarity_join(a, b, o, run);
  ASSERT_EQ(csr.indptr.size(), a.size() + 1) << what;
  std::vector<std::vector<std::uint64_t>> lists(a.size());
  for (const auto& p : want) {
    lists[p.i].push_back(p.j);
    if (!b) lists[p.j].push_back(p.i);
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    std::sort(lists[i].begin(), lists[i].end());
    const std::vector<std::uint64_t> got(csr.indices.begin() + static_cast<std::ptrdiff_t>(csr.indptr[i]),
                                         csr.indices.begin() + static_cast<std::ptrdiff_t>(csr.indptr[i + 1]));
    ASSERT_EQ(got, lists[i]) << what << " row " << i;
  }
}

}  // namespace testing_support
