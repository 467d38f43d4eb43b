// write_vectors: .npy with the element type kept, the ANN corpora's .fvecs/.bvecs/.ivecs where the
// values fit them exactly, HDF5, or text; whole or not at all (write_output).
#include <fmt/format.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <vector>

#include "twobody/detail/io/array_output.hpp"
#include "twobody/detail/io/vector_files.hpp"
#include "twobody/error.hpp"

namespace twobody {

namespace {

// Value k of row i, promoted exactly to float64.
double value_at(const VectorSet& v, std::size_t i, int k) {
  const void* row = v.row(i);
  switch (v.element()) {
    case Element::F16: return half_to_double(static_cast<const std::uint16_t*>(row)[k]);
    case Element::F32: return static_cast<const float*>(row)[k];
    case Element::F64: break;
  }
  return static_cast<const double*>(row)[k];
}

const char* npy_descr(Element e) { return e == Element::F16 ? "<f2" : e == Element::F32 ? "<f4" : "<f8"; }

void write_npy(const std::string& path, const VectorSet& v) {
  const std::size_t row_bytes = element_bytes(v.element()) * static_cast<std::size_t>(v.dim());
  write_output(path, [&](std::ostream& out) {
    out << npy_header(npy_descr(v.element()), v.size(), static_cast<std::size_t>(v.dim()));
    for (std::size_t i = 0; i < v.size(); ++i)
      out.write(static_cast<const char*>(v.row(i)), static_cast<std::streamsize>(row_bytes));
  });
}

// What each vector file holds: its values' type, and which float64 values it holds exactly.
struct VecsFormat {
  const char* ext;
  const char* value_name;
  std::size_t value_bytes;
  bool (*holds)(double);
  void (*store)(double, char*);
};

VecsFormat vecs_format(FileFormat f) {
  if (f == FileFormat::Bvecs)
    return {".bvecs", "uint8", 1, [](double x) { return x >= 0 && x <= 255 && x == std::floor(x); },
            [](double x, char* to) { *to = static_cast<char>(static_cast<std::uint8_t>(x)); }};
  if (f == FileFormat::Ivecs)
    return {".ivecs", "int32", 4, [](double x) { return x >= INT32_MIN && x <= INT32_MAX && x == std::floor(x); },
            [](double x, char* to) {
              const std::int32_t i = static_cast<std::int32_t>(x);
              std::memcpy(to, &i, 4);
            }};
  return {".fvecs", "float32", 4,
          // (The range test first: converting a double beyond float's range is undefined.)
          [](double x) { return !std::isfinite(x) || (std::fabs(x) <= FLT_MAX && static_cast<float>(x) == x); },
          [](double x, char* to) {
            const float f = static_cast<float>(x);
            std::memcpy(to, &f, 4);
          }};
}

void write_text(const std::string& path, const VectorSet& v) {
  std::vector<double> row(static_cast<std::size_t>(v.dim()));
  std::size_t cached = v.size();
  write_output(path, [&](std::ostream& out) {
    write_text_rows(out, v.size(), row.size(), [&](std::size_t i, std::size_t c) {
      if (i != cached) v.row_f64(cached = i, row.data());
      return row[c];
    });
  });
}

}  // namespace

void write_vecs(const std::string& path, FileFormat f, const VectorSet& v) {
  const VecsFormat format = vecs_format(f);
  const int dim = v.dim();
  // Every value checked before anything is written: a file either holds the set exactly or is not made.
  const std::size_t bad = first_row_where(v.size(), [&](std::size_t i) {
    for (int k = 0; k < dim; ++k)
      if (!format.holds(value_at(v, i, k))) return true;
    return false;
  });
  if (bad < v.size()) {
    int k = 0;
    while (format.holds(value_at(v, bad, k))) ++k;
    throw_config(fmt::format("{}: row {}, column {}: {} is not exactly representable as {}, the values of {} (.npy "
                             "keeps {})", path, bad + 1, k + 1, value_at(v, bad, k), format.value_name, format.ext,
                             to_string(v.element())));
  }
  std::vector<char> row(4 + static_cast<std::size_t>(dim) * format.value_bytes);
  const std::int32_t d = dim;
  std::memcpy(row.data(), &d, 4);
  write_output(path, [&](std::ostream& out) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (f == FileFormat::Fvecs && v.element() == Element::F32) {
        std::memcpy(row.data() + 4, v.row(i), static_cast<std::size_t>(dim) * 4);
      } else {
        for (int k = 0; k < dim; ++k) format.store(value_at(v, i, k), row.data() + 4 + static_cast<std::size_t>(k) * format.value_bytes);
      }
      out.write(row.data(), static_cast<std::streamsize>(row.size()));
    }
  });
}

void write_vectors(const std::string& path, const VectorSet& v) {
  if (v.dim() < 1) throw_config(fmt::format("{}: no vectors to write (the set has no dimension)", path));
  const FileFormat f = format_of(path);
  switch (f) {
    case FileFormat::Npy: write_npy(path, v); return;
    case FileFormat::Fvecs:
    case FileFormat::Bvecs:
    case FileFormat::Ivecs: write_vecs(path, f, v); return;
    case FileFormat::Hdf5: write_hdf5_vectors(path, v); return;
    case FileFormat::Npz:
    case FileFormat::Fits:
    case FileFormat::FastFood:
      throw_config(fmt::format("{}: vectors are not written as {}: use .npy, .fvecs, .h5 or text", path,
                               std::filesystem::path(file_of(path)).extension().string()));
    case FileFormat::Auto:
    case FileFormat::Text: break;
  }
  write_text(path, v);
}

}  // namespace twobody
