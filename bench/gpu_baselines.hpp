#pragma once
#include <cstddef>
#include <vector>

struct BaselineResult {
  double seconds;
};

double fma_lanes_per_second();
// Conflict-free shared-memory atomics a second (lanes), over the whole card.
double shared_atomic_lanes_per_second();
// Warp-wide mma.sync instructions a second over the whole card: TF32 m16n8k8, or FP16 m16n8k16.
double mma_per_second(bool half);
BaselineResult naive_sdh(const std::vector<float>& x, const std::vector<float>& y, const std::vector<float>& z,
                         double rmax, int nbins);
BaselineResult alg3_sdh(const std::vector<float>& x, const std::vector<float>& y, const std::vector<float>& z,
                        double rmax, int nbins);
// Pairs within r listed by one global atomic per pair (slots beyond `capacity` dropped, counted);
// `found`: the pairs in range.
BaselineResult atomic_pair_list(const std::vector<float>& x, const std::vector<float>& y, const std::vector<float>& z,
                                double r, std::size_t capacity, unsigned long long* found);
