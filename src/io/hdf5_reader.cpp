// HDF5 catalogues: a numeric dataset (rows are points), a compound dataset (a table; h5py's
// structured arrays, PyTables), or a group of 1-D datasets (the columns). Every failure of the
// library becomes an Error(Input) naming the file, the object and the reason.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include <unistd.h>

#include "twobody/detail/io/foreign_read.hpp"
#include "twobody/detail/io/hdf5_dataset.hpp"
#include "twobody/detail/io/hdf5_file.hpp"
#include "twobody/detail/io/raw_table.hpp"

namespace twobody {

namespace hdf5 {

namespace {
// Deflate cannot shrink data more than about 1032:1; a filtered dataset that claims more elements
// than this allows is a hostile header, not data.
constexpr double kMaxFilterRatio = 1100;
}  // namespace

std::string class_name(H5T_class_t c) {
  switch (c) {
    case H5T_STRING: return "strings";
    case H5T_COMPOUND: return "a table (compound)";
    case H5T_ARRAY: return "arrays";
    case H5T_ENUM: return "enumerated values";
    case H5T_VLEN: return "variable-length sequences";
    case H5T_REFERENCE: return "references";
    case H5T_OPAQUE: return "opaque bytes";
    case H5T_BITFIELD: return "bit fields";
    case H5T_TIME: return "times";
    default: return "values of no known type";
  }
}

// Whether a numeric type is one of the standard integers (8 to 64 bits) or IEEE floats (32, 64
// bits), in either byte order. HDF5 lets a file describe any bit layout, and libhdf5 1.10's
// conversion of a malformed one overruns its own stack (found by fuzzing): such types are refused
// before any read. Every writer in use (h5py, PyTables, the C API's native types) makes standard ones.
bool standard_numeric(hid_t type) {
  static const hid_t standard[] = {H5T_STD_I8LE,   H5T_STD_I8BE,   H5T_STD_U8LE,    H5T_STD_U8BE,    H5T_STD_I16LE,
                                   H5T_STD_I16BE,  H5T_STD_U16LE,  H5T_STD_U16BE,   H5T_STD_I32LE,   H5T_STD_I32BE,
                                   H5T_STD_U32LE,  H5T_STD_U32BE,  H5T_STD_I64LE,   H5T_STD_I64BE,   H5T_STD_U64LE,
                                   H5T_STD_U64BE,  H5T_IEEE_F32LE, H5T_IEEE_F32BE,  H5T_IEEE_F64LE,  H5T_IEEE_F64BE};
  for (hid_t s : standard)
    if (H5Tequal(type, s) > 0) return true;
  hdf5::error_reason();
  return false;
}

std::string nonstandard(hid_t type) {
  return fmt::format("{} of an unusual layout ({} bytes; 8- to 64-bit integers and 32- or 64-bit IEEE floats are read)",
                     H5Tget_class(type) == H5T_FLOAT ? "floats" : "integers", H5Tget_size(type));
}

// The dataset's dimensions; a scalar or null dataspace is an error.
std::vector<hsize_t> dimensions(hid_t ds, const Place& p) {
  Handle space(H5Dget_space(ds), H5Sclose);
  if (!space.valid()) p.fail("cannot read the dataset's shape");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) p.fail("cannot read the dataset's shape");
  if (rank == 0)
    p.fail(H5Sget_simple_extent_type(space.get()) == H5S_NULL ? "the dataset is empty"
                                                              : "the dataset holds one value (a scalar), not a column");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0) p.fail("cannot read the dataset's shape");
  return dims;
}

// A dataset whose header claims more elements than its file could hold is refused before any
// memory is taken for it; so is one whose data lives in other files.
void check_storage(hid_t ds, double elements, std::size_t element_size, const Place& p) {
  Handle dcpl(H5Dget_create_plist(ds), H5Pclose);
  if (!dcpl.valid()) p.fail("cannot read the dataset's layout");
  if (H5Pget_layout(dcpl.get()) == H5D_VIRTUAL) p.fail("a virtual dataset (data in other files) is not read");
  if (H5Pget_external_count(dcpl.get()) > 0) p.fail("the dataset's data is in external files: not read");
  // (The storage a header reports is itself a claim: never more than the file.)
  const double stored = std::min(static_cast<double>(H5Dget_storage_size(ds)), p.file_size);
  const double claimed = elements * static_cast<double>(element_size);
  const bool filtered = H5Pget_nfilters(dcpl.get()) > 0;
  if (claimed > stored * (filtered ? kMaxFilterRatio : 1.0))
    p.fail(fmt::format("the dataset claims {} values but the file stores {} bytes of them", elements,
                       static_cast<std::uint64_t>(stored)));
}

}  // namespace hdf5

