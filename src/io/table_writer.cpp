#include <fmt/format.h>

#include <cstring>

#include <algorithm>

#include "twobody/detail/io/array_output.hpp"
#include "twobody/error.hpp"
#include "twobody/io.hpp"
#include "twobody/table.hpp"

namespace twobody {

std::size_t Table::rows() const {
  if (columns.empty()) return 0;
  return std::visit([](const auto& v) { return v.size(); }, columns.front().values);
}

TableFormat parse_table_format(const std::string& name) {
  if (name == "csv") return TableFormat::Csv;
  if (name == "json") return TableFormat::Json;
  if (name == "table" || name == "text") return TableFormat::Text;
  if (name == "hdf5" || name == "h5") return TableFormat::Hdf5;
  if (name == "npz") return TableFormat::Npz;
  throw_config(fmt::format("unknown output format '{}' (csv, json, table, hdf5 or npz)", name));
}

nlohmann::json run_metadata(const Result& r) { return run_metadata(r.info); }

nlohmann::json run_metadata(const RunInfo& info) {
  return {{"version", kVersion},
          {"backend", info.backend},
          {"device", info.device},
          {"threads", info.threads},
          {"n_points", info.n_a},
          {"n_points2", info.n_b},
          {"wall_seconds", info.seconds},
          {"pairs_evaluated", info.pairs_evaluated},
          {"pairs_per_second", info.seconds > 0 ? static_cast<double>(info.pairs_evaluated) / info.seconds : 0.0},
          {"pairs_settled_fp64", info.pairs_settled_fp64},
          {"plan", info.plan}};
}

Table binned_table(const BinnedResult& r) {
  Table t;
  std::vector<double> lo, hi;
  for (std::size_t k = 0; k < r.binning.nbins(); ++k) {
    lo.push_back(r.binning.lo(k));
    hi.push_back(r.binning.hi(k));
  }
  t.columns.push_back({"lo", lo});
  t.columns.push_back({"hi", hi});
  t.columns.push_back({"npairs", r.raw.counts});
  if (!r.raw.weighted.empty()) t.columns.push_back({"wnpairs", r.raw.weighted});
  for (const auto& c : r.derived) t.columns.push_back({c.name, c.values});
  t.meta = run_metadata(r.raw);
  return t;
}

Table pair_list_table(const Result& r, const std::string& value_name) {
  Table t;
  std::vector<std::uint64_t> i, j;
  std::vector<double> v;
  for (const auto& p : r.pairs) {
    i.push_back(p.i);
    j.push_back(p.j);
    v.push_back(p.value);
  }
  t.columns = {{"i", std::move(i)}, {"j", std::move(j)}, {value_name, std::move(v)}};
  t.meta = run_metadata(r);
  return t;
}

Table per_point_table(const Result& r) {
  Table t;
  std::vector<std::uint64_t> set, index, count;
  std::vector<double> wsum;
  const bool weighted = !r.per_point_a.weighted.empty();
  for (const PointReductions* p : {&r.per_point_a, &r.per_point_b}) {
    const std::uint64_t which = p == &r.per_point_a ? 1 : 2;
    for (std::size_t k = 0; k < p->counts.size(); ++k) {
      set.push_back(which);
      index.push_back(k);
      count.push_back(p->counts[k]);
      if (weighted) wsum.push_back(p->weighted[k]);
    }
  }
  t.columns = {{"set", std::move(set)}, {"index", std::move(index)}, {"count", std::move(count)}};
  if (weighted) t.columns.push_back({"wsum", std::move(wsum)});
  t.meta = run_metadata(r);
  return t;
}

namespace {

// CSV: the shortest representation that reads back to the same double. The aligned table is for
// reading: six significant digits (counts stay whole).
std::string cell(const TableColumn& c, std::size_t row, bool for_reading = false) {
  if (const auto* u = std::get_if<std::vector<std::uint64_t>>(&c.values)) return fmt::format("{}", (*u)[row]);
  const double v = std::get<std::vector<double>>(c.values)[row];
  return for_reading ? fmt::format("{:.6g}", v) : fmt::format("{}", v);
}

}  // namespace

void write_arrays_file(const std::string& path, const std::vector<NamedArray>& arrays, TableFormat f) {
  if (f != TableFormat::Npz && f != TableFormat::Hdf5)
    throw_config(fmt::format("{}: these arrays (of different lengths or 2-D) are written as .npz or .h5, not as a table",
                             path));
  std::vector<ArrayOut> out;
  for (const NamedArray& a : arrays) {
    ArrayOut o;
    o.name = a.name;
    const std::size_t values = std::visit([](const auto& v) { return v.size(); }, a.values);
    o.cols = a.cols;
    o.rows = a.cols == 0 ? values : values / a.cols;
    o.unsigned_integers = std::holds_alternative<std::vector<std::uint64_t>>(a.values);
    o.rows_at = [&a, width = o.width()](std::size_t first, std::size_t n, void* to) {
      std::visit([&](const auto& v) { std::memcpy(to, v.data() + first * width, n * width * 8); }, a.values);
    };
    out.push_back(std::move(o));
  }
  if (f == TableFormat::Hdf5) return write_hdf5_arrays(path, out);
  write_output(path, [&](std::ostream& s) { write_npz(s, out); });
}

void write_table_file(const std::string& path, const Table& t, TableFormat f) {
  if (f == TableFormat::Hdf5) return write_hdf5_table(path, t);
  write_output(path, [&](std::ostream& out) {
    if (f == TableFormat::Npz) return write_npz(out, arrays_of(t));
    write_table(out, t, f);
  });
}

void write_table(std::ostream& out, const Table& t, TableFormat f) {
  if (f == TableFormat::Hdf5 || f == TableFormat::Npz)
    throw Error(ErrorKind::Internal, "write_table: HDF5 and .npz tables go through write_table_file");
  const std::size_t n = t.rows();
  if (f == TableFormat::Json) {
    nlohmann::json j = t.meta;
    nlohmann::json cols = nlohmann::json::object();
    for (const auto& c : t.columns) std::visit([&](const auto& v) { cols[c.name] = v; }, c.values);
    j["columns"] = cols;
    out << j.dump(2) << '\n';
    return;
  }
  if (f == TableFormat::Csv) {
    for (std::size_t c = 0; c < t.columns.size(); ++c) out << (c ? "," : "") << t.columns[c].name;
    out << '\n';
    for (std::size_t r = 0; r < n; ++r) {
      for (std::size_t c = 0; c < t.columns.size(); ++c) out << (c ? "," : "") << cell(t.columns[c], r);
      out << '\n';
    }
    return;
  }
  std::vector<std::size_t> width;
  for (const auto& c : t.columns) {
    std::size_t w = c.name.size();
    for (std::size_t r = 0; r < n; ++r) w = std::max(w, cell(c, r, true).size());
    width.push_back(w);
  }
  for (std::size_t c = 0; c < t.columns.size(); ++c) out << fmt::format("{:>{}}  ", t.columns[c].name, width[c]);
  out << '\n';
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t c = 0; c < t.columns.size(); ++c)
      out << fmt::format("{:>{}}  ", cell(t.columns[c], r, true), width[c]);
    out << '\n';
  }
}

}  // namespace twobody
