#pragma once
// The pair kernel's tile shape, shared by the kernel and the host code that describes it.
namespace twobody::cuda {
constexpr int kThreads = 256;                   // threads per block
constexpr int kPerThread = 8;                   // anchor points held in registers per thread
constexpr int kAnchors = kThreads * kPerThread;  // anchors per work item
constexpr int kChunk = 4096;                    // partners per work item
}  // namespace twobody::cuda