namespace {

using hdf5::check_storage;
using hdf5::class_name;
using hdf5::dimensions;
using hdf5::Handle;
using hdf5::nonstandard;
using hdf5::numeric;
using hdf5::Place;
using hdf5::standard_numeric;

// Large reads go through a buffer of this many values at a time (memory stays bounded by the
// columns, not twice them).
constexpr std::size_t kBlockValues = std::size_t{1} << 20;

// External links would make a catalogue open other files: never followed.
herr_t refuse_external_link(const char*, const char*, const char*, const char*, unsigned*, hid_t, void*) { return -1; }

Handle link_access() {
  Handle lapl(H5Pcreate(H5P_LINK_ACCESS), H5Pclose);
  if (lapl.valid()) H5Pset_elink_cb(lapl.get(), refuse_external_link, nullptr);
  return lapl;
}

// Rows [0, rows) of a 1-D or 2-D numeric dataset, converted to double by HDF5, into columns.
void read_numeric(hid_t ds, const std::vector<hsize_t>& dims, RawTable& t, const Place& p) {
  const hsize_t rows = dims[0], ncols = dims.size() == 2 ? dims[1] : 1;
  Handle file_space(H5Dget_space(ds), H5Sclose);
  if (!file_space.valid()) p.fail("cannot read the dataset's shape");
  const hsize_t block = std::max<hsize_t>(1, kBlockValues / ncols);
  std::vector<double> buf(static_cast<std::size_t>(std::min(rows, block) * ncols));
  for (auto& c : t.cols) c.resize(static_cast<std::size_t>(rows));
  for (hsize_t r0 = 0; r0 < rows; r0 += block) {
    const hsize_t n = std::min(block, rows - r0);
    const hsize_t start[2] = {r0, 0}, count[2] = {n, ncols};
    Handle memory(H5Screate_simple(static_cast<int>(dims.size()), count, nullptr), H5Sclose);
    if (!memory.valid() ||
        H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
        H5Dread(ds, H5T_NATIVE_DOUBLE, memory.get(), file_space.get(), H5P_DEFAULT, buf.data()) < 0)
      p.fail(fmt::format("cannot read rows {} to {}", r0 + 1, r0 + n));
    for (hsize_t i = 0; i < n; ++i)
      for (hsize_t c = 0; c < ncols; ++c) t.cols[c][r0 + i] = buf[i * ncols + c];
  }
}

// A compound dataset: each numeric field a column, by name; other fields are named in
// not_numeric. One pass, through a memory type of one double per numeric field.
void read_compound(hid_t ds, hid_t type, hsize_t rows, RawTable& t, const Place& p) {
  const int members = H5Tget_nmembers(type);
  if (members <= 0) p.fail("the table has no fields");
  const std::size_t record = H5Tget_size(type);
  std::vector<std::string> names;
  for (int m = 0; m < members; ++m) {
    char* raw = H5Tget_member_name(type, static_cast<unsigned>(m));
    if (!raw) p.fail(fmt::format("cannot read the name of field {}", m + 1));
    const std::string name = raw;
    H5free_memory(raw);
    Handle member(H5Tget_member_type(type, static_cast<unsigned>(m)), H5Tclose);
    // A field outside its row makes libhdf5 1.10 read past its buffer (found by fuzzing).
    const std::size_t offset = H5Tget_member_offset(type, static_cast<unsigned>(m));
    const std::size_t size = member.valid() ? H5Tget_size(member.get()) : 0;
    if (size == 0 || offset > record || size > record - offset)
      p.fail(fmt::format("the table is malformed: field '{}' ({} bytes at {}) lies outside its {}-byte rows", name,
                         size, offset, record));
    const H5T_class_t c = member.valid() ? H5Tget_class(member.get()) : H5T_NO_CLASS;
    if (numeric(c) && standard_numeric(member.get())) names.push_back(name);
    else t.not_numeric.push_back(fmt::format("{} ({})", name, numeric(c) ? nonstandard(member.get()) : class_name(c)));
  }
  if (names.empty())
    p.fail(fmt::format("the table has no numeric field (it has: {})", fmt::join(t.not_numeric, ", ")));
  const std::size_t width = names.size();
  Handle memory_type(H5Tcreate(H5T_COMPOUND, width * sizeof(double)), H5Tclose);
  for (std::size_t k = 0; k < width; ++k)
    if (!memory_type.valid() || H5Tinsert(memory_type.get(), names[k].c_str(), k * sizeof(double), H5T_NATIVE_DOUBLE) < 0)
      p.fail(fmt::format("cannot read field '{}'", names[k]));
  Handle file_space(H5Dget_space(ds), H5Sclose);
  if (!file_space.valid()) p.fail("cannot read the table's shape");
  const hsize_t block = std::max<hsize_t>(1, kBlockValues / width);
  std::vector<double> buf(static_cast<std::size_t>(std::min(rows, block) * width));
  t.cols.assign(width, std::vector<double>(static_cast<std::size_t>(rows)));
  for (hsize_t r0 = 0; r0 < rows; r0 += block) {
    const hsize_t n = std::min(block, rows - r0);
    Handle memory(H5Screate_simple(1, &n, nullptr), H5Sclose);
    if (!memory.valid() || H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &r0, nullptr, &n, nullptr) < 0 ||
        H5Dread(ds, memory_type.get(), memory.get(), file_space.get(), H5P_DEFAULT, buf.data()) < 0)
      p.fail(fmt::format("cannot read rows {} to {}", r0 + 1, r0 + n));
    for (hsize_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < width; ++k) t.cols[k][r0 + i] = buf[i * width + k];
  }
  t.names = std::move(names);
}

