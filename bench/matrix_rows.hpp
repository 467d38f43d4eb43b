#pragma once
#include <cstddef>

// Seconds for an n x n float64 distance matrix (3-D) written to device memory by the engine's
// seed-001 tiles and by one thread an entry, for cudaMemset of as many bytes, and for copying
// d2h_bytes from the device into pinned host memory.
struct MatrixTimes {
  double tiles = 0, naive = 0, memset = 0, d2h = 0;
  double bytes = 0, d2h_bytes = 0;
};
MatrixTimes matrix_times(std::size_t n);
