#pragma once
// Sizes that cannot fit are refused before they are allocated: an allocation beyond physical
// memory may "succeed" under overcommit and end with the process killed instead of an error.
#include <string>

namespace twobody {
double physical_memory_bytes();
// Throws Error(Resource) naming `what` when `bytes` exceed 80% of physical memory.
void require_memory(double bytes, const std::string& what);
// The process's resident memory: its peak so far (getrusage's high-water mark) and now
// (/proc/self/statm); 0 where the system does not say.
double peak_resident_bytes();
double current_resident_bytes();
}  // namespace twobody
