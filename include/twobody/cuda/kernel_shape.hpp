#pragma once
// The pair kernel's tile shape, shared by the kernel and the host code that describes it.
#include <cstddef>

namespace twobody::cuda {
constexpr int kThreads = 256;                   // threads per block
constexpr int kPerThread = 8;                   // anchor points held in registers per thread
constexpr int kAnchors = kThreads * kPerThread;  // anchors per work item
constexpr int kChunk = 4096;                    // partners per work item

// Shared memory of the counting tiles (counting_tiles.cuh): the partner tile (a float4 a thread)
// and, for a histogram, `copies` interleaved copies of nbins + 2 slots.
constexpr std::size_t counting_tiles_smem(bool histogram, int nbins, int copies) {
  return sizeof(float) * 4 * kThreads +
         (histogram ? sizeof(unsigned) * static_cast<std::size_t>(nbins + 2) * static_cast<std::size_t>(copies) : 0);
}
}  // namespace twobody::cuda
