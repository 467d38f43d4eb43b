// .npz: NumPy's archive of arrays, a zip of NAME.npy entries. Written stored (not compressed), so
// numpy.load maps each entry as it would a .npy; ZIP64 records where a size or an offset passes
// 4 GiB (as numpy's own savez does).
#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <variant>

#include "twobody/detail/io/array_output.hpp"

namespace twobody {

namespace {

constexpr std::size_t kBlockValues = std::size_t{1} << 20;
constexpr std::uint64_t kZip32Max = 0xFFFFFFFFu;

// CRC-32 (ISO 3309, the zip checksum), by table: a byte a step.
class Crc32 {
 public:
  void add(const void* data, std::size_t n) {
    static const std::array<std::uint32_t, 256> table = [] {
      std::array<std::uint32_t, 256> t{};
      for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        t[i] = c;
      }
      return t;
    }();
    const auto* p = static_cast<const unsigned char*>(data);
    std::uint32_t c = ~crc_;
    for (std::size_t i = 0; i < n; ++i) c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    crc_ = ~c;
  }
  std::uint32_t value() const { return crc_; }

 private:
  std::uint32_t crc_ = 0;
};

// Little-endian fields of the zip records.
class Record {
 public:
  Record& u16(std::uint64_t v) { return put(v, 2); }
  Record& u32(std::uint64_t v) { return put(v, 4); }
  Record& u64(std::uint64_t v) { return put(v, 8); }
  Record& bytes(const std::string& s) {
    data_ += s;
    return *this;
  }
  const std::string& str() const { return data_; }

 private:
  Record& put(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) data_.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
    return *this;
  }
  std::string data_;
};

// Streams an array's rows, a block at a time, to `sink(bytes, n)`.
template <class Sink>
void for_each_block(const ArrayOut& a, Sink&& sink) {
  const std::size_t w = a.width();
  const std::size_t block = std::max<std::size_t>(1, kBlockValues / w);
  std::vector<std::uint64_t> buf(std::min(a.rows, block) * w);
  for (std::size_t r = 0; r < a.rows; r += block) {
    const std::size_t n = std::min(block, a.rows - r);
    a.rows_at(r, n, buf.data());
    sink(reinterpret_cast<const char*>(buf.data()), n * w * 8);
  }
}

struct Entry {
  std::string name;
  std::uint32_t crc = 0;
  std::uint64_t size = 0, offset = 0;
};

// The fixed part of a local or central header after the signature: version needed, flags,
// method (stored), a fixed time (1980-01-01, so archives are reproducible), CRC, sizes.
void common_fields(Record& r, const Entry& e, bool zip64) {
  r.u16(zip64 ? 45 : 20).u16(0).u16(0).u16(0).u16(0x21).u32(e.crc);
  r.u32(zip64 ? kZip32Max : e.size).u32(zip64 ? kZip32Max : e.size);
}

}  // namespace

ArrayOut array_over(std::string name, std::size_t rows, std::size_t cols, std::span<const double> values) {
  ArrayOut a{std::move(name), false, rows, cols, {}};
  const std::size_t w = a.width();
  a.rows_at = [values, w](std::size_t first, std::size_t n, void* out) {
    std::memcpy(out, values.data() + first * w, n * w * sizeof(double));
  };
  return a;
}

std::vector<ArrayOut> arrays_of(const Table& t) {
  std::vector<ArrayOut> out;
  for (const TableColumn& c : t.columns) {
    ArrayOut a{c.name, std::holds_alternative<std::vector<std::uint64_t>>(c.values), t.rows(), 0, {}};
    a.rows_at = [&c](std::size_t first, std::size_t n, void* out) {
      std::visit([&](const auto& v) { std::memcpy(out, v.data() + first, n * sizeof(v[0])); }, c.values);
    };
    out.push_back(std::move(a));
  }
  return out;
}

std::string npy_header(const ArrayOut& a) { return npy_header(a.unsigned_integers ? "<u8" : "<f8", a.rows, a.cols); }

std::string npy_header(const char* descr, std::size_t rows, std::size_t cols) {
  const std::string shape = cols == 0 ? fmt::format("({},)", rows) : fmt::format("({}, {})", rows, cols);
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shape);
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  Record r;
  r.bytes("\x93NUMPY").u16(1).u16(header.size()).bytes(header);
  return r.str();
}

void write_npz(std::ostream& out, const std::vector<ArrayOut>& arrays) {
  std::vector<Entry> entries;
  std::uint64_t offset = 0;
  for (const ArrayOut& a : arrays) {
    const std::string header = npy_header(a);
    Entry e{a.name + ".npy", 0, header.size() + std::uint64_t{a.rows} * a.width() * 8, offset};
    Crc32 crc;
    crc.add(header.data(), header.size());
    for_each_block(a, [&](const char* p, std::size_t n) { crc.add(p, n); });
    e.crc = crc.value();
    const bool zip64 = e.size >= kZip32Max;
    Record local;
    local.u32(0x04034b50);
    common_fields(local, e, zip64);
    local.u16(e.name.size()).u16(zip64 ? 20 : 0).bytes(e.name);
    if (zip64) local.u16(1).u16(16).u64(e.size).u64(e.size);
    out << local.str() << header;
    for_each_block(a, [&](const char* p, std::size_t n) { out.write(p, static_cast<std::streamsize>(n)); });
    offset += local.str().size() + e.size;
    entries.push_back(std::move(e));
  }
  const std::uint64_t directory_at = offset;
  Record dir;
  for (const Entry& e : entries) {
    const bool big = e.size >= kZip32Max, far = e.offset >= kZip32Max;
    Record extra;
    if (big) extra.u64(e.size).u64(e.size);
    if (far) extra.u64(e.offset);
    dir.u32(0x02014b50).u16(45);
    common_fields(dir, e, big);
    dir.u16(e.name.size()).u16(extra.str().empty() ? 0 : 4 + extra.str().size()).u16(0).u16(0).u16(0).u32(0);
    dir.u32(far ? kZip32Max : e.offset).bytes(e.name);
    if (!extra.str().empty()) dir.u16(1).u16(extra.str().size()).bytes(extra.str());
  }
  const std::uint64_t directory_size = dir.str().size(), count = entries.size();
  const bool zip64 = directory_at + directory_size >= kZip32Max || count >= 0xFFFF;
  Record end;
  if (zip64) {
    end.u32(0x06064b50).u64(44).u16(45).u16(45).u32(0).u32(0).u64(count).u64(count).u64(directory_size);
    end.u64(directory_at);
    end.u32(0x07064b50).u32(0).u64(directory_at + directory_size).u32(1);
  }
  end.u32(0x06054b50).u16(0).u16(0).u16(zip64 ? 0xFFFF : count).u16(zip64 ? 0xFFFF : count);
  end.u32(zip64 ? kZip32Max : directory_size).u32(zip64 ? kZip32Max : directory_at).u16(0);
  out << dir.str() << end.str();
}

}  // namespace twobody
