// expression_table (twobody/table.hpp): a run over a pair expression as a table, the columns
// `twobody custom` writes and twobody.custom returns.
#include "twobody/expression.hpp"
#include "twobody/table.hpp"

namespace twobody {

namespace {

Table per_point_values(const Result& r, bool cross, const std::string& per_point) {
  std::vector<std::uint64_t> set, index, count;
  std::vector<double> value;
  const auto add = [&](const PointReductions& p, std::uint64_t which) {
    for (std::size_t k = 0; k < p.counts.size(); ++k) {
      set.push_back(which);
      index.push_back(k);
      count.push_back(p.counts[k]);
      if (!p.values.empty()) value.push_back(p.values[k]);
    }
  };
  add(r.per_point_a, 0);
  if (cross) add(r.per_point_b, 1);
  Table t;
  if (cross) t.columns.push_back({"set", std::move(set)});
  t.columns.push_back({"index", std::move(index)});
  t.columns.push_back({"count", std::move(count)});
  if (per_point != "count") t.columns.push_back({per_point, std::move(value)});
  return t;
}

}  // namespace

Table expression_table(const PairExpression& f, const Statistic& st, const Result& r, const ExpressionOutput& out) {
  Table t;
  switch (out.emit) {
    case ExpressionEmit::Sum:
      t.columns = {{"sum", std::vector<double>{r.value_sum.at(0)}}, {"pairs", std::vector<std::uint64_t>{r.counts.at(0)}}};
      break;
    case ExpressionEmit::Count: t.columns = {{"count", std::vector<std::uint64_t>{r.counts.at(0)}}}; break;
    case ExpressionEmit::Histogram: {
      const Binning& bins = st.binning();
      std::vector<double> lo, hi;
      for (std::size_t k = 0; k < bins.nbins(); ++k) lo.push_back(bins.lo(k)), hi.push_back(bins.hi(k));
      t.columns = {{"lo", std::move(lo)}, {"hi", std::move(hi)}, {"count", r.counts}};
      break;
    }
    case ExpressionEmit::Pairs: {
      std::vector<std::uint64_t> i, j;
      std::vector<double> v;
      i.reserve(r.pairs.size()), j.reserve(r.pairs.size()), v.reserve(r.pairs.size());
      for (const PairRecord& p : r.pairs) i.push_back(p.i), j.push_back(p.j), v.push_back(p.value);
      t.columns = {{"i", std::move(i)}, {"j", std::move(j)}, {"value", std::move(v)}};
      break;
    }
    case ExpressionEmit::PerPoint: {
      const bool predicate = f.result() == ValueType::Bool;
      const std::string per_point = out.per_point.empty() ? (predicate ? "count" : "sum") : out.per_point;
      t = per_point_values(r, st.traversal == Traversal::Cross, per_point);
      break;
    }
  }
  t.meta = run_metadata(r.info);
  t.meta["pair"] = f.text();
  if (!f.where().empty()) t.meta["where"] = f.where();
  t.meta["canonical"] = f.canonical();
  t.meta["class"] = to_string(f.function_class());
  t.meta["emit"] = to_string(out.emit);
  return t;
}

}  // namespace twobody
