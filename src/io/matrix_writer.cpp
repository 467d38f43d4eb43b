// The matrix sinks of host memory and .npy files (matrix_writer.hpp); HDF5's is in
// hdf5_matrix_writer.cpp.
#include "twobody/detail/io/matrix_writer.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "twobody/detail/io/array_output.hpp"
#include "twobody/error.hpp"

namespace twobody {

void MatrixSink::put_mirror(std::size_t r0, std::size_t nr, std::size_t c0, std::size_t nc, const double* v,
                            std::size_t ld) {
  // In strips of columns, so the transposed copy stays small whatever the width; each strip
  // transposed in squares of 32 x 32 (a square's rows read whole, its columns written whole: the
  // plain loop read one value a cache line, a column at a time) shared by the threads.
  constexpr std::size_t kStrip = 1024, kSquare = 32;
  scratch_.resize(std::min(nc, kStrip) * nr);
  double* const out = scratch_.data();
  for (std::size_t s = 0; s < nc; s += kStrip) {
    const std::size_t w = std::min(kStrip, nc - s);
    const auto squares_i = static_cast<std::int64_t>((nr + kSquare - 1) / kSquare);
    const auto squares_j = static_cast<std::int64_t>((w + kSquare - 1) / kSquare);
#pragma omp parallel for collapse(2) schedule(static) num_threads(nr * w >= (std::size_t{1} << 16) ? threads_ : 1)
    for (std::int64_t bi = 0; bi < squares_i; ++bi)
      for (std::int64_t bj = 0; bj < squares_j; ++bj) {
        const std::size_t i0 = static_cast<std::size_t>(bi) * kSquare, j0 = static_cast<std::size_t>(bj) * kSquare;
        const std::size_t i1 = std::min(nr, i0 + kSquare), j1 = std::min(w, j0 + kSquare);
        for (std::size_t j = j0; j < j1; ++j)
          for (std::size_t i = i0; i < i1; ++i) out[j * nr + i] = v[i * ld + s + j];
      }
    put(c0 + s, w, r0, nr, out, nr);
  }
}

void MatrixSink::put_block(std::size_t r0, std::size_t nr, std::size_t c0, const double* v, std::size_t ld,
                           bool symmetric) {
  const std::size_t nc = cols() - c0;
  put(r0, nr, c0, nc, v, ld);
  if (symmetric && nr < nc) put_mirror(r0, nr, c0 + nr, nc - nr, v + nr, ld);
  block_done();
}

void mirror_upper_square(double* v, std::size_t n, std::size_t ld) {
  for (std::size_t i = 1; i < n; ++i)
    for (std::size_t j = 0; j < i; ++j) v[i * ld + j] = v[j * ld + i];
}

HostMatrixSink::HostMatrixSink(std::size_t rows, std::size_t cols) : MatrixSink(rows, cols) { values_.resize(rows * cols); }

// Rows copied by the run's threads when there are many: a GPU's block is hundreds of MB, and its
// pages are first touched here.
void HostMatrixSink::put(std::size_t r0, std::size_t nr, std::size_t c0, std::size_t nc, const double* v, std::size_t ld) {
  const auto n = static_cast<std::int64_t>(nr);
#pragma omp parallel for schedule(static) num_threads(nr * nc >= (std::size_t{1} << 16) ? threads() : 1)
  for (std::int64_t i = 0; i < n; ++i)
    std::memcpy(&values_[(r0 + static_cast<std::size_t>(i)) * cols() + c0], v + static_cast<std::size_t>(i) * ld,
                nc * sizeof(double));
}

namespace {

[[noreturn]] void fail(const std::string& path, const char* what, int err) {
  throw_output(fmt::format("{}: {}: {}", path, what, std::strerror(err)));
}

class NpyMatrixSink final : public MatrixSink {
 public:
  NpyMatrixSink(const std::string& file, const std::string& path, std::size_t rows, std::size_t cols, Element dtype)
      : MatrixSink(rows, cols), path_(path), f32_(dtype == Element::F32), elem_(f32_ ? 4 : 8) {
    const std::string header = npy_header(f32_ ? "<f4" : "<f8", rows, cols);
    offset_ = header.size();
    size_ = offset_ + rows * cols * elem_;
    fd_ = ::open(file.c_str(), O_RDWR | O_CLOEXEC);
    if (fd_ < 0) fail(path, "cannot open the output", errno);
    if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) close_and_fail("cannot size the output", errno);
    // The disk space taken now where the file system can (a full disk is then this error, not a
    // SIGBUS on a page written later); where it cannot, the file stays sparse.
    if (::fallocate(fd_, 0, 0, static_cast<off_t>(size_)) != 0 && errno != EOPNOTSUPP && errno != ENOSYS)
      close_and_fail("cannot reserve the output's space", errno);
    void* m = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (m == MAP_FAILED) close_and_fail("cannot map the output", errno);
    base_ = static_cast<unsigned char*>(m);
    std::memcpy(base_, header.data(), header.size());
  }
  ~NpyMatrixSink() override {
    if (base_) ::munmap(base_, size_);
    if (fd_ >= 0) ::close(fd_);
  }

