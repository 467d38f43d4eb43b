#include <fmt/format.h>

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <functional>
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
  nlohmann::json meta = {{"version", kVersion},
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
  // A hybrid run (--backend hybrid): each worker's share and their imbalance.
  if (!info.workers.empty()) {
    nlohmann::json workers = nlohmann::json::array();
    for (const WorkerShare& w : info.workers)
      workers.push_back({{"name", w.name}, {"bands", w.bands}, {"rows", w.rows}, {"pairs", w.pairs}, {"seconds", w.seconds}});
    meta["workers"] = std::move(workers);
    meta["load_imbalance"] = info.load_imbalance;
  }
  return meta;
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

constexpr std::size_t kBlockRows = std::size_t{1} << 16;

// A column's rows pulled a block at a time (ArrayOut::rows_at): tables written from memory and
// from a spooled pair list alike, never a second copy of a large one.
class ColumnBlocks {
 public:
  explicit ColumnBlocks(const ArrayOut& c) : c_(c), values_(kBlockRows) {}
  // Row r as text: the shortest representation that reads back to the same double (CSV; JSON's
  // own, which writes NaN as null), or six significant digits (the aligned table, for reading;
  // counts stay whole).
  enum class Style { Csv, Json, Reading };
  std::string cell(std::size_t r, Style style = Style::Csv) {
    const std::uint64_t bits = value(r);
    if (c_.unsigned_integers) return fmt::format("{}", bits);
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (style == Style::Json) return nlohmann::json(v).dump();
    return style == Style::Reading ? fmt::format("{:.6g}", v) : fmt::format("{}", v);
  }

 private:
  std::uint64_t value(std::size_t r) {
    if (r < first_ || r >= first_ + held_) {
      first_ = r - r % kBlockRows;
      held_ = std::min(kBlockRows, c_.rows - first_);
      c_.rows_at(first_, held_, values_.data());
    }
    return values_[r - first_];
  }
  const ArrayOut& c_;
  std::vector<std::uint64_t> values_;
  std::size_t first_ = 0, held_ = 0;
};

std::size_t rows_of(const std::vector<ArrayOut>& columns) { return columns.empty() ? 0 : columns.front().rows; }

void write_columns(std::ostream& out, const std::vector<ArrayOut>& columns, const nlohmann::json& meta, TableFormat f) {
  if (f == TableFormat::Hdf5 || f == TableFormat::Npz)
    throw Error(ErrorKind::Internal, "write_table: HDF5 and .npz tables go through write_table_file");
  const std::size_t n = rows_of(columns);
  std::vector<ColumnBlocks> blocks(columns.begin(), columns.end());
  fmt::memory_buffer buf;
  const auto spill = [&](bool last = false) {
    if (last || buf.size() > (std::size_t{1} << 20)) {
      out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
    }
  };
  if (f == TableFormat::Json) {
    // As nlohmann's dump(2) of the metadata with "columns": {name: [values]} among its keys (all
    // sorted), each column streamed in turn instead of held as a JSON value.
    const std::string mark = "@twobody-columns@";
    nlohmann::json j = meta;
    j["columns"] = mark;
    const std::string text = j.dump(2);
    const std::size_t at = text.find('"' + mark + '"');
    buf.append(std::string_view(text).substr(0, at));
    std::vector<std::size_t> by_name(columns.size());
    for (std::size_t c = 0; c < columns.size(); ++c) by_name[c] = c;
    std::ranges::sort(by_name, {}, [&](std::size_t c) { return columns[c].name; });
    buf.push_back('{');
    for (std::size_t k = 0; k < by_name.size(); ++k) {
      const std::size_t c = by_name[k];
      fmt::format_to(std::back_inserter(buf), "{}\n    {}: {}", k ? "," : "", nlohmann::json(columns[c].name).dump(),
                     n ? "[" : "[]");
      for (std::size_t r = 0; r < n; ++r) {
        fmt::format_to(std::back_inserter(buf), "{}\n      {}", r ? "," : "", blocks[c].cell(r, ColumnBlocks::Style::Json));
        spill();
      }
      if (n) buf.append(std::string_view("\n    ]"));
    }
    buf.append(std::string_view(columns.empty() ? "}" : "\n  }"));
    buf.append(std::string_view(text).substr(at + mark.size() + 2));
    buf.push_back('\n');
    spill(true);
    return;
  }
  if (f == TableFormat::Csv) {
    for (std::size_t c = 0; c < columns.size(); ++c) fmt::format_to(std::back_inserter(buf), "{}{}", c ? "," : "", columns[c].name);
    buf.push_back('\n');
    for (std::size_t r = 0; r < n; ++r) {
      for (std::size_t c = 0; c < columns.size(); ++c) fmt::format_to(std::back_inserter(buf), "{}{}", c ? "," : "", blocks[c].cell(r));
      buf.push_back('\n');
      spill();
    }
    spill(true);
    return;
  }
  // The aligned table: one pass for the widths, one to write.
  std::vector<std::size_t> width;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    std::size_t w = columns[c].name.size();
    for (std::size_t r = 0; r < n; ++r) w = std::max(w, blocks[c].cell(r, ColumnBlocks::Style::Reading).size());
    width.push_back(w);
  }
  for (std::size_t c = 0; c < columns.size(); ++c) fmt::format_to(std::back_inserter(buf), "{:>{}}  ", columns[c].name, width[c]);
  buf.push_back('\n');
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t c = 0; c < columns.size(); ++c) fmt::format_to(std::back_inserter(buf), "{:>{}}  ", blocks[c].cell(r, ColumnBlocks::Style::Reading), width[c]);
    buf.push_back('\n');
    spill();
  }
  spill(true);
}

