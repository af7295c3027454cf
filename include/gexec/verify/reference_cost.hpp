// What the CPU reference costs on this machine: its rates, measured once per process, and the
// time of a full or a sampled reference estimated from them (--verify auto chooses by these).
#pragma once

#include <cstdint>
#include <vector>

#include "gexec/ir/graph.hpp"
#include "gexec/verify/bound.hpp"
#include "gexec/verify/product_engine.hpp"

namespace gexec {

struct ReferenceRates {
  double product_macs_per_s = 0;  // the full reference's products: multiply-adds (value and magnitude) per second
  double sampled_macs_per_s = 0;  // the sampled reference's sums of one element
  double elements_per_s = 0;      // elements of an elementwise op, or of the comparison, per second
};

// Timed on small products and ops on the first call (some tens of milliseconds), on all the
// threads the reference uses; the same figures afterwards.
const ReferenceRates& measured_reference_rates();

// Seconds of the full CPU reference of g and of comparing its outputs: every product's passes
// (values and magnitudes; the carried variances where an operand comes from an op; the TF32
// squares and the blocked magnitudes that `prec` asks for) and every element of every op.
double estimate_full_seconds(const Graph& g, const Precision& prec, const ReferenceRates& rates);

// Seconds of the sampled reference that compares choose_samples(output, samples, seed, tile) of
// every output: the tensors it computes in full (what a product reads from another op), then
// each sampled element's own sums and elementwise steps.
double estimate_sampled_seconds(const Graph& g, const Precision& prec, int64_t samples, int64_t tile,
                                const ReferenceRates& rates);

// The products the full reference of g asks its engine for, under prec, in the graph's order (an
// operand an op produced counted as carrying a variance): what a device engine is planned for.
std::vector<ProductKind> reference_products(const Graph& g, const Precision& prec);

}  // namespace gexec
