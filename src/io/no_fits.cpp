// A build without cfitsio: FITS files are refused with the reason, never read as text.
#include "twobody/detail/io/raw_table.hpp"

namespace twobody {

RawTable read_fits(const std::string& file, const std::string&) {
  throw_config(fmt::format("{}: twobody was built without FITS support (install libcfitsio-dev and rebuild)", file));
}

}  // namespace twobody
