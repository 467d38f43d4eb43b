#pragma once
// Output tables: named columns written as CSV (with a header), JSON (columns plus metadata), an
// aligned text table for a terminal, HDF5 or .npz.
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "twobody/statistics.hpp"

namespace twobody {

class PairExpression;
struct ExpressionOutput;

struct TableColumn {
  std::string name;
  std::variant<std::vector<std::uint64_t>, std::vector<double>> values;
};

struct Table {
  std::vector<TableColumn> columns;
  nlohmann::json meta = nlohmann::json::object();
  std::size_t rows() const;
};

// Hdf5: a compound dataset /table (one field per column, the metadata a JSON attribute "meta");
// Npz: one array per column, named by the column.
enum class TableFormat { Csv, Json, Text, Hdf5, Npz };
TableFormat parse_table_format(const std::string& name);

// Columns lo, hi, npairs, [wnpairs], then the derived columns; meta from the run.
Table binned_table(const BinnedResult& r);
// Columns i, j, value (0-based point indices).
Table pair_list_table(const Result& r, const std::string& value_name);
// Per-point reductions: columns set (1: the first set, 2: the second), index (0-based, in file
// order), count, [wsum]; the first set's rows, then (cross) the second's.
Table per_point_table(const Result& r);
// A pair expression's run (twobody/expression.hpp) as `custom` writes it: sum, pairs | count |
// lo, hi, count | i, j, value | [set,] index, count, [sum | min | max]; meta from the run with the
// expression's text, canonical form and class.
Table expression_table(const PairExpression& f, const Statistic& st, const Result& r, const ExpressionOutput& out);
// The run's metadata: version, backend, device, N, wall time, pairs per second.
nlohmann::json run_metadata(const Result& r);
nlohmann::json run_metadata(const RunInfo& info);

// Arrays that are not the columns of one table: of different lengths (CSR neighbour lists:
// indptr, indices, distances) or 2-D (k-NN: n x k indices and distances). cols 0: 1-D.
struct NamedArray {
  std::string name;
  std::variant<std::vector<std::uint64_t>, std::vector<double>> values;
  std::size_t cols = 0;
};
// Npz (one NAME.npy each) or Hdf5 (a dataset /NAME each), whole or nothing; Error(Config) for the
// table formats (CSV, JSON, text hold rows of one length).
void write_arrays_file(const std::string& path, const std::vector<NamedArray>& arrays, TableFormat f);

// Csv, Json and Text (Hdf5 needs a file: write_table_file).
void write_table(std::ostream& out, const Table& t, TableFormat f);
// Any format, whole or nothing (write_output); "-" is standard output.
void write_table_file(const std::string& path, const Table& t, TableFormat f);

// A pair list larger than memory on its way to a file: RunOptions::pair_sink appends the pairs to
// an unnamed temporary file (in `near`'s folder, so on the output's file system; the system's
// temporary folder for standard output), removed when the spool goes, whatever happens.
class PairSpool {
 public:
  explicit PairSpool(const std::string& near);
  ~PairSpool();
  PairSpool(const PairSpool&) = delete;
  PairSpool& operator=(const PairSpool&) = delete;
  void append(std::span<const PairRecord> pairs);
  std::size_t size() const { return size_; }
  // Pairs [first, first + n) in the order they were appended.
  void read(std::size_t first, std::size_t n, PairRecord* to) const;

 private:
  int fd_ = -1;
  std::string where_;
  std::size_t size_ = 0;
};
// The spooled pairs as the table pair_list_table would make of them (columns i, j, value_name),
// in any format, whole or nothing, without holding them in memory.
void write_pair_list_file(const std::string& path, const PairSpool& pairs, const std::string& value_name,
                          const nlohmann::json& meta, TableFormat f);
// The spool written as a join's output: sorted by (i, j) when it holds at most `sort_pairs`
// pairs (read into memory to sort), else in the order found, meta["pairs_order"] (added to the
// caller's metadata) saying so.
void write_spooled_pairs(const std::string& path, const PairSpool& pairs, const std::string& value_name,
                         nlohmann::json& meta, TableFormat f, std::size_t sort_pairs);
// The most pairs worth sorting in memory: a quarter of the machine's memory (24 bytes a pair), or
// $TWOBODY_PAIR_SORT_BYTES bytes.
std::size_t pair_sort_budget();

}  // namespace twobody
