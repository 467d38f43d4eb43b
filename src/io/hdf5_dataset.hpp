#pragma once
// What the HDF5 readers (catalogues: hdf5_reader.cpp; vectors: hdf5_vector_reader.cpp) share: the
// opening of a file's object under the guards every read of a foreign file takes, the checks on a
// dataset's type, shape and storage made before any read, and errors that name "file:/object".
#include <fmt/format.h>

#include <functional>
#include <string>
#include <vector>

#include "twobody/detail/io/hdf5_file.hpp"
#include "twobody/detail/io/raw_table.hpp"
#include "twobody/error.hpp"

namespace twobody::hdf5 {

// Where errors point: "cat.h5:/table".
struct Place {
  std::string file, object;
  double file_size = 0;
  std::string at() const { return object.empty() ? file : fmt::format("{}:{}", file, object); }
  [[noreturn]] void fail(const std::string& what) const {
    const std::string reason = error_reason();
    throw_input(reason.empty() ? fmt::format("{}: {}", at(), what) : fmt::format("{}: {}: {}", at(), what, reason));
  }
};

// Opens `inside` in `file` (a path; empty: the file's only dataset) and calls `read` with the
// object, while the file is open and its read is guarded. Error(Input) for a missing or empty
// file, one that is not HDF5, no such object (the file's datasets listed), several datasets and
// no path.
void with_object(const std::string& file, const std::string& inside,
                 const std::function<void(hid_t object, const Place& p, hid_t lapl)>& read);
// A dataset or group as the catalogue reader takes it (its columns).
RawTable read_object(hid_t object, const Place& p, hid_t lapl);

inline bool numeric(H5T_class_t c) { return c == H5T_INTEGER || c == H5T_FLOAT; }
// Whether a numeric type is a standard integer (8 to 64 bits) or IEEE float (32, 64 bits), either
// byte order; others are refused before any read (nonstandard() says what they are).
bool standard_numeric(hid_t type);
std::string nonstandard(hid_t type);
std::string class_name(H5T_class_t c);
// The dataset's dimensions; a scalar or null dataspace is an error.
std::vector<hsize_t> dimensions(hid_t ds, const Place& p);
// A dataset whose header claims more elements than its file could hold, or whose data lives in
// other files, is refused before any memory is taken for it.
void check_storage(hid_t ds, double elements, std::size_t element_size, const Place& p);

}  // namespace twobody::hdf5
