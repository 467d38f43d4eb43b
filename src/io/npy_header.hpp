#pragma once
// The .npy format's header (magic, version, a Python-literal dict of dtype, order and shape):
// parsed once here for the catalogue reader (npy_reader.cpp) and the vector reader.
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

namespace twobody {

struct NpyArray {
  std::string descr;            // as written: "<f8", "|i4"
  char kind = 0;                // 'f', 'i', ...
  int width = 0;                // bytes a value
  bool fortran = false;         // column-major
  int rank = 0;                 // 1 or 2
  std::size_t rows = 0;         // the first dimension
  std::size_t cols = 0;         // the second; 1 for a 1-D array
  const char* data = nullptr;   // the first value, inside the caller's view of the file
};

// The array in `file` (the whole .npy's bytes), checked against the file's size. `accepted` lists
// the dtypes the caller reads as kind and width ("f8", "i4"); any other, or a big-endian one, is
// an Error(Input) naming `path` and `accepted_names` ("float64, float32, int64 or int32").
NpyArray parse_npy(std::string_view file, const std::string& path, std::initializer_list<std::string_view> accepted,
                   std::string_view accepted_names);

}  // namespace twobody