RawTable read_dataset(hid_t ds, const Place& p) {
  Handle type(H5Dget_type(ds), H5Tclose);
  if (!type.valid()) p.fail("cannot read the dataset's type");
  const H5T_class_t c = H5Tget_class(type.get());
  const std::vector<hsize_t> dims = dimensions(ds, p);
  RawTable t;
  t.row_word = "row";
  if (c == H5T_COMPOUND) {
    if (dims.size() != 1) p.fail(fmt::format("a table must be 1-D; this one is {}-D", dims.size()));
  } else if (!numeric(c)) {
    p.fail(fmt::format("the dataset holds {}, not numbers", class_name(c)));
  } else if (!standard_numeric(type.get())) {
    p.fail(fmt::format("the dataset holds {}", nonstandard(type.get())));
  } else if (dims.size() > 2) {
    p.fail(fmt::format("a {}-D dataset ({}): catalogues are 1-D (one column) or 2-D (rows x columns)", dims.size(),
                       fmt::join(dims, " x ")));
  }
  if (dims[0] == 0 || (dims.size() == 2 && dims[1] == 0)) p.fail("the dataset is empty");
  if (dims.size() == 2 && dims[1] > INT_MAX) p.fail(fmt::format("{} columns is beyond any catalogue", dims[1]));
  // In floating point: a hostile shape's product can wrap 64 bits.
  const double elements = static_cast<double>(dims[0]) * static_cast<double>(dims.size() == 2 ? dims[1] : 1);
  check_storage(ds, elements, std::max<std::size_t>(1, H5Tget_size(type.get())), p);
  t.rows = static_cast<std::size_t>(dims[0]);
  if (c == H5T_COMPOUND) {
    read_compound(ds, type.get(), dims[0], t, p);
  } else {
    t.cols.resize(static_cast<std::size_t>(dims.size() == 2 ? dims[1] : 1));
    read_numeric(ds, dims, t, p);
  }
  t.ncols = static_cast<int>(t.cols.size());
  return t;
}

// The links of a group, in creation order when the file tracks it (h5py's track_order, pandas),
// else by name; hard and soft links only.
std::vector<std::string> links_of(hid_t group) {
  std::vector<std::string> names;
  const auto collect = [](hid_t, const char* name, const auto* info, void* out) -> herr_t {
    if (info->type == H5L_TYPE_HARD || info->type == H5L_TYPE_SOFT)
      static_cast<std::vector<std::string>*>(out)->push_back(name);
    return 0;
  };
  hsize_t at = 0;
  if (H5Literate(group, H5_INDEX_CRT_ORDER, H5_ITER_INC, &at, collect, &names) < 0) {
    H5Eclear2(H5E_DEFAULT);
    names.clear();
    at = 0;
    if (H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, &at, collect, &names) < 0) names.clear();
  }
  return names;
}

// A group: its 1-D numeric datasets of one length are the columns, by name.
RawTable read_group(hid_t group, const Place& p, hid_t lapl) {
  RawTable t;
  t.row_word = "row";
  std::vector<std::string> lengths;
  for (const std::string& name : links_of(group)) {
    const Place q{p.file, p.object == "/" ? "/" + name : p.object + "/" + name, p.file_size};
    Handle obj(H5Oopen(group, name.c_str(), lapl), H5Oclose);
    if (!obj.valid() || H5Iget_type(obj.get()) != H5I_DATASET) {
      hdf5::error_reason();
      continue;  // subgroups and named types are not columns
    }
    Handle type(H5Dget_type(obj.get()), H5Tclose);
    const H5T_class_t c = type.valid() ? H5Tget_class(type.get()) : H5T_NO_CLASS;
    if (!numeric(c) || !standard_numeric(type.get())) {
      t.not_numeric.push_back(fmt::format("{} ({})", name, numeric(c) ? nonstandard(type.get()) : class_name(c)));
      continue;
    }
    const std::vector<hsize_t> dims = dimensions(obj.get(), q);
    if (dims.size() != 1) {
      t.not_numeric.push_back(fmt::format("{} (a {}-D dataset)", name, dims.size()));
      continue;
    }
    if (!t.cols.empty() && dims[0] != t.rows)
      p.fail(fmt::format("the group's datasets differ in length: {} and {} ({} rows)", fmt::join(lengths, ", "), name,
                         dims[0]));
    if (dims[0] == 0) q.fail("the dataset is empty");
    check_storage(obj.get(), static_cast<double>(dims[0]), std::max<std::size_t>(1, H5Tget_size(type.get())), q);
    RawTable one;
    one.cols.resize(1);
    read_numeric(obj.get(), dims, one, q);
    t.rows = static_cast<std::size_t>(dims[0]);
    t.cols.push_back(std::move(one.cols[0]));
    t.names.push_back(name);
    if (lengths.size() < 4) lengths.push_back(fmt::format("{} ({} rows)", name, dims[0]));
  }
  if (t.cols.empty())
    p.fail(t.not_numeric.empty() ? std::string("the group holds no datasets")
                                 : fmt::format("the group holds no 1-D numeric dataset (it has: {})",
                                               fmt::join(t.not_numeric, ", ")));
  t.ncols = static_cast<int>(t.cols.size());
  return t;
}