void write_columns_file(const std::string& path, const std::vector<ArrayOut>& columns, const nlohmann::json& meta,
                        TableFormat f) {
  if (f == TableFormat::Hdf5) return write_hdf5_table(path, columns, meta);
  write_output(path, [&](std::ostream& out) {
    if (f == TableFormat::Npz) return write_npz(out, columns);
    write_columns(out, columns, meta, f);
  });
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
  write_columns_file(path, arrays_of(t), t.meta, f);
}

void write_table(std::ostream& out, const Table& t, TableFormat f) { write_columns(out, arrays_of(t), t.meta, f); }

namespace {

// Columns i, j, value_name over pairs read a block at a time by `read`.
void write_pair_columns(const std::string& path, std::size_t n,
                        const std::function<void(std::size_t, std::size_t, PairRecord*)>& read,
                        const std::string& value_name, const nlohmann::json& meta, TableFormat f) {
  std::vector<ArrayOut> columns;
  for (int field = 0; field < 3; ++field) {
    ArrayOut a{field == 0 ? "i" : field == 1 ? "j" : value_name, field < 2, n, 0, {}};
    a.rows_at = [&read, field](std::size_t first, std::size_t count, void* out) {
      std::vector<PairRecord> block(count);
      read(first, count, block.data());
      auto* to = static_cast<std::uint64_t*>(out);
      for (std::size_t k = 0; k < count; ++k) {
        if (field == 0) to[k] = block[k].i;
        else if (field == 1) to[k] = block[k].j;
        else std::memcpy(to + k, &block[k].value, 8);
      }
    };
    columns.push_back(std::move(a));
  }
  write_columns_file(path, columns, meta, f);
}

}  // namespace

void write_pair_list_file(const std::string& path, const PairSpool& pairs, const std::string& value_name,
                          const nlohmann::json& meta, TableFormat f) {
  write_pair_columns(
      path, pairs.size(), [&pairs](std::size_t first, std::size_t n, PairRecord* to) { pairs.read(first, n, to); },
      value_name, meta, f);
}

std::size_t pair_sort_budget() {
  std::size_t bytes = static_cast<std::size_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<std::size_t>(::sysconf(_SC_PAGE_SIZE)) / 4;
  if (const char* e = std::getenv("TWOBODY_PAIR_SORT_BYTES")) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(e, &end, 10);
    if (end == e || *end != '\0') throw_config(fmt::format("TWOBODY_PAIR_SORT_BYTES: not a number of bytes: '{}'", e));
    bytes = static_cast<std::size_t>(v);
  }
  return bytes / sizeof(PairRecord);
}

void write_spooled_pairs(const std::string& path, const PairSpool& pairs, const std::string& value_name,
                         nlohmann::json& meta, TableFormat f, std::size_t sort_pairs) {
  if (pairs.size() > sort_pairs) {
    meta["pairs_order"] = "as found: batches sorted by (i, j); sort the file to order it";
    return write_pair_list_file(path, pairs, value_name, meta, f);
  }
  std::vector<PairRecord> all(pairs.size());
  pairs.read(0, all.size(), all.data());
  std::sort(all.begin(), all.end(), pair_order);
  write_pair_columns(
      path, all.size(), [&all](std::size_t first, std::size_t n, PairRecord* to) { std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(first), n, to); },
      value_name, meta, f);
}

}  // namespace twobody
