// Similarity joins and k nearest neighbours: each a statistic over vectors (a range reduction with
// its upper end included, or reduce::Nearest) handed to the engine, and the result's shape.
#include "twobody/joins.hpp"

#include <fmt/format.h>

#include <cfloat>
#include <cmath>

#include "twobody/error.hpp"

namespace twobody {

namespace {

// [0, eps]: the range of a join (include_hi). eps = 0 has no range [0, 0]; [0, the smallest double]
// selects the same pairs, since both ends square (or, cosine, compare) to the same keys.
Binning join_range(const JoinOptions& o) {
  if (!std::isfinite(o.eps) || o.eps < 0) throw_config(fmt::format("eps must be finite and >= 0, not {}", o.eps));
  if (o.metric == Metric::Euclidean && o.eps > 1e154)
    throw_config(fmt::format("eps {} squares beyond float64 (distances up to 1e154)", o.eps));
  return Binning::from_edges({0.0, o.eps > 0 ? o.eps : DBL_TRUE_MIN});
}

void check_metric(Metric m) {
  if (m != Metric::Euclidean && m != Metric::Cosine)
    throw_config(fmt::format("joins and k-NN take the euclidean or cosine metric, not {}", to_string(m)));
}

// CSR of an auto join: every pair under both of its vectors; of a cross join: under its first.
void to_csr(const std::vector<PairRecord>& pairs, std::size_t n, bool symmetric, JoinResult& out) {
  out.indptr.assign(n + 1, 0);
  for (const PairRecord& p : pairs) {
    ++out.indptr[p.i + 1];
    if (symmetric) ++out.indptr[p.j + 1];
  }
  for (std::size_t i = 0; i < n; ++i) out.indptr[i + 1] += out.indptr[i];
  out.indices.resize(out.indptr[n]);
  out.distances.resize(out.indptr[n]);
  std::vector<std::uint64_t> at(out.indptr.begin(), out.indptr.end() - 1);
  // Pairs come sorted by (i, j): a row's partners j > i arrive in order, and in the symmetric
  // case the partners below i (written when their own rows passed) all precede them.
  for (const PairRecord& p : pairs) {
    if (symmetric) {
      out.indices[at[p.j]] = p.i;
      out.distances[at[p.j]++] = p.value;
    }
    out.indices[at[p.i]] = p.j;
    out.distances[at[p.i]++] = p.value;
  }
}

}  // namespace

Statistic join_statistic(bool cross, const JoinOptions& o) {
  check_metric(o.metric);
  Statistic s;
  s.traversal = cross ? Traversal::Cross : Traversal::Auto;
  s.metric = o.metric;
  const Binning range = join_range(o);
  switch (o.output) {
    case JoinOutput::Pairs:
    case JoinOutput::Csr: s.reduction = reduce::PairList{range, true}; break;
    case JoinOutput::Counts: s.reduction = reduce::PerPoint{range, true}; break;
    case JoinOutput::Total: s.reduction = reduce::Count{range, true}; break;
  }
  return s;
}

JoinResult similarity_join(const VectorSet& a, const VectorSet* b, const JoinOptions& o, const RunOptions& run) {
  const Statistic s = join_statistic(b != nullptr, o);
  // Pairs with a pair sink stream there (counted on the way); CSR lists need them all at once.
  RunOptions opt = run;
  std::uint64_t streamed = 0;
  if (o.output == JoinOutput::Csr) opt.pair_sink = nullptr;
  if (o.output == JoinOutput::Pairs && run.pair_sink)
    opt.pair_sink = [&streamed, &run](std::span<const PairRecord> batch) {
      streamed += batch.size();
      run.pair_sink(batch);
    };
  Result r = twobody::run(s, a, b, opt);
  JoinResult out;
  out.output = o.output;
  switch (o.output) {
    case JoinOutput::Pairs:
      out.total = run.pair_sink ? streamed : r.pairs.size();
      out.pairs = std::move(r.pairs);
      break;
    case JoinOutput::Csr:
      out.total = r.pairs.size();
      to_csr(r.pairs, a.size(), b == nullptr, out);
      break;
    case JoinOutput::Counts: {
      out.counts = std::move(r.per_point_a.counts);
      out.counts_b = std::move(r.per_point_b.counts);
      std::uint64_t sum = 0;
      for (std::uint64_t c : out.counts) sum += c;
      out.total = b ? sum : sum / 2;  // auto: every pair counted at both of its vectors
      break;
    }
    case JoinOutput::Total: out.total = r.counts.empty() ? 0 : r.counts[0]; break;
  }
  out.info = std::move(r.info);
  return out;
}

Statistic knn_statistic(bool cross, int k, Metric m) {
  check_metric(m);
  Statistic s;
  s.traversal = cross ? Traversal::Cross : Traversal::Auto;
  s.metric = m;
  s.reduction = reduce::Nearest{k};
  return s;
}

KnnResult nearest_neighbours(const VectorSet& queries, const VectorSet* reference, int k, Metric m,
                             const RunOptions& run) {
  const Statistic s = knn_statistic(reference != nullptr, k, m);
  Result r = twobody::run(s, queries, reference, run);
  KnnResult out;
  out.k = k;
  out.n = queries.size();
  out.indices = std::move(r.nearest.index);
  out.distances = std::move(r.nearest.value);
  out.info = std::move(r.info);
  return out;
}

}  // namespace twobody
