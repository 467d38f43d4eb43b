#pragma once
// Mutual information streamed to a matrix sink (memory, .npy, HDF5) a block of rows at a time,
// for matrices beyond memory (twobody matrix --kernel mi -o FILE): the same entries, bit for bit,
// as twobody::mutual_information's in-memory matrix, whatever the block.
#include <cstddef>

#include "twobody/mutual_information.hpp"

namespace twobody {

class MatrixSink;

RunInfo mutual_information_into(const VectorSet& a, const VectorSet* b, const MutualInformationOptions& o,
                                std::size_t block_rows, MatrixSink& sink, const RunOptions& run = {});

}  // namespace twobody
