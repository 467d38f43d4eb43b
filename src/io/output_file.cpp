#include "twobody/io.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <streambuf>
#include <vector>

#include "twobody/detail/io/array_output.hpp"
#include "twobody/error.hpp"

namespace twobody {

namespace {

// A stream buffer over a file descriptor that remembers the first write error (errno), so the
// caller can say why (std::ofstream says only that something failed).
class DescriptorBuffer : public std::streambuf {
 public:
  explicit DescriptorBuffer(int fd) : fd_(fd), buf_(1 << 20) { setp(buf_.data(), buf_.data() + buf_.size()); }
  int error() const { return error_; }
  bool drain() {
    const char* p = pbase();
    std::size_t left = static_cast<std::size_t>(pptr() - pbase());
    while (left > 0 && error_ == 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        error_ = errno;
      } else if (n == 0) {
        error_ = EIO;
      } else {
        p += n;
        left -= static_cast<std::size_t>(n);
      }
    }
    setp(buf_.data(), buf_.data() + buf_.size());
    return error_ == 0;
  }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  int fd_;
  std::vector<char> buf_;
  int error_ = 0;
};

[[noreturn]] void fail(const std::string& path, const char* what, int err) {
  throw_output(fmt::format("{}: {}: {}", path, what, std::strerror(err)));
}

// Fills the stream over `fd`, then flushes; the first error, with its reason.
void fill_descriptor(int fd, const std::string& path, const std::function<void(std::ostream&)>& fill) {
  DescriptorBuffer buf(fd);
  std::ostream out(&buf);
  fill(out);
  out.flush();
  if (buf.error() != 0) fail(path, "write failed", buf.error());
  if (!out) fail(path, "write failed", EIO);
}

std::string temporary_beside(const std::filesystem::path& target) {
  static std::atomic<unsigned> counter{0};
  const auto dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  return (dir / fmt::format(".{}.twobody-{}-{}.tmp", target.filename().string(), ::getpid(), counter++)).string();
}

}  // namespace

bool is_standard_output(const std::string& path) { return path.empty() || path == "-"; }

void write_output(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  if (is_standard_output(path)) {
    std::cout.flush();
    fill_descriptor(STDOUT_FILENO, "standard output", fill);
    return;
  }
  std::filesystem::path target(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw_output(fmt::format("{}: is a directory", path));
    if (!S_ISREG(st.st_mode)) {
      // A device or a FIFO: written in place (nothing to rename over).
      const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) fail(path, "cannot open for writing", errno);
      try {
        fill_descriptor(fd, path, fill);
      } catch (...) {
        ::close(fd);
        throw;
      }
      if (::close(fd) != 0) fail(path, "write failed", errno);
      return;
    }
    // A link to a regular file: the file it names is replaced, not the link.
    std::error_code ec;
    const auto real = std::filesystem::canonical(target, ec);
    if (!ec) target = real;
  }
  const std::string temp = temporary_beside(target);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail(path, "cannot create the output", errno);
  bool closed = false;
  try {
    fill_descriptor(fd, path, fill);
    if (::fsync(fd) != 0) fail(path, "write failed", errno);
    closed = true;
    if (::close(fd) != 0) fail(path, "write failed", errno);
  } catch (...) {
    if (!closed) ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    fail(path, "cannot replace the output", err);
  }
}

void write_output_file(const std::string& path, const std::function<void(const std::string& file)>& fill) {
  struct stat st {};
  const bool exists = !is_standard_output(path) && ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) throw_output(fmt::format("{}: is a directory", path));
  const bool in_place = !is_standard_output(path) && (!exists || S_ISREG(st.st_mode));
  std::filesystem::path target(path);
  if (in_place && exists) {
    std::error_code ec;
    const auto real = std::filesystem::canonical(target, ec);
    if (!ec) target = real;
  }
  // Standard output and devices: the file is made in the temporary folder, then copied.
  const std::string temp =
      in_place ? temporary_beside(target) : temporary_beside(std::filesystem::temp_directory_path() / "twobody-output");
  // Created here first, so that a folder that is missing or not writable is said with its reason.
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail(path, "cannot create the output", errno);
  ::close(fd);
  try {
    fill(temp);
    const int sync = ::open(temp.c_str(), O_RDONLY | O_CLOEXEC);
    if (sync < 0) fail(path, "write failed", errno);
    const bool synced = ::fsync(sync) == 0;
    const int err = errno;
    ::close(sync);
    if (!synced) fail(path, "write failed", err);
    if (!in_place)
      write_output(path, [&](std::ostream& out) {
        std::ifstream in(temp, std::ios::binary);
        out << in.rdbuf();
        if (!in) fail(path, "write failed", EIO);
      });
  } catch (...) {
    ::unlink(temp.c_str());
    throw;
  }
  if (in_place && ::rename(temp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    fail(path, "cannot replace the output", err);
  }
  if (!in_place) ::unlink(temp.c_str());
}

}  // namespace twobody
