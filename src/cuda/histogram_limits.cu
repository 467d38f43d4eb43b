// The largest 1-D histogram the CUDA backend takes: one copy of it, its float-bits bin table of
// the fewest cells (256), and the partner tile of the widest points (kMaxDim coordinates) in the
// shared memory a block may use. run_pairs shrinks the table and the copies to fit, so every
// histogram up to this size runs; the engine gives larger ones to the CPU backend.
#include "twobody/detail/cuda/grid_kernel.cuh"
#include "twobody/detail/cuda/pair_kernel.cuh"

namespace twobody::cuda {

std::size_t histogram_bins_in_shared(bool weighted, int regions, std::size_t smem_optin) {
  const auto fits = [&](int nb) {
    // (64 bytes for the kernels' static shared words: static and dynamic shared memory together
    // must fit the opt-in limit.)
    if (pair_kernel_smem<kMaxDim>(OutputMode::Histogram, weighted, nb, 256, 1, (nb + 2) | 1) + 64 > smem_optin)
      return false;
    // Jackknife regions: the grid agent's 32 sub-histograms a warp beside the block's region x bin
    // counters, in run_pairs' budget (half the shared memory, two blocks a multiprocessor).
    return regions == 0 || pair_output_smem(OutputMode::Histogram, weighted, nb, 256, 32 * kGridWarps, (nb + 2) | 1,
                                            regions, true) <= smem_optin / 2 - 1024;
  };
  int lo = 0, hi = 1 << 20;  // fits(lo), !fits(hi)
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return static_cast<std::size_t>(lo);
}

}  // namespace twobody::cuda
