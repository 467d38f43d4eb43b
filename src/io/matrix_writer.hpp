#pragma once
// Where a matrix's blocks go (plan §8, "Beyond device and host memory"): host memory, a .npy file
// mapped MAP_SHARED and written a block at a time (each block's pages given back once written, so
// the resident set stays a few blocks at any size), or an HDF5 dataset a hyperslab a block. The
// traversal hands over tiles of finished values; the other half of a symmetric matrix is the
// writer's (put_mirror), so no backend writes it twice.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "twobody/result.hpp"
#include "twobody/vectors.hpp"

namespace twobody {

class MatrixSink {
 public:
  MatrixSink(std::size_t rows, std::size_t cols) : rows_(rows), cols_(cols) {}
  virtual ~MatrixSink() = default;
  MatrixSink(const MatrixSink&) = delete;
  MatrixSink& operator=(const MatrixSink&) = delete;

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  // Rows [r0, r0 + nr) x columns [c0, c0 + nc) of the matrix, row-major at stride ld.
  virtual void put(std::size_t r0, std::size_t nr, std::size_t c0, std::size_t nc, const double* v, std::size_t ld) = 0;
  // The transpose of that tile at (c0, r0): the mirrored half of a symmetric matrix.
  void put_mirror(std::size_t r0, std::size_t nr, std::size_t c0, std::size_t nc, const double* v, std::size_t ld);
  // A block of rows [r0, r0 + nr) from column c0 to the last (v[0] the entry (r0, c0), stride ld),
  // then block_done(). `symmetric` (A × A computed from c0 = r0, the block's own square whole): the
  // entries right of that square mirrored below it too.
  void put_block(std::size_t r0, std::size_t nr, std::size_t c0, const double* v, std::size_t ld, bool symmetric);
  // Threads the mirror's transposition (and a sink's own copies) may use: the run's.
  void set_threads(int threads) { threads_ = threads < 1 ? 1 : threads; }
  int threads() const { return threads_; }
  // After every block of rows: what was written may leave memory.
  virtual void block_done() {}
  // After the last block: the data are complete (the file is flushed; the caller renames it).
  virtual void finish() {}

 private:
  std::size_t rows_, cols_;
  int threads_ = 1;
  std::vector<double> scratch_;
};

// In memory, row-major float64 (MatrixResult::values).
// The square of n rows at v (stride ld) made symmetric from its upper half: v[i][j] = v[j][i] for
// j < i (A × A computes j >= i).
void mirror_upper_square(double* v, std::size_t n, std::size_t ld);

class HostMatrixSink final : public MatrixSink {
 public:
  HostMatrixSink(std::size_t rows, std::size_t cols);
  void put(std::size_t r0, std::size_t nr, std::size_t c0, std::size_t nc, const double* v, std::size_t ld) override;
  MatrixValues take() { return std::move(values_); }

 private:
  MatrixValues values_;
};

// A .npy file at `file` (a temporary the caller renames), float64 or float32, sized with ftruncate
// and mapped; `path` names it in errors.
std::unique_ptr<MatrixSink> open_npy_matrix(const std::string& file, const std::string& path, std::size_t rows,
                                            std::size_t cols, Element dtype);
// An HDF5 file at `file` holding the chunked dataset /matrix (Error(Config) in a build without HDF5).
std::unique_ptr<MatrixSink> open_hdf5_matrix(const std::string& file, const std::string& path, std::size_t rows,
                                             std::size_t cols, Element dtype);

}  // namespace twobody
