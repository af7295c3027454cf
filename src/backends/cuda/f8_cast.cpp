// The f8 CAST kernel of the CUDA backend (kernel table: cuda.f8_cast): its scales on the device,
// one launch of f8_convert.cu's conversion per run.
#include <memory>

#include "check.hpp"
#include "f8_convert.hpp"
#include "raii.hpp"

namespace gexec::cuda {
namespace {

class F8CastKernel final : public Kernel {
 public:
  F8CastKernel(const Tensor& x, const Tensor& y, const Binding& b, cudaStream_t stream)
      : x_t_(x), y_t_(y), stream_(stream), n_(x.numel()) {
    x_ = side(x, b.inputs[0]);
    y_ = side(y, b.outputs[0]);
    amax_ = b.outputs.size() > 1 ? b.outputs[1] : nullptr;
  }

  Status prepare() override {
    // On the kernel's stream: a plain cudaMemcpy from pageable memory may return before its DMA
    // lands, and the legacy stream it runs on is not ordered with our non-blocking one, so the
    // conversion could read the scales half-written (it did, now and then, on the H200).
    auto upload = [this](const Tensor& t, DeviceMemory& m) -> Status {
      if (!is_f8(t.dtype)) return {};
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

  Status run() override { return launch_f8_cast(x_, y_, n_, amax_, stream_); }
  // The scales live in the kernel's own buffers and the conversion reads and writes element by
  // element (no alignment assumed): any buffers will do.
  bool move_operands(const Binding& b) override {
    if (b.inputs.size() != 1 || b.outputs.size() != (amax_ ? 2u : 1u)) return false;
    x_.data = b.inputs[0];
    y_.data = b.outputs[0];
    if (amax_) amax_ = b.outputs[1];
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
    return s;
  }

  const Tensor& x_t_;
  const Tensor& y_t_;
  cudaStream_t stream_;
  int64_t n_;
  F8Side x_, y_;
  void* amax_ = nullptr;
  DeviceMemory x_scale_, y_scale_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_f8_cast_kernel(const Graph& g, const Op& op, const Binding& b,
                                                    cudaStream_t stream) {
  if (op.inputs.size() != 1 || b.inputs.size() != 1 || op.outputs.empty() || b.outputs.size() != op.outputs.size())
    return bad_input("op " + op.name + ": expected one input and one output (and an amax), bound");
  const Tensor& x = g.tensor(op.inputs[0]);
  const Tensor& y = g.tensor(op.outputs[0]);
  if (x.numel() != y.numel()) return bad_input("op " + op.name + ": input and output element counts differ");
  std::unique_ptr<Kernel> k = std::make_unique<F8CastKernel>(x, y, b, stream);
  return k;
}

}  // namespace gexec::cuda
