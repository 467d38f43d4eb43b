#pragma once
// A budget for the GPU's memory: the CUDA backend sizes what it puts on a device (a point
// statistic's chunks, a matrix's blocks, a k-NN's batches, a lattice's tiles) as if the device had
// at most this much free, so that a catalogue larger than the budget streams through the device in
// chunks, with the results it would have in one piece. Process-wide and the same for every device,
// like a thread count; the CLI's --device-memory and twobody.set_device_memory_limit set it.
#include <cstddef>
#include <string>

namespace twobody {

// Bytes a run may plan for on each device; 0 (the default): what the device has free.
void set_device_memory_limit(std::size_t bytes);
std::size_t device_memory_limit();

// A size as bytes: "2G", "512M", "1.5GiB", "64KB", "3e9" or a plain number of bytes (K, M, G, T
// are powers of 1 024, with or without "B" or "iB"). Error(Config) naming `what` (when not empty)
// for anything else, or for less than 1 MiB (a budget no run fits in).
std::size_t parse_memory_size(const std::string& text, const std::string& what);

}  // namespace twobody
