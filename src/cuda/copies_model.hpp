#pragma once
// How many private copies of a shared-memory histogram a block keeps (seed 000 §4.3.2, equations
// 1–5), from the number of bins and the device's limits. Plain C++: the planner runs it on the
// host, and the CPU tests check it without a GPU.
//
// More copies mean fewer lanes of a warp adding to the same copy at once (fewer collisions, each
// of which serialises an atomic), but more shared memory per block and so fewer resident threads.
// The seed's model weighs the two:
//   R = ceil(T / (α M_P))                                    rounds of the whole problem   (1)
//   L(k, C) = C if k = 1, else p_k C + (1 − p_k) L(k − 1, C + C_LP)   latency of a round    (2, 3)
//   p_k = Π_{i<k} (H_S − i) / H_S ≈ exp(−k(k − 1) / 2H_S)    no two of k lanes collide      (4, 5)
// with k = 32 / H lanes per copy, H_S the slots a collision is drawn from, α the threads a
// multiprocessor holds at that shared-memory use, and the time R·L. The seed draws collisions from
// the histogram's bins (same address). Our copies are laid out bin-major (bin k of copy h at word
// k·H + h), so the lanes of one copy also meet in a bank when their bins agree modulo 32 / H:
// `banks` draws from min(H_S, 32 / H) instead. bench/RESULTS.md holds both beside the measured
// best H (the seed's Table 4, on the H100).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace twobody::cuda {

// The counting tiles' collision penalty, measured (bench/RESULTS.md, seed 000's Table 4 on the
// H100, 2026-11-23): with bin-major copies, one copy and 32 copies run within 1% of each other
// from 1 to 450 bins, so a collision costs almost nothing beside a pair's ~15 instructions; only
// occupancy decides, and 600 bins at 32 copies (2 blocks a multiprocessor) ran 21% slower than 16.
constexpr double kCountingTilesCollisionPenalty = 0.02;

struct SmLimits {
  int sms = 132;
  std::size_t smem_per_sm = 228 * 1024;     // usable shared memory per multiprocessor
  std::size_t smem_per_block = 227 * 1024;  // opt-in maximum per block
  int threads_per_sm = 2048;
  int blocks_per_sm = 32;
  std::size_t reserved_per_block = 1024;  // the runtime's share of each block's shared memory
};

// Equations 2–5: latency of a round, in units of C_L, when k lanes share a copy and a collision
// adds C_LP. Exact birthday product (4), not its approximation (5), since H_S can be small.
inline double collision_latency(int k, double slots, double c_l = 1.0, double c_lp = 1.0) {
  if (k <= 1) return c_l;
  double p = 1.0;
  for (int i = 1; i < k; ++i) p *= std::max(0.0, (slots - i) / slots);
  return p * c_l + (1.0 - p) * collision_latency(k - 1, slots, c_l + c_lp, c_lp);
}

// Threads a multiprocessor holds for blocks of `threads` using `smem` bytes each (α of equation 1);
// `max_blocks`: the blocks the kernel's registers allow (its launch bounds).
inline int resident_threads(const SmLimits& lim, int threads, std::size_t smem, int max_blocks) {
  if (smem > lim.smem_per_block) return 0;
  const std::size_t per_block = smem + lim.reserved_per_block;
  int blocks = std::min({max_blocks, lim.blocks_per_sm, lim.threads_per_sm / threads});
  blocks = std::min<int>(blocks, static_cast<int>(lim.smem_per_sm / per_block));
  return blocks * threads;
}

struct CopiesChoice {
  int copies = 1;
  std::vector<double> cost;  // per H = 1, 2, 4, 8, 16, 32 (infinite when it does not fit)
};

// The H in {1, 2, 4, ..., 32} with the least R·L. `slot_bytes(H)`: the block's shared memory at H
// copies; `total_threads`: T of equation 1 (one thread per anchor point, as in the seed).
// `c_lp`: the collision penalty in units of C_L (the seed's model: 1).
template <class SlotBytes>
CopiesChoice choose_copies(int nbins, const SmLimits& lim, int threads, int max_blocks, SlotBytes slot_bytes,
                           double total_threads, bool banks, double c_lp = 1.0) {
  CopiesChoice c;
  double best = HUGE_VAL;
  for (int h = 1; h <= 32; h *= 2) {
    const int alpha = resident_threads(lim, threads, slot_bytes(h), max_blocks);
    if (alpha == 0) {
      c.cost.push_back(HUGE_VAL);
      continue;
    }
    const double rounds = std::ceil(total_threads / (static_cast<double>(alpha) * lim.sms));
    const double slots = banks ? std::min<double>(nbins, 32 / h) : nbins;
    const double t = rounds * collision_latency(32 / h, std::max(1.0, slots), 1.0, c_lp);
    c.cost.push_back(t);
    // Ties go to more copies: equal modelled time, fewer collisions in fact.
    if (t <= best) {
      best = t;
      c.copies = h;
    }
  }
  return c;
}

}  // namespace twobody::cuda
