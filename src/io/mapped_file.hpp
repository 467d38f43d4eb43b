#pragma once
// A file mapped read-only: the binary readers (.npy, .fvecs) read at the disk's speed and convert
// the mapping once, in parallel, with no copy of the file in memory.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

#include <sys/mman.h>
#include <unistd.h>

#include "twobody/detail/io/raw_table.hpp"

namespace twobody {

class MappedFile {
 public:
  // Error(Input) naming the file when it cannot be opened or mapped, or is empty.
  explicit MappedFile(const std::string& path) {
    struct stat st {};
    const int fd = open_input(path, st);
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ == 0) {
      ::close(fd);
      throw_input(fmt::format("{}: the file is empty", path));
    }
    void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (m == MAP_FAILED) throw_input(fmt::format("{}: cannot map: {}", path, std::strerror(errno)));
    data_ = static_cast<const char*>(m);
    ::madvise(m, size_, MADV_SEQUENTIAL);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() { ::munmap(const_cast<char*>(data_), size_); }
  std::string_view view() const { return {data_, size_}; }
  // Drops the pages wholly inside [offset, offset + length) from the process's memory once read:
  // the mapped file's pages count in its resident size, and a reader that converts the file
  // into columns would otherwise peak at the file plus the columns. A read after it reads the
  // file again.
  void release(std::size_t offset, std::size_t length) const {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGE_SIZE));
    const std::size_t end = std::min(size_, offset + length) / page * page;
    const std::size_t begin = (offset + page - 1) / page * page;
    if (end > begin) ::madvise(const_cast<char*>(data_) + begin, end - begin, MADV_DONTNEED);
  }

 private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace twobody
