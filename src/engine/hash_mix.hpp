#pragma once
// The word mix of the content hashes (points.cpp, vectors.cpp): one 64-bit word into the hash, a
// multiply-xorshift mix as in splitmix64's finaliser. Not a cryptographic hash.
#include <cstdint>

namespace twobody {

inline std::uint64_t hash_mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 29);
}

}  // namespace twobody
