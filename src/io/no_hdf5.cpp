// A build without libhdf5: HDF5 files are refused with the reason, never read as text.
#include "twobody/detail/io/array_output.hpp"
#include "twobody/detail/io/lattice_files.hpp"
#include "twobody/detail/io/matrix_writer.hpp"
#include "twobody/detail/io/raw_table.hpp"
#include "twobody/detail/io/vector_files.hpp"

namespace twobody {

namespace {
[[noreturn]] void refuse(const std::string& path) {
  throw_config(fmt::format("{}: twobody was built without HDF5 support (install libhdf5-dev and rebuild)", path));
}
}  // namespace

RawTable read_hdf5(const std::string& file, const std::string&) { refuse(file); }
void write_hdf5_arrays(const std::string& path, const std::vector<ArrayOut>&) { refuse(path); }
void write_hdf5_table(const std::string& path, const std::vector<ArrayOut>&, const nlohmann::json&) { refuse(path); }
std::variant<VectorSet, RawTable> read_hdf5_vectors(const std::string& file, const std::string&) { refuse(file); }
void write_hdf5_vectors(const std::string& path, const VectorSet&) { refuse(path); }
void write_hdf5_lattice(const std::string& path, const LatticeMap&, const nlohmann::json&) { refuse(path); }
std::unique_ptr<MatrixSink> open_hdf5_matrix(const std::string&, const std::string& path, std::size_t, std::size_t, Element) {
  refuse(path);
}

}  // namespace twobody
