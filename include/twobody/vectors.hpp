#pragma once
// A set of vectors of run-time dimension (1 to many thousands): the input of similarity joins and
// k nearest neighbours (twobody/joins.hpp). Rows are stored as given — row-major, one element
// type, float16, float32 or float64 — and promoted exactly to float64 where a pair is decided.
// Row-major because every vector format (.fvecs, NumPy C order, HDF5 datasets) is, so files and
// NumPy arrays are taken with one read or none, and a pair's float64 decision reads two rows.
// PointSet (points.hpp) stays the structure-of-arrays form of 1–8 coordinates.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace twobody {

class PointSet;

enum class Element : std::uint8_t { F16, F32, F64 };

const char* to_string(Element e);
std::size_t element_bytes(Element e);
// IEEE binary16 bits as a double (exact: every half is a double).
double half_to_double(std::uint16_t bits);

class VectorSet {
 public:
  VectorSet() = default;
  // n rows of `dim` values, row-major, taken without a copy (sizes that disagree: Error(Internal)).
  static VectorSet from_rows(std::vector<double> rows, std::size_t n, int dim);
  static VectorSet from_rows(std::vector<float> rows, std::size_t n, int dim);
  // float16 rows given as their IEEE binary16 bits.
  static VectorSet from_half_bits(std::vector<std::uint16_t> rows, std::size_t n, int dim);
  // The caller's memory, read in place: row i starts at rows + i * row_stride elements. `owner`
  // keeps that memory alive and unchanged for as long as the set or any slice of it lives.
  static VectorSet borrow(const void* rows, Element e, std::size_t n, int dim, std::size_t row_stride,
                          std::shared_ptr<const void> owner);
  // A point set's points as float64 rows (its weights and labels are not vectors' business).
  static VectorSet from_points(const PointSet& p);

  int dim() const noexcept { return dim_; }
  std::size_t size() const noexcept { return n_; }
  bool empty() const noexcept { return n_ == 0; }
  Element element() const noexcept { return element_; }
  std::size_t row_stride() const noexcept { return stride_; }  // in elements
  bool borrowed() const noexcept { return borrowed_; }

  // Row i's storage (element() tells its type) and row i promoted to float64 into out[0..dim).
  const void* row(std::size_t i) const { return base_ + i * stride_ * element_bytes(element_); }
  void row_f64(std::size_t i, double* out) const;
  // Rows [first, first + count) as their own set, sharing this one's storage.
  VectorSet slice(std::size_t first, std::size_t count) const;
  // The points of a set of at most kMaxDim dimensions (float64 columns), for the point paths.
  PointSet to_points() const;
  // Error(Input) naming `source`, the 1-based row and column of the first NaN or infinity.
  void check_finite(const std::string& source) const;

 private:
  std::shared_ptr<const void> storage_;  // keeps base_ alive (own vector, or the caller's owner)
  const unsigned char* base_ = nullptr;
  std::size_t n_ = 0;
  std::size_t stride_ = 0;
  int dim_ = 0;
  Element element_ = Element::F64;
  bool borrowed_ = false;
};

// A 64-bit hash of the set's content (dimension, size, element type, every value's bits): what
// keys results saved for one set; not a cryptographic hash.
std::uint64_t content_hash(const VectorSet& v);

}  // namespace twobody
