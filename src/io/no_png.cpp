// A build without libpng: PNG slices are refused with the reason.
#include <fmt/format.h>

#include "twobody/detail/io/lattice_files.hpp"
#include "twobody/error.hpp"

namespace twobody {

void write_png_slice(const std::string& path, const LatticeMap&) {
  throw_config(fmt::format("{}: twobody was built without PNG support (install libpng-dev and rebuild)", path));
}

}  // namespace twobody
