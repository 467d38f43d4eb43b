#pragma once
// The Gram tiles' rows prepared on the device (gram_rows.hpp names the arithmetic; make_gram_rows
// and sort_by_norm stay its host reference). The sets are uploaded as they are stored (float16,
// float32 or float64: a float32 set is never widened on the host) and, on the GPU:
//   - promoted exactly to float64, in the set's order: the rule's rows, which the settlement and
//     the float64 kernel read (the keys are the CPU's bit for bit);
//   - centred on the column means of both sets, summed in gram_centre's order (chunks of 4096
//     rows, each summed row by row, then the chunks in order), so the centre is the host's bit
//     for bit and with it every value below (the bound itself holds about any centre c: it covers
//     x' = fl64(x − c) whatever c is; the fixed order is for equal bits and one reference);
//   - per row, in stored order without FMA: max |x'|, Σ x'², the range test (gram_row_fits), σ,
//     N = fl32(Σ x'²) and n = norm_upper(Σ x'²) — the host's operations one for one;
//   - sorted by n with a stable radix sort of (n, index) (CUB), so ties keep the index order as
//     std::stable_sort does; the FP16 rows (cvt.rn.f16.f64: one rounding from float64, subnormals
//     kept, as half_bits), padding, per-block max n and min σ, written in that order.
// So the device's GramRows equal the host's bit for bit (tests/cuda_gram_rows_test.cpp), and the
// bound (exact/gram_bounds.hpp) holds as proved for them. A row out of the path's range is found
// on the device (a flag read back); its message is written on the host from the same row. For the
// cosine distance the promoted rows are first normalised (GramPreparation::cosine), then prepared
// about a zero centre with every N = 1 (make_cosine_gram_rows).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/cuda/gram_rows.hpp"
#include "twobody/vectors.hpp"

namespace twobody::cuda {

// One set's rows on the device: as the rule reads them (float64, the set's order) and as the Gram
// tiles read them (GramRows' arrays; row r is the r-th by norm once sorted).
struct DeviceGramRows {
  std::size_t n = 0, n_padded = 0;
  int dim = 0, dim_padded = 0;
  DeviceBuffer<double> rule;             // n x dim (empty when made from a GramRows without rule rows)
  DeviceBuffer<std::uint16_t> half;      // n_padded x dim_padded FP16 bits of σ x'
  DeviceBuffer<float> norm2, inv_sigma;  // n_padded
  DeviceBuffer<double> norm_up, sigma;   // n
  DeviceBuffer<double> block_norm_max, block_sigma_min;
  DeviceBuffer<std::uint32_t> order;     // n_padded: the set's index of each row

  DeviceGramRows() = default;
  // The host preparation uploaded, with the rule's rows (n x dim float64) when given.
  explicit DeviceGramRows(const GramRows& r, const double* rule_rows = nullptr)
      : n(r.n), n_padded(r.n_padded), dim(r.dim), dim_padded(r.dim_padded), rule(rule_rows ? r.n * static_cast<std::size_t>(r.dim) : 0),
        half(r.half), norm2(r.norm2), inv_sigma(r.inv_sigma), norm_up(r.norm_up), sigma(r.sigma),
        block_norm_max(r.block_norm_max), block_sigma_min(r.block_sigma_min), order(r.order) {
    if (rule_rows) rule.upload(rule_rows, rule.size());
  }
  // Whether the Gram rows are there (not only the rule's rows).
  bool prepared() const { return half.size() > 0; }
  // The Gram rows back on the host (tests compare them with make_gram_rows and sort_by_norm).
  GramRows download() const {
    GramRows g;
    g.n = n;
    g.n_padded = n_padded;
    g.dim = dim;
    g.dim_padded = dim_padded;
    g.half = half.download();
    g.norm2 = norm2.download();
    g.inv_sigma = inv_sigma.download();
    g.norm_up = norm_up.download();
    g.sigma = sigma.download();
    g.block_norm_max = block_norm_max.download();
    g.block_sigma_min = block_sigma_min.download();
    g.order = order.download();
    return g;
  }
};

// Both sets of a join (b empty for a self-join: the kernels read `a` twice).
struct DeviceGramSets {
  DeviceGramRows a, b;
  std::vector<double> centre;  // the column means of both sets (gram_centre's bit for bit); empty without Gram rows
  // Why the rows cannot take the Gram tiles, as make_gram_rows says it ("first set: " or "second
  // set: " before it for a cross join); "" when they can. Then the rule's rows are still there.
  std::string refusal;
  double upload_seconds = 0;  // the rows' copies from the host (pageable memory: the host waits for them)
};

struct GramPreparation {
  bool gram = true;     // false: the rule's rows only (the float64 kernel's)
  bool sort = true;     // by norm (sort_by_norm); false: the sets' order (make_gram_rows')
  // The cosine distance: the rule's rows normalised on the device (cpu::RuleRows' arithmetic: the
  // norm fl(sqrt(Σ x²)) summed in order, each coordinate divided by it, bit for bit), and the Gram
  // rows those of make_cosine_gram_rows (no centring, N = 1). A row of norm 0 or not finite throws
  // the rule's own Error(Input), whichever kernel then runs.
  bool cosine = false;
};

// `b` null: a self-join. The work is queued on the legacy stream, which the kernels that read the
// rows then use; the call returns once the range test has been read back (the sorted FP16 rows
// may still be in the making: they are ready for the next work on that stream).
DeviceGramSets prepare_gram_rows_on_device(const VectorSet& a, const VectorSet* b, const GramPreparation& how = {});

// For the tests: the FP16 bits the preparation's rounding gives each value (its device function).
std::vector<std::uint16_t> half_bits_on_device(const std::vector<double>& values);

}  // namespace twobody::cuda
