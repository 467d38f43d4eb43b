#pragma once
// Seed 000's §5.1 comparison of tiling variants (tiling_variants.cu).
#include <vector>

struct TilingResult {
  double seconds;
  unsigned long long count;  // pairs within r (float32): equal across variants
};

struct TilingRow {
  const char* source;  // Reg-SHM, Reg-RoC, SHM-SHM, Shuffle, or the intra-block schedules
  const char* layout;  // float, float2, float4
  TilingResult result;
  int intra_passes = 0;  // > 0: timed on the intra-block pairs alone (§4.4.1), this many passes over them
};

// Passes over the intra-block pairs in one launch (one pass on 2^20 points is ~0.1 ms).
constexpr int kIntraReps = 64;

// Every variant on the same points (uniform 3-D, float32) with cutoff r.
std::vector<TilingRow> tiling_variants(const std::vector<float>& x, const std::vector<float>& y,
                                       const std::vector<float>& z, double r);
