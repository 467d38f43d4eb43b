// Lattice maps as HDF5 (src/io/lattice_files.hpp): one z-slab at a time into a chunked dataset, the
// lattice as attributes, into a temporary file that write_output_file renames into place.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "twobody/detail/io/array_output.hpp"
#include "twobody/detail/io/hdf5_file.hpp"
#include "twobody/detail/io/lattice_files.hpp"
#include "twobody/error.hpp"

namespace twobody {

namespace {

using hdf5::Handle;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  const std::string reason = hdf5::error_reason();
  throw_output(reason.empty() ? fmt::format("{}: {}", path, what) : fmt::format("{}: {}: {}", path, what, reason));
}

template <class T>
void attribute(hid_t on, const char* name, hid_t type, const std::vector<T>& values, const std::string& path) {
  const hsize_t n = values.size();
  Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  Handle attr(H5Acreate2(on, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!space.valid() || !attr.valid() || H5Awrite(attr.get(), type, values.data()) < 0)
    fail(path, fmt::format("cannot write the attribute {}", name));
}

// A (nz, ny, nx) dataset written slab by slab; `slab(z, out)` fills one z-plane in memory type.
void write_volume(hid_t f, const char* name, hid_t file_type, hid_t memory_type, const Lattice& L, std::size_t value_bytes,
                  const std::function<void(std::int64_t, void*)>& slab, const std::string& path, Handle* keep) {
  const hsize_t dims[3] = {static_cast<hsize_t>(L.shape[2]), static_cast<hsize_t>(L.shape[1]), static_cast<hsize_t>(L.shape[0])};
  const hsize_t chunk[3] = {1, dims[1], dims[2]};
  Handle space(H5Screate_simple(3, dims, nullptr), H5Sclose);
  Handle props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (!space.valid() || !props.valid() || H5Pset_chunk(props.get(), 3, chunk) < 0) fail(path, "cannot lay out the map");
  Handle ds(H5Dcreate2(f, name, file_type, space.get(), H5P_DEFAULT, props.get(), H5P_DEFAULT), H5Dclose);
  if (!ds.valid()) fail(path, fmt::format("cannot create the dataset /{}", name));
  std::vector<unsigned char> buf(static_cast<std::size_t>(dims[1] * dims[2]) * value_bytes);
  Handle memory(H5Screate_simple(3, chunk, nullptr), H5Sclose);
  for (std::int64_t z = 0; z < L.shape[2]; ++z) {
    slab(z, buf.data());
    const hsize_t start[3] = {static_cast<hsize_t>(z), 0, 0};
    if (!memory.valid() || H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, chunk, nullptr) < 0 ||
        H5Dwrite(ds.get(), memory_type, memory.get(), space.get(), H5P_DEFAULT, buf.data()) < 0)
      fail(path, fmt::format("cannot write the dataset /{}", name));
  }
  if (keep) *keep = std::move(ds);
}

}  // namespace

void write_hdf5_lattice(const std::string& path, const LatticeMap& m, const nlohmann::json& meta) {
  const Lattice& L = m.lattice;
  const bool single = m.precision == Precision::Single;
  const std::size_t plane = static_cast<std::size_t>(L.shape[0] * L.shape[1]);
  const std::size_t comps = static_cast<std::size_t>(m.components);
  write_output_file(path, [&](const std::string& file) {
    hdf5::silence_errors();
    Handle f(H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
    if (!f.valid()) fail(path, "cannot create the HDF5 file");
    {
      const hid_t real = single ? H5T_IEEE_F32LE : H5T_IEEE_F64LE, native = single ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
      const std::size_t bytes = single ? 4 : 8;
      Handle file_type(H5Tcopy(real), H5Tclose), memory_type(H5Tcopy(native), H5Tclose);
      if (comps == 2) {  // h5py's complex: a compound of r and i
        file_type = Handle(H5Tcreate(H5T_COMPOUND, 2 * bytes), H5Tclose);
        memory_type = Handle(H5Tcreate(H5T_COMPOUND, 2 * bytes), H5Tclose);
        if (!file_type.valid() || !memory_type.valid() || H5Tinsert(file_type.get(), "r", 0, real) < 0 ||
            H5Tinsert(file_type.get(), "i", bytes, real) < 0 || H5Tinsert(memory_type.get(), "r", 0, native) < 0 ||
            H5Tinsert(memory_type.get(), "i", bytes, native) < 0)
          fail(path, "cannot make the complex type");
      }
      Handle ds;
      write_volume(
          f.get(), "map", file_type.get(), memory_type.get(), L, bytes * comps,
          [&](std::int64_t z, void* out) {
            const double* v = m.values.data() + static_cast<std::size_t>(z) * plane * comps;
            for (std::size_t i = 0; i < plane * comps; ++i) {
              if (single) static_cast<float*>(out)[i] = static_cast<float>(v[i]);
              else static_cast<double*>(out)[i] = v[i];
            }
          },
          path, &ds);
      attribute(ds.get(), "origin", H5T_NATIVE_DOUBLE, std::vector<double>(L.origin.begin(), L.origin.begin() + L.dim), path);
      attribute(ds.get(), "spacing", H5T_NATIVE_DOUBLE, std::vector<double>(L.spacing.begin(), L.spacing.begin() + L.dim), path);
      attribute(ds.get(), "shape", H5T_NATIVE_INT64, std::vector<std::int64_t>(L.shape.begin(), L.shape.begin() + L.dim), path);
      const std::string text = meta.dump();
      Handle str(H5Tcopy(H5T_C_S1), H5Tclose);
      Handle scalar(H5Screate(H5S_SCALAR), H5Sclose);
      if (!str.valid() || H5Tset_size(str.get(), std::max<std::size_t>(1, text.size())) < 0 || !scalar.valid())
        fail(path, "cannot write the map's metadata");
      Handle attr(H5Acreate2(ds.get(), "meta", str.get(), scalar.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
      if (!attr.valid() || H5Awrite(attr.get(), str.get(), text.c_str()) < 0) fail(path, "cannot write the map's metadata");
      if (m.excluded_count > 0)
        write_volume(
            f.get(), "excluded", H5T_STD_U8LE, H5T_NATIVE_UINT8, L, 1,
            [&](std::int64_t z, void* out) {
              std::copy_n(m.excluded.data() + static_cast<std::size_t>(z) * plane, plane, static_cast<std::uint8_t*>(out));
            },
            path, nullptr);
    }
    if (H5Fclose(f.release()) < 0) fail(path, "write failed");
  });
}

}  // namespace twobody
