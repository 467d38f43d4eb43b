// Corrfunc's fast-food format: Fortran unformatted records, each framed by a 4-byte length before
// and after. Header records: idat[5] (idat[1] is the number of points), fdat[9], znow; then one
// record per column of float32 or float64 values (the record length tells which).
#include <fmt/format.h>

#include <cstdint>
#include <cstring>

#include "twobody/detail/io/raw_table.hpp"

namespace twobody {

namespace {

struct RecordReader {
  const std::string& s;
  const std::string& path;
  std::size_t pos = 0;

  std::string_view next() {
    std::uint32_t head, tail;
    if (pos + 4 > s.size()) throw_input(fmt::format("{}: truncated fast-food record header", path));
    std::memcpy(&head, s.data() + pos, 4);
    if (pos + 8 + head > s.size())
      throw_input(fmt::format("{}: fast-food record of {} bytes runs past the end of the file", path, head));
    std::memcpy(&tail, s.data() + pos + 4 + head, 4);
    if (head != tail)
      throw_input(fmt::format("{}: corrupt fast-food record at byte {} (length {} before, {} after)", path, pos, head, tail));
    std::string_view rec(s.data() + pos + 4, head);
    pos += 8 + head;
    return rec;
  }
  bool done() const { return pos >= s.size(); }
};

}  // namespace

RawTable read_fast_food(const std::string& path) {
  const std::string s = read_whole_file(path);
  RecordReader rr{s, path};
  const auto idat = rr.next();
  if (idat.size() != 5 * sizeof(std::int32_t))
    throw_input(fmt::format("{}: not a fast-food file (first record has {} bytes, expected 20)", path, idat.size()));
  std::int32_t ngal;
  std::memcpy(&ngal, idat.data() + 4, 4);
  if (ngal <= 0) throw_input(fmt::format("{}: the fast-food header gives {} points", path, ngal));
  if (static_cast<std::size_t>(ngal) > s.size() / 4)
    throw_input(fmt::format("{}: the fast-food header gives {} points, more than the file of {} bytes holds", path,
                            ngal, s.size()));
  rr.next();  // fdat
  rr.next();  // znow
  RawTable t;
  t.rows = static_cast<std::size_t>(ngal);
  while (!rr.done()) {
    const auto rec = rr.next();
    // (The record's size is checked before anything is allocated: a header may claim any count.)
    if (rec.size() != t.rows * 8 && rec.size() != t.rows * 4)
      throw_input(fmt::format("{}: column record {} has {} bytes, not {} points of 4 or 8 bytes", path, t.ncols + 1,
                              rec.size(), t.rows));
    std::vector<double> col(t.rows);
    if (rec.size() == t.rows * 8) {
      std::memcpy(col.data(), rec.data(), rec.size());
    } else if (rec.size() == t.rows * 4) {
      for (std::size_t i = 0; i < t.rows; ++i) {
        float f;
        std::memcpy(&f, rec.data() + 4 * i, 4);
        col[i] = f;
      }
    } else {
      throw_input(fmt::format("{}: column record {} has {} bytes, not {} points of 4 or 8 bytes",
                              path, t.ncols + 1, rec.size(), t.rows));
    }
    t.cols.push_back(std::move(col));
    ++t.ncols;
  }
  if (t.ncols == 0) throw_input(fmt::format("{}: the fast-food file has a header but no columns", path));
  return t;
}

}  // namespace twobody
