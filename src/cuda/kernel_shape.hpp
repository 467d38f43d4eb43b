#pragma once
// The pair kernel's tile shape, shared by the kernel and the host code that describes it.
#include <cstddef>
#include <cstdint>

#include "twobody/config.hpp"

namespace twobody::cuda {
constexpr int kThreads = 256;                   // threads per block
constexpr int kPerThread = 8;                   // anchor points held in registers per thread
constexpr int kAnchors = kThreads * kPerThread;  // anchors per work item
constexpr int kChunk = 4096;                    // partners per work item

// Auto: where an item's walk over sub-tiles of kThreads partners from j0 starts: past those whose
// every partner is at or below every anchor of the item (anchors from i0), which hold no wanted
// pair (an item straddling the diagonal starts up to its anchors' count of partners below it).
// (`width`: the sub-tiles' partners, the block's threads.)
TWOBODY_HD std::uint32_t first_wanted_subtile(bool is_auto, std::uint32_t i0, std::uint32_t j0,
                                              std::uint32_t width = kThreads) {
  return is_auto && i0 + 1 > j0 ? j0 + (i0 + 1 - j0) / width * width : j0;
}

// Histogram pairs near an edge that a warp settles together, at most (counting_tiles.cuh).
constexpr int kSettleQueue = 64;

// Shared memory of the counting tiles (counting_tiles.cuh): the partner tile (a float4 a thread)
// and, for a histogram, `copies` interleaved copies of nbins + 2 slots and each warp's queue of
// pairs to settle (two 32-bit indices an entry, on an 8-byte boundary: the copies' words rounded
// up to even).
constexpr std::size_t counting_tiles_smem(bool histogram, int nbins, int copies) {
  const std::size_t words = static_cast<std::size_t>(nbins + 2) * static_cast<std::size_t>(copies);
  return sizeof(float) * 4 * kThreads +
         (histogram ? sizeof(unsigned) * ((words + 1) & ~std::size_t(1)) + sizeof(unsigned) * 2 * kSettleQueue * (kThreads / 32)
                    : 0);
}
}  // namespace twobody::cuda
