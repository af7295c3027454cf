// Where the reference's products are summed: the CPU loops of this layer, or a device that the app
// injects (the CUDA backend's float64 engine). The reference asks an engine for a product's sums
// and does everything else itself: bias, residual, activation, roundings and the bound.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gexec/ir/gemm_shape.hpp"
#include "gexec/ir/tensor.hpp"
#include "gexec/status.hpp"

namespace gexec {

// One operand of a product, as the reference holds it: a graph input's stored bytes (its values
// exact, nothing carried), or the values an earlier op produced, in logical (row-major) order,
// with the variance each carries into the ops that read it (bound.hpp; null: none).
struct ProductOperand {
  const Tensor* tensor = nullptr;               // dtype, layout, f8 scales, shape
  const std::vector<uint8_t>* bytes = nullptr;  // a graph input
  const std::vector<double>* value = nullptr;   // else its reference values
  const std::vector<double>* carried = nullptr; // and their carried variances, or null
  bool carries() const { return carried != nullptr; }
  // The value of logical element `l` of the tensor (f8: the stored value times its scale).
  double at(int64_t l) const;
  double carried_at(int64_t l) const { return carried ? (*carried)[size_t(l)] : 0.0; }
};

// What a product needs summed beyond its values and magnitudes; the geometry is the op's.
struct ProductKind {
  GemmShape shape;
  bool carried = false;  // var: the operands' carried variances through the product
  bool squares = false;  // squares: sum a^2 b^2 (the TF32 rounding of f32 operands)
  int64_t block = 0;     // > 0: block_sq, a blocked accumulator's magnitudes (bound::blocked_accumulation)
  bool carried_a = false, carried_b = false;  // which operands carry a variance (with `carried`)
};

struct ProductJob {
  std::string op;  // the op's name, for messages
  ProductKind kind;
  ProductOperand a, b;
};

// Per element of C, [batch][m][n] row-major, with sums over k:
struct ProductSums {
  std::vector<double> value;     // alpha sum a_ik b_kj
  std::vector<double> scale;     // |alpha| sum |a_ik| |b_kj|
  // kind.carried: alpha^2 sum ca_ik (b_kj^2 + cb_kj) + |alpha^2| sum a_ik^2 cb_kj (ca, cb: the
  // carried variances; an operand that carries none adds nothing); else empty.
  std::vector<double> var;
  std::vector<double> squares;   // kind.squares: alpha^2 sum a_ik^2 b_kj^2; else empty
  // kind.block > 0: sum over the blocks of kind.block consecutive k (the last one shorter) of
  // (sum_{k in block} |a_ik| |b_kj|)^2, without alpha; else empty.
  std::vector<double> block_sq;
};

// Called now and then with the fraction of a product done, in [0, 1]; may be empty.
using EngineProgress = std::function<void(double)>;

// One panel of a product's sums: rows [row0, row0 + rows) of C (flattened over the batch, each
// of n columns), its arrays those of ProductSums for these rows (empty where the kind does not ask
// for them). They are the engine's, valid (and free to overwrite) during the call only.
using PanelFn = std::function<Status(int64_t row0, int64_t rows, ProductSums& panel)>;

class ProductEngine {
 public:
  virtual ~ProductEngine() = default;
  // For the report: "the CPU", "CUDA device 0 (NVIDIA H200)".
  virtual std::string name() const = 0;
  // Why it could not take products of this kind now (a device's memory, with the figures), without
  // allocating anything; empty when it could. The app plans with it before the reference runs.
  virtual std::string refusal(const ProductKind& kind) const {
    (void)kind;
    return {};
  }
  // Makes ready for products of this kind (a device plans and allocates its memory), with panels
  // of `rows` rows of C where rows > 0 (for stream()), else as many as fit. Empty when ready; else
  // why not, with the figures (the reference then sums this product on the CPU).
  virtual std::string prepare(const ProductKind& kind, int64_t rows = 0) {
    (void)kind, (void)rows;
    return {};
  }
  // The sums of a product prepared for; an error is a runtime failure of the engine.
  virtual Result<ProductSums> sums(const ProductJob& job, const EngineProgress& progress) = 0;
  // The same sums handed to `fn` by panels of `rows` rows of C (the last may be shorter), in
  // order, so that no one holds all of them at once; an error from fn stops it and is returned.
  // This default sums the whole product, then hands out its rows; a device engine streams them.
  virtual Status stream(const ProductJob& job, int64_t rows, const EngineProgress& progress, const PanelFn& fn);
  // Where the last sums' time went, for -v ("operands 12.0 ms, products 30.1 ms, ..."); empty
  // where the engine does not say.
  virtual std::string phases() const { return {}; }
  // Graph inputs already on the engine's device, by name: the same stored bytes as the host's
  // (ProductOperand::bytes), where the run left them. A device engine reads them there instead of
  // uploading the host's copy; the buffers must stay unchanged until the last sums. Others ignore it.
  virtual void set_resident(std::map<std::string, const void*> inputs) { (void)inputs; }
};

// The CPU's loops (reference_gemm.cpp): every sum over k in ascending order, so that the sampled
// reference, which sums one element at a time, gets the same bits.
ProductEngine& cpu_product_engine();

// The sums of one element (batch entry e, row i, column j) of a product, summed on the CPU over k
// in ascending order from the job's operands: what a device's sums are checked against.
struct ElementSums {
  double value = 0, scale = 0, var = 0, squares = 0, block_sq = 0;
};
ElementSums element_sums(const ProductJob& job, int64_t e, int64_t i, int64_t j);

// A device engine that neither the reference nor the report trusts alone: every product's sums
// come from `device` where it prepares for them (else from the CPU, with a note saying why), and
// at up to `samples` of their elements (every row and column of C where the count allows) they
// are summed again on the CPU and must agree to within float64 rounding: the first element that
// does not is a runtime error naming the op, the element and both values.
class CrossCheckedEngine final : public ProductEngine {
 public:
  CrossCheckedEngine(ProductEngine& device, int64_t samples, uint64_t seed)
      : device_(device), samples_(samples), seed_(seed) {}
  std::string name() const override { return device_.name(); }
  Result<ProductSums> sums(const ProductJob& job, const EngineProgress& progress) override;
  // Streamed by the device (prepared for panels of `rows` rows), its sums at the samples taken
  // from the panels as they pass.
  Status stream(const ProductJob& job, int64_t rows, const EngineProgress& progress, const PanelFn& fn) override;

