#pragma once
// Two Results of one statistic compared bit for bit: counts, floating sums (float64 and exact),
// jackknife regions, pair lists, per-point arrays, matrices. For runs split another way (devices,
// chunks, ranks) that must give the same bits as one run.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>

#include "twobody/result.hpp"

namespace testing_support {

// Bit for bit: a NaN (an estimator's empty bin) equals the same NaN, and -0.0 differs from 0.0.
inline void expect_same_doubles(const std::vector<double>& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t k = 0; k < got.size(); ++k)
    EXPECT_EQ(std::bit_cast<std::uint64_t>(got[k]), std::bit_cast<std::uint64_t>(want[k]))
        << what << " [" << k << "]: " << got[k] << " against " << want[k];
}

inline void expect_same_fixed(const std::vector<twobody::FixedSum>& got, const std::vector<twobody::FixedSum>& want,
                              const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t k = 0; k < got.size(); ++k) EXPECT_TRUE(got[k] == want[k]) << what << " [" << k << "]";
}

inline void expect_same_result(const twobody::Result& got, const twobody::Result& want) {
  EXPECT_EQ(got.output, want.output);
  EXPECT_EQ(got.counts, want.counts);
  expect_same_doubles(got.weighted, want.weighted, "weighted");
  EXPECT_EQ(got.regions, want.regions);
  EXPECT_EQ(got.region_counts, want.region_counts);
  expect_same_doubles(got.region_weighted, want.region_weighted, "region_weighted");
  expect_same_doubles(got.separation_sum, want.separation_sum, "separation_sum");
  expect_same_doubles(got.log_separation_sum, want.log_separation_sum, "log_separation_sum");
  EXPECT_EQ(got.per_point_a.counts, want.per_point_a.counts);
  EXPECT_EQ(got.per_point_b.counts, want.per_point_b.counts);
  expect_same_doubles(got.per_point_a.weighted, want.per_point_a.weighted, "per_point_a.weighted");
  expect_same_doubles(got.per_point_b.weighted, want.per_point_b.weighted, "per_point_b.weighted");
  expect_same_fixed(got.exact.weighted, want.exact.weighted, "exact.weighted");
  expect_same_fixed(got.exact.region_weighted, want.exact.region_weighted, "exact.region_weighted");
  expect_same_fixed(got.exact.separation_sum, want.exact.separation_sum, "exact.separation_sum");
  expect_same_fixed(got.exact.log_separation_sum, want.exact.log_separation_sum, "exact.log_separation_sum");
  expect_same_fixed(got.exact.point_weighted_a, want.exact.point_weighted_a, "exact.point_weighted_a");
  expect_same_fixed(got.exact.point_weighted_b, want.exact.point_weighted_b, "exact.point_weighted_b");
  ASSERT_EQ(got.pairs.size(), want.pairs.size());
  for (std::size_t k = 0; k < got.pairs.size(); ++k) {
    EXPECT_EQ(got.pairs[k].i, want.pairs[k].i) << k;
    EXPECT_EQ(got.pairs[k].j, want.pairs[k].j) << k;
    EXPECT_EQ(got.pairs[k].value, want.pairs[k].value) << k;
  }
  EXPECT_EQ(got.rows, want.rows);
  EXPECT_EQ(got.cols, want.cols);
  EXPECT_TRUE(std::equal(got.matrix.begin(), got.matrix.end(), want.matrix.begin(), want.matrix.end()));
  EXPECT_EQ(got.info.n_a, want.info.n_a);
  EXPECT_EQ(got.info.n_b, want.info.n_b);
}

}  // namespace testing_support
