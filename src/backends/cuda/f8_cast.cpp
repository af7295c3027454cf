// The f8 CAST kernel of the CUDA backend (kernel table: cuda.f8_cast): its scales on the device,
// one launch of f8_convert.cu's conversion per run; with block scales, S read beside X or Y, or
// computed per block by the quantizing CAST as its second output.
#include <algorithm>
#include <memory>

#include "check.hpp"
#include "f8_convert.hpp"
#include "gexec/ir/block_scale.hpp"
#include "raii.hpp"

namespace gexec::cuda {
namespace {

class F8CastKernel final : public Kernel {
 public:
  F8CastKernel(const Graph& g, const Op& op, const Binding& b, cudaStream_t stream, int sm_count)
      : x_t_(g.tensor(op.inputs[0])), y_t_(g.tensor(op.outputs[0])), stream_(stream), sm_count_(sm_count), n_(x_t_.numel()),
        writes_s_(writes_block_scale(g, op)), x_slot_(scale_slot(g, op, op.inputs[0])),
        y_slot_(writes_s_ ? -1 : scale_slot(g, op, op.outputs[0])), second_(b.outputs.size() > 1) {
    x_ = side(x_t_, nullptr);
    y_ = side(y_t_, nullptr);
    bound_ = move_operands(b);
  }

  Status prepare() override {
    // On the kernel's stream: a plain cudaMemcpy from pageable memory may return before its DMA
    // lands, and the legacy stream it runs on is not ordered with our non-blocking one, so the
    // conversion could read the scales half-written (it did, now and then, on the H200).
    auto upload = [this](const Tensor& t, DeviceMemory& m) -> Status {
      if (!is_f8(t.dtype) || t.scale.is_block()) return {};
      auto r = DeviceMemory::allocate(t.scale.values.size() * sizeof(double));
      if (!r) return r.error().with("allocating the scales of " + t.name);
      m = std::move(*r);
      GEXEC_CUDA_TRY(cudaMemcpyAsync(m.get(), t.scale.values.data(), m.bytes(), cudaMemcpyHostToDevice, stream_));
      return {};
    };
    GEXEC_TRY(upload(x_t_, x_scale_));
    GEXEC_TRY(upload(y_t_, y_scale_));
    GEXEC_CUDA_TRY(cudaStreamSynchronize(stream_));
    x_.scale = static_cast<const double*>(x_scale_.get());
    y_.scale = static_cast<const double*>(y_scale_.get());
    return {};
  }

  Status run() override {
    if (!bound_) return runtime_error("cuda.f8_cast: its operands (or a block scale's S) are not bound");
    if (writes_s_) return launch_f8_quantize_blocks(x_, y_, static_cast<float*>(s_out_), sm_count_, stream_);
    return launch_f8_cast(x_, y_, n_, amax_, stream_);
  }
  // The tensor-wide and per-axis scales live in the kernel's own buffers, S is read where it is
  // bound in each run, and the conversion checks the alignment it uses in each launch: any
  // buffers will do.
  bool move_operands(const Binding& b) override {
    const size_t scales = size_t(std::max(x_slot_, y_slot_) + 1);
    if (b.inputs.size() != 1 || b.outputs.size() != (second_ ? 2u : 1u) || b.scales.size() < scales) return false;
    x_.data = b.inputs[0];
    y_.data = b.outputs[0];
    amax_ = second_ && !writes_s_ ? b.outputs[1] : nullptr;
    s_out_ = writes_s_ ? b.outputs[1] : nullptr;
    if (x_slot_ >= 0) x_.block_s = static_cast<const float*>(b.scales[size_t(x_slot_)]);
    if (y_slot_ >= 0) y_.block_s = static_cast<const float*>(b.scales[size_t(y_slot_)]);
    bound_ = true;
    return true;
  }

 private:
  static F8Side side(const Tensor& t, void* data) {
    F8Side s;
    s.data = data;
    s.dtype = int(t.dtype);
    s.colmajor = t.rank() == 2 && t.layout == Layout::colmajor;
    if (t.rank() == 2) s.rows = t.shape[0], s.cols = t.shape[1];
    s.axis = is_f8(t.dtype) ? t.scale.axis : -1;
    if (is_f8(t.dtype) && t.scale.is_block()) s.br = t.scale.block[0], s.bc = t.scale.block[1];
    return s;
  }

  const Tensor& x_t_;
  const Tensor& y_t_;
  cudaStream_t stream_;
  int sm_count_;
  int64_t n_;
  const bool writes_s_;   // the quantizing CAST: S is its second output
  const int x_slot_, y_slot_;  // where X's and Y's S are among the binding's scales (-1: none read)
  const bool second_;     // an amax, or S where writes_s_
  F8Side x_, y_;
  void* amax_ = nullptr;
  void* s_out_ = nullptr;
  bool bound_ = false;
  DeviceMemory x_scale_, y_scale_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_f8_cast_kernel(const Graph& g, const Op& op, const Binding& b,
                                                    cudaStream_t stream, int sm_count) {
  if (op.inputs.size() != 1 || b.inputs.size() != 1 || op.outputs.empty() || b.outputs.size() != op.outputs.size())
    return bad_input("op " + op.name + ": expected one input and one output (and an amax), bound");
  const Tensor& x = g.tensor(op.inputs[0]);
  const Tensor& y = g.tensor(op.outputs[0]);
  if (x.numel() != y.numel()) return bad_input("op " + op.name + ": input and output element counts differ");
  std::unique_ptr<Kernel> k = std::make_unique<F8CastKernel>(g, op, b, stream, sm_count);
  return k;
}

}  // namespace gexec::cuda