  // The ops whose products the device summed, by name, with the elements of each that were
  // summed again on the CPU.
  const std::map<std::string, int64_t>& on_device() const { return on_device_; }
  // Why a product was summed on the CPU instead ("op X: ...").
  const std::vector<std::string>& notes() const { return notes_; }
  // Milliseconds spent in the device's sums and in the CPU's cross-check, over every product.
  double device_ms() const { return device_ms_; }
  // The device's phases of its last product (ProductEngine::phases).
  std::string device_phases() const { return device_.phases(); }
  double cross_check_ms() const { return cross_check_ms_; }

 private:
  ProductEngine& device_;
  int64_t samples_;
  uint64_t seed_;
  // Whether the device cannot take this product (in panels of `rows` rows, 0: as many as fit);
  // where so, a note says why, and the caller takes the CPU's sums instead.
  bool refused(const ProductJob& job, int64_t rows);
  std::map<std::string, int64_t> on_device_;
  std::vector<std::string> notes_;
  double device_ms_ = 0, cross_check_ms_ = 0;
};

// The largest difference two float64 sums of `k` terms of total magnitude `mag` (sum |term|),
// taken in different orders (and one multiplication by alpha), may show: 2 (k + 2) 2^-53 mag,
// plus a few subnormal steps for results near underflow.
double sum_order_slack(int64_t k, double mag);

}  // namespace gexec
