// PairSpool (table.hpp): pairs appended to an unnamed temporary file (O_TMPFILE where the file
// system has it, else a named one unlinked at once), so nothing is left behind by a crash, and
// read back in blocks by the writers.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "twobody/error.hpp"
#include "twobody/table.hpp"

namespace twobody {

namespace {

[[noreturn]] void spool_failed(const std::string& where, const char* what, int err) {
  throw Error(ErrorKind::Output, fmt::format("{}: {} ({})", where, what, std::strerror(err)));
}

std::string folder_of(const std::string& near) {
  if (near.empty() || near == "-") return std::filesystem::temp_directory_path().string();
  const auto parent = std::filesystem::path(near).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

}  // namespace

PairSpool::PairSpool(const std::string& near) : where_(folder_of(near)) {
#ifdef O_TMPFILE
  fd_ = ::open(where_.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
#endif
  if (fd_ < 0) {
    std::string name = (std::filesystem::path(where_) / ".twobody-pairs-XXXXXX").string();
    fd_ = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd_ < 0)
      throw Error(ErrorKind::Output, fmt::format("{}: cannot create the output: {} (a temporary file for its pairs in {})",
                                                 near.empty() || near == "-" ? where_ : near, std::strerror(errno), where_));
    ::unlink(name.c_str());
  }
}

PairSpool::~PairSpool() {
  if (fd_ >= 0) ::close(fd_);
}

void PairSpool::append(std::span<const PairRecord> pairs) {
  const char* p = reinterpret_cast<const char*>(pairs.data());
  std::size_t left = pairs.size_bytes();
  off_t at = static_cast<off_t>(size_ * sizeof(PairRecord));
  while (left > 0) {
    const ssize_t n = ::pwrite(fd_, p, left, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) spool_failed(where_, "cannot write the pairs' temporary file", n < 0 ? errno : EIO);
    p += n;
    at += n;
    left -= static_cast<std::size_t>(n);
  }
  size_ += pairs.size();
}

void PairSpool::read(std::size_t first, std::size_t n, PairRecord* to) const {
  if (first + n > size_) throw Error(ErrorKind::Internal, "PairSpool::read past the last pair");
  char* p = reinterpret_cast<char*>(to);
  std::size_t left = n * sizeof(PairRecord);
  off_t at = static_cast<off_t>(first * sizeof(PairRecord));
  while (left > 0) {
    const ssize_t got = ::pread(fd_, p, left, at);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) spool_failed(where_, "cannot read the pairs' temporary file", got < 0 ? errno : EIO);
    p += got;
    at += got;
    left -= static_cast<std::size_t>(got);
  }
}

}  // namespace twobody
