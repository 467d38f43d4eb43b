// libFuzzer target for the catalogue and vector readers (text, .npy, fast-food, .fvecs, .bvecs,
// .ivecs): any input must either read or end in a twobody::Error, never a crash, a hang, a
// sanitizer report or another exception.
// The first byte picks the reader and the options; the rest is the file's content.
// Build and run: scripts/fuzz-readers [SECONDS] (clang, -fsanitize=fuzzer,address,undefined).
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
  static const char* ext[] = {".txt", ".npy", ".ff", ".csv"};
  const std::string path = "/tmp/twobody-fuzz-" + std::to_string(::getpid()) + ext[mode % 4];
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  twobody::ReadOptions opt;
  switch ((mode >> 2) % 5) {
    case 0: break;
    case 1: opt.default_columns = 3; break;
    case 2: opt.columns = {1, 2}; opt.weight_column = 3; break;
    case 3: opt.column_names = {"x", "y"}; opt.value_columns = {3}; break;
    case 4: opt.default_columns = 2; opt.region_column = 1 + (mode >> 5) % 4; break;
  }
  try {
    const twobody::Catalogue c = twobody::read_catalogue(path, opt);
    (void)c;
  } catch (const twobody::Error&) {
  }
  // The vector readers on the same bytes: by the extension, then as each of the ANN vector files.
  for (twobody::FileFormat f : {twobody::FileFormat::Auto, twobody::FileFormat::Fvecs, twobody::FileFormat::Bvecs,
                                twobody::FileFormat::Ivecs}) {
    opt.format = f;
    try {
      const twobody::VectorSet v = twobody::read_vectors(path, opt);
      (void)v;
    } catch (const twobody::Error&) {
    }
  }
  std::remove(path.c_str());
  return 0;
}
