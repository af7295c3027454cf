// The declarations of the CUDA elementwise kernels (elementwise.cu): every op of one or two
// operands, any mix of f16/bf16/f32 and of row- and colmajor storage.
#include "gexec/kernels/declared.hpp"

#include <string>

namespace gexec {

std::vector<KernelDef> cuda_elementwise_kernel_defs() {
  auto def = [](std::string name, OpType op, size_t inputs, std::string summary) {
    KernelDef d = declare_kernel(std::move(name), op, Backend::cuda, KernelImpl::cuda_elementwise, 10, inputs,
                                 std::move(summary));
    d.colmajor = true;  // each operand is read by its logical element, whatever its layout
    d.min_cc = 70;
    d.align_bytes = 0;  // 16-byte vector accesses only where the buffers allow them
    return d;
  };
  return {
      def("cuda.bias_add", OpType::BIAS_ADD, 2, "Y = X + b[col], in f32, rounded once to Y's dtype"),
      def("cuda.add", OpType::ADD, 2, "Z = X + Y, in f32, rounded once to Z's dtype"),
      def("cuda.relu", OpType::RELU, 1, "Y = max(X, 0)"),
      def("cuda.gelu", OpType::GELU, 1, "Y = GELU(X), tanh or erf form, in f32"),
      def("cuda.cast", OpType::CAST, 1, "Y = X converted to Y's dtype, round to nearest even"),
      def("cuda.mul", OpType::MUL, 2, "Z = X * Y, in f32, rounded once to Z's dtype"),
      def("cuda.silu", OpType::SILU, 1, "Y = X * sigmoid(X), in f32"),
      def("cuda.sub", OpType::SUB, 2, "Z = X - Y (Y: a second input or the constant scalar), in f32, rounded once to Z's dtype"),
      def("cuda.div", OpType::DIV, 2, "Z = X / Y (Y: a second input or the constant scalar), IEEE division in f32, rounded once to Z's dtype"),
      def("cuda.sigmoid", OpType::SIGMOID, 1, "Y = 1 / (1 + expf(-X)), in f32"),
      def("cuda.tanh", OpType::TANH, 1, "Y = tanhf(X), in f32"),
      def("cuda.erf", OpType::ERF, 1, "Y = erff(X), in f32"),
      def("cuda.pow", OpType::POW, 1, "Y = powf(X, exponent), a constant exponent, in f32 (NaN for X < 0 and a non-integer exponent)"),
  };
}

}  // namespace gexec