// Every dataset in the file (the first few hundred), by full path.
std::vector<std::string> datasets_in(hid_t file, hid_t lapl) {
  struct Found {
    hid_t file, lapl;
    std::vector<std::string> paths;
  } found{file, lapl, {}};
  const auto visit = [](hid_t, const char* name, const auto* info, void* out) -> herr_t {
    auto& f = *static_cast<Found*>(out);
    if (info->type != H5L_TYPE_HARD) return 0;
    Handle obj(H5Oopen(f.file, name, f.lapl), H5Oclose);
    if (obj.valid() && H5Iget_type(obj.get()) == H5I_DATASET) f.paths.push_back(std::string("/") + name);
    return f.paths.size() >= 200 ? 1 : 0;
  };
  if (H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, visit, &found) < 0) hdf5::error_reason();
  return found.paths;
}

std::string listing(const std::vector<std::string>& paths) {
  if (paths.size() <= 12) return fmt::format("{}", fmt::join(paths, ", "));
  return fmt::format("{}, ... ({} in all)", fmt::join(paths.begin(), paths.begin() + 12, ", "), paths.size());
}

}  // namespace

namespace hdf5 {

RawTable read_object(hid_t obj, const Place& p, hid_t lapl) {
  const H5I_type_t kind = H5Iget_type(obj);
  if (kind == H5I_DATASET) return read_dataset(obj, p);
  if (kind == H5I_GROUP) return read_group(obj, p, lapl);
  p.fail("neither a dataset nor a group");
}

void with_object(const std::string& file, const std::string& inside,
                 const std::function<void(hid_t object, const Place& p, hid_t lapl)>& read) {
  struct stat st {};
  ::close(open_input(file, st));  // the usual reasons: no such file, a directory
  if (st.st_size == 0) throw_input(fmt::format("{}: the file is empty", file));
  hdf5::silence_errors();
  const io::ForeignRead guard("libhdf5", file);
  Place p{file, "", static_cast<double>(st.st_size)};
  const htri_t is_hdf5 = H5Fis_hdf5(file.c_str());
  if (is_hdf5 <= 0) {
    hdf5::error_reason();
    p.fail("not an HDF5 file (no HDF5 signature)");
  }
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (fapl.valid()) H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG);
  Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
  if (!f.valid()) p.fail("cannot open as HDF5");
  const Handle lapl = link_access();
  std::string object = inside;
  if (object.empty()) {
    const std::vector<std::string> all = datasets_in(f.get(), lapl.get());
    if (all.empty()) p.fail("the file holds no datasets");
    if (all.size() > 1)
      p.fail(fmt::format("the file holds {} datasets: name one as {}:/PATH ({})", all.size() < 200 ? all.size() : 200,
                         file, listing(all)));
    object = all.front();
  }
  p.object = object;
  Handle obj(H5Oopen(f.get(), object.c_str(), lapl.get()), H5Oclose);
  if (!obj.valid()) {
    hdf5::error_reason();
    const std::vector<std::string> all = datasets_in(f.get(), lapl.get());
    throw_input(fmt::format("{}: no such dataset or group{}", p.at(),
                            all.empty() ? std::string(" (the file holds no datasets)")
                                        : fmt::format(" (the file's datasets: {})", listing(all))));
  }
  read(obj.get(), p, lapl.get());
}

}  // namespace hdf5

RawTable read_hdf5(const std::string& file, const std::string& inside) {
  RawTable t;
  hdf5::with_object(file, inside, [&](hid_t obj, const Place& p, hid_t lapl) { t = hdf5::read_object(obj, p, lapl); });
  return t;
}

}  // namespace twobody
