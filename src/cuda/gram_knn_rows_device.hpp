#pragma once
// The k-NN tiles' row terms (gram_knn_rows.hpp: N̂, m, ρ, the lower norm, per-block maxima and
// minima) computed on the device from the Gram rows the device prepared (gram_rows_device.hpp),
// so that a k-NN's rows never visit the host: one thread a row of the norm order sums its three
// float64 sums over k in stored order without FMA (the host reference's operations one for one,
// finished by the same gram_knn_row_terms), the rows staged through shared memory; a block of
// kGramRowBlock rows then reduces its GramKnnBlock. The terms equal make_gram_knn_rows' bit for bit
// (tests/cuda_gram_cosine_test.cpp), so the bound holds as proved for them.
#include <vector>

#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/cuda/gram_knn_rows.hpp"
#include "twobody/detail/cuda/gram_rows_device.hpp"

namespace twobody::cuda {

// GramKnnRows' arrays on the device, in the Gram rows' order.
struct DeviceGramKnnRows {
  DeviceBuffer<float> norm2;                              // N̂, n_padded (0 for padding)
  DeviceBuffer<double> rounded_norm, rounding, norm_low;  // n
  DeviceBuffer<GramKnnBlock> blocks;                      // n_padded / kGramRowBlock

  DeviceGramKnnRows() = default;
  // The host's terms uploaded (the reference path).
  explicit DeviceGramKnnRows(const GramKnnRows& k)
      : norm2(k.norm2), rounded_norm(k.rounded_norm), rounding(k.rounding), norm_low(k.norm_low), blocks(k.blocks) {}
  GramKnnRows download() const {
    GramKnnRows k;
    k.norm2 = norm2.download();
    k.rounded_norm = rounded_norm.download();
    k.rounding = rounding.download();
    k.norm_low = norm_low.download();
    k.blocks = blocks.download();
    return k;
  }
};

// The terms of `g` (prepared on the device with its rule rows, about `centre`: DeviceGramSets'
// centre). Queued on the legacy stream, as the preparation.
DeviceGramKnnRows make_gram_knn_rows_on_device(const DeviceGramRows& g, const std::vector<double>& centre);

}  // namespace twobody::cuda