  void put(std::size_t r0, std::size_t nr, std::size_t c0, std::size_t nc, const double* v, std::size_t ld) override {
    // Narrow pieces of many rows (a symmetric matrix's mirrored strips) go through pwrite: through
    // the mapping each would map its rows' pages (whole large folios of the page cache) into this
    // process, the whole file at every block.
    const bool narrow = nc * elem_ < kNarrowBytes;
    if (narrow) strip_.resize(nc * elem_);
    for (std::size_t i = 0; i < nr; ++i) {
      const std::size_t at = offset_ + ((r0 + i) * cols() + c0) * elem_;
      unsigned char* out = narrow ? strip_.data() : base_ + at;
      const double* row = v + i * ld;
      if (f32_) {
        float* o = reinterpret_cast<float*>(out);  // (the header pads the data to 64 bytes: aligned)
        for (std::size_t j = 0; j < nc; ++j) o[j] = static_cast<float>(row[j]);
      } else {
        std::memcpy(out, row, nc * sizeof(double));
      }
      if (narrow) write_at(at, nc * elem_);
    }
  }

  // The written pages go to the page cache's writeback and leave this process: the resident set
  // stays a block or two, however large the file.
  void block_done() override {
    ::msync(base_, size_, MS_ASYNC);
    ::madvise(base_, size_, MADV_DONTNEED);
  }

  void finish() override {
    // An I/O error of the writeback shows here.
    if (::msync(base_, size_, MS_SYNC) != 0) fail(path_, "write failed", errno);
    ::munmap(base_, size_);
    base_ = nullptr;
    if (::close(fd_) != 0) {
      fd_ = -1;
      fail(path_, "write failed", errno);
    }
    fd_ = -1;
  }


 private:
  static constexpr std::size_t kNarrowBytes = 64 * 1024;

  void write_at(std::size_t at, std::size_t bytes) {
    std::size_t done = 0;
    while (done < bytes) {
      const ssize_t w = ::pwrite(fd_, strip_.data() + done, bytes - done, static_cast<off_t>(at + done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) fail(path_, "write failed", w < 0 ? errno : EIO);
      done += static_cast<std::size_t>(w);
    }
  }

  [[noreturn]] void close_and_fail(const char* what, int err) {
    ::close(fd_);
    fd_ = -1;
    fail(path_, what, err);
  }

  std::string path_;
  bool f32_;
  std::size_t elem_;
  std::size_t offset_ = 0, size_ = 0;
  int fd_ = -1;
  unsigned char* base_ = nullptr;
  std::vector<unsigned char> strip_;
};

}  // namespace

std::unique_ptr<MatrixSink> open_npy_matrix(const std::string& file, const std::string& path, std::size_t rows,
                                            std::size_t cols, Element dtype) {
  return std::make_unique<NpyMatrixSink>(file, path, rows, cols, dtype);
}

}  // namespace twobody
