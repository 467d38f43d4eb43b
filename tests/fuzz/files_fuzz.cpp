// libFuzzer target for the HDF5 and FITS readers (catalogues and vectors): any input must either
// read or end in a twobody::Error, never a crash, a hang, a sanitizer report or another exception.
// The first byte picks the format, the object inside the file and the options; the rest is the
// file's content (written to a temporary file: both libraries read files, not memory).
// Known limits: libhdf5 and cfitsio are not built with the sanitizers here, so a memory error
// inside them shows only when it crashes or passes through an intercepted call (memcpy, malloc);
// libhdf5 1.10 leaks a little on some corrupted files, suppressed by tests/fuzz/files_leaks.supp.
// Build and run: scripts/fuzz-readers --files [SECONDS]; seeds: tests/fuzz/files_seeds.cpp.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "twobody/error.hpp"
#include "twobody/io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t mode = data[0];
  const bool hdf5 = (mode & 1) == 0;
  const std::string path = "/tmp/twobody-fuzz-files-" + std::to_string(::getpid()) + (hdf5 ? ".h5" : ".fits");
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  static const char* hdf5_parts[] = {"", ":/points", ":/table", ":/cat"};
  static const char* fits_parts[] = {"", ":1", ":GALAXIES", ":0"};
  const std::string spec = path + (hdf5 ? hdf5_parts : fits_parts)[(mode >> 1) % 4];
  twobody::ReadOptions opt;
  switch ((mode >> 3) % 4) {
    case 0: break;
    case 1: opt.default_columns = 3; break;
    case 2: opt.column_names = hdf5 ? std::vector<std::string>{"x", "y"} : std::vector<std::string>{"RA", "DEC"}; break;
    case 3: opt.default_columns = 2; opt.weight_column = 3; break;
  }
  try {
    const twobody::Catalogue c = twobody::read_catalogue(spec, opt);
    (void)c;
  } catch (const twobody::Error&) {
  }
  try {
    const twobody::VectorSet v = twobody::read_vectors(spec, opt);
    (void)v;
  } catch (const twobody::Error&) {
  }
  std::remove(path.c_str());
  return 0;
}
