// unary_tile (cpu_math.hpp): one loop per op, built for the widest vectors the CPU has; and the
// products' epilogue activations through it.
#include "cpu_math.hpp"

namespace gexec::cpu {

// The op's switch is taken once: each case is a loop of one function, which the compiler
// vectorizes (all but POW, a call into libm; powf gives NaN for a negative x with a non-integer
// p). GCC builds the function three times and picks one when the program loads: for x86-64-v4
// (AVX-512) and v3 (AVX2 with FMA), where f32_math.hpp's multiply-adds are one instruction each,
// and for the build's baseline (SSE2), which calls fmaf. A 64 x 1024 erf GELU took 8.9 ns an
// element on one core of an AVX-512 machine as SSE2 code, 3.7 as AVX2 and 2.0 as AVX-512 (before
// the multiply-adds were fused). The clones compute what the baseline does, bit for bit: the
// backend is built with -ffp-contract=off (CMakeLists.txt), so no clone fuses a multiply and an
// add that the baseline rounds twice, and f32_math.hpp's tests hold for all three.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void unary_tile(OpType t, GeluApprox approx, float p, float* v, int64_t n) {
  const auto each = [v, n](auto f) {
    for (int64_t j = 0; j < n; ++j) v[j] = f(v[j]);
  };
  switch (t) {
    case OpType::SIGMOID: return each(sigmoid);
    case OpType::TANH: return each(f32::tanh);
    case OpType::ERF: return each(f32::erf);
    case OpType::POW: return each([p](float x) { return std::pow(x, p); });
    case OpType::RELU: return each([](float x) { return x < 0 ? 0.0f : x; });  // NaN passes through
    case OpType::GELU: return approx == GeluApprox::tanh ? each(gelu_tanh) : each(gelu_erf);
    case OpType::SILU: return each(silu);
    default: return;
  }
}

void activate_tile(Act act, float* v, int64_t n) {
  switch (act) {
    case Act::relu: return unary_tile(OpType::RELU, GeluApprox::tanh, 0, v, n);
    case Act::gelu: return unary_tile(OpType::GELU, GeluApprox::tanh, 0, v, n);
    case Act::gelu_erf: return unary_tile(OpType::GELU, GeluApprox::none, 0, v, n);
    case Act::silu: return unary_tile(OpType::SILU, GeluApprox::tanh, 0, v, n);
    case Act::none: return;
  }
}

}  // namespace gexec::cpu
