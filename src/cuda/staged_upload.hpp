#pragma once
// Host-to-device (and device-to-host) copies of large arrays through pinned staging buffers. The driver's copy from
// pageable memory goes through its own pinned buffer, filled by one CPU thread: 7.7 GB/s measured
// on the H200 hosts (720 MB in 93 ms, 3·10^7 points), the largest part of a paircount of 3·10^7
// points, and repeated on every device when several share a run. Here several host threads fill
// one of two pinned buffers while the copy engine drains the other.
#include <cstddef>

namespace twobody::cuda {

// Copies `bytes` from host `src` (any memory) to device `dst` on this thread's current device, in
// order with the legacy stream (as cudaMemcpy: the call returns once the copy is done). Small
// copies, and TWOBODY_STAGED_UPLOAD=0, take cudaMemcpy.
void upload_bytes(void* dst, const void* src, std::size_t bytes);

// The way back: `bytes` from device `src` to host `dst`, through the same two pinned buffers, the
// copy engine filling one while several host threads empty the other into `dst` (which they touch
// first, in parallel: a large result's pages are not faulted in by one thread). Returns once done.
// Small copies, and TWOBODY_STAGED_UPLOAD=0, take cudaMemcpy.
void download_bytes(void* dst, const void* src, std::size_t bytes);

}  // namespace twobody::cuda
