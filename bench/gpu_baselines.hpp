#pragma once
#include <vector>

struct BaselineResult {
  double seconds;
};

double fma_lanes_per_second();
BaselineResult naive_sdh(const std::vector<float>& x, const std::vector<float>& y, const std::vector<float>& z,
                         double rmax, int nbins);
BaselineResult alg3_sdh(const std::vector<float>& x, const std::vector<float>& y, const std::vector<float>& z,
                        double rmax, int nbins);
