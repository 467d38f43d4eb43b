#pragma once
// The vector grid's index on the device (vector_grid.hpp): each set's rows sorted by cell key
// (vector_grid_cells.hpp; CUB's stable radix sort, so a cell's rows keep their index order) and
// gathered into that order, so that a cell's rows, and a run of cells along the last grid
// dimension, are one contiguous range; then the units of the refine, heaviest first.
//
// Units: the first set's cells cut into chunks of at most 32 rows; per chunk, its neighbour cells
// as runs along the last grid dimension: the 3^(m-1) offsets in {-1, 0, 1} of the other
// dimensions each give the cells [c - 1, c + 1] of the last, consecutive keys, so one range of the
// sorted partners found by two binary searches in their keys (GDS-Join searches each of the 3^m
// cells in its list of non-empty cells; a run is a third of the searches and one contiguous
// range). A self-join takes the half shell (LID-UNICOMP, seed 004 §3.3.2): the offsets whose
// first non-zero is +1, every cell of which has a larger key, and the zero offset's run from the
// chunk's own cell on, its partners limited to those after the query (j > i in the sorted order:
// within the own cell each unordered pair once, the next cell's rows all come after). Each pair of
// neighbouring cells is then met from exactly one side. A run longer than the policy's piece is
// cut into pieces; a unit is a chunk against a piece, its work qn x partners, and the queue holds
// the units sorted by decreasing work (seed 004 §3.3.3–3.3.4: the work queue).
#include <cstdint>
#include <string>

#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/cuda/vector_grid_cells.hpp"

namespace twobody::cuda {

struct DeviceVectorGridSet {
  std::size_t n = 0;
  DeviceBuffer<std::uint64_t> keys;   // cell keys, sorted
  DeviceBuffer<std::uint32_t> order;  // position -> the set's index
  DeviceBuffer<double> rows;          // n x dim, in that order (the rule's values)
};

// The query rows [q0, q0 + qn) of one cell of the first set (positions in its order) against the
// partners [p0, p1) (positions in the second set's order, or the one set's for a self-join);
// triangle: only partners j > i.
struct VectorGridUnit {
  std::uint32_t q0 = 0, p0 = 0, p1 = 0;
  std::uint16_t qn = 0, triangle = 0;
};

struct DeviceVectorGrid {
  DeviceVectorGridSet a, b;  // b empty for a self-join
  DeviceBuffer<VectorGridUnit> units;
  DeviceBuffer<std::uint32_t> queue;  // unit indices, heaviest first
  std::uint64_t n_units = 0, chunks = 0;
  std::uint64_t candidates = 0;  // pairs the units hold (keys the refine computes)
  std::string refusal;           // not empty: the units were not listed (why), run all pairs
};

// Rows to cells: keys, the stable sort, the gather. `rows`: n x dim on the device.
DeviceVectorGridSet sort_vector_grid_set(const double* rows, std::size_t n, int dim, const VectorGridGeometry& g);

// The units and queue of `grid` (its sets sorted), or its refusal when more than `max_units`.
void list_vector_grid_units(DeviceVectorGrid& grid, const VectorGridGeometry& g, bool self, std::size_t piece,
                            std::size_t max_units);

}  // namespace twobody::cuda
