// The program the CUDA FUSED_ELEMENTWISE kernel runs: a group's steps as register-slot instructions.
//
// The kernel keeps every live value of its elements in registers, in one of kSlots slots; an
// instruction names its slots as constants the kernel switches on (uniform across a warp), so no
// value is ever indexed at run time and nothing spills to local memory. The slots are assigned
// here, on the host, by liveness: a value takes a free slot when it is loaded or computed and
// gives it back after its last reader. The inputs are loaded first when they fit (so their
// memory requests are all in flight at once), else each just before its first reader. Plain C++
// with no CUDA headers, so that the unit tests can run a program on the host.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gexec/ir/op.hpp"

namespace gexec::cuda {

constexpr int kFusedSlots = kGroupMaxLive;
constexpr int kFusedMaxInstrs = kGroupMaxInputs + 2 * kGroupMaxSteps + kGroupMaxOutputs;

enum class FusedKind : uint8_t { load, op, store };

struct FusedInstr {
  FusedKind kind = FusedKind::op;
  uint8_t op = 0;      // OpType, for op
  uint8_t dtype = 0;   // DType the op's result is rounded to
  uint8_t erf = 0;     // GELU in its erf form
  uint8_t a = 0, b = 0, c = 0;  // op: c = op(a, b); load: input a into slot c; store: slot a to output c
  uint8_t scalar = 0;           // op: the second operand is k, not slot b
  float k = 0;                  // op: the step's constant (GroupStep::constant) as an f32: y, or POW's exponent
};

struct FusedProgram {
  std::vector<FusedInstr> code;
  std::string error;  // non-empty when the group needs more than kFusedSlots live values
};

// `eager`: all inputs loaded up front; plan_fused_program tries that first, then loads on demand.
inline FusedProgram plan_fused_program_as(const Attrs& a, int n_in, bool eager) {
  FusedProgram p;
  const int n_values = n_in + int(a.steps.size());
  // The last step reading each value; outputs are stored the moment their step computes them,
  // so they hold no slot afterwards.
  std::vector<int> last(size_t(n_values), -1);
  for (size_t s = 0; s < a.steps.size(); ++s)
    for (int32_t v : a.steps[s].args) last[size_t(v)] = int(s);
  std::vector<int> slot(size_t(n_values), -1);
  std::vector<bool> busy(kFusedSlots, false);
  auto take = [&]() -> int {
    for (int k = 0; k < kFusedSlots; ++k)
      if (!busy[size_t(k)]) {
        busy[size_t(k)] = true;
        return k;
      }
    return -1;
  };
  auto fail = [&] {
    p.code.clear();
    p.error = "the group needs more than " + std::to_string(kFusedSlots) + " live values at once";
    return p;
  };
  auto load = [&](int v) {
    const int k = take();
    if (k < 0) return false;
    slot[size_t(v)] = k;
    p.code.push_back({FusedKind::load, 0, 0, 0, uint8_t(v), 0, uint8_t(k)});
    return true;
  };
  if (eager)
    for (int v = 0; v < n_in; ++v)
      if (last[size_t(v)] >= 0 && !load(v)) return fail();
  for (size_t s = 0; s < a.steps.size(); ++s) {
    const GroupStep& st = a.steps[s];
    for (int32_t v : st.args)
      if (v < n_in && slot[size_t(v)] < 0 && !load(v)) return fail();
    FusedInstr in;
    in.kind = FusedKind::op;
    in.op = uint8_t(st.type);
    in.dtype = uint8_t(st.dtype);
    in.erf = st.type == OpType::GELU && st.approximate == GeluApprox::none;
    in.scalar = st.constant && is_binary_type(st.type);
    in.k = float(st.constant.value_or(0.0));
    in.a = uint8_t(slot[size_t(st.args[0])]);
    in.b = uint8_t(slot[size_t(st.args.size() > 1 ? st.args[1] : st.args[0])]);
    // Arguments read for the last time give their slots back before the result takes one: the
    // kernel reads both into temporaries first, so the result may land in an argument's slot.
    for (int32_t v : st.args)
      if (last[size_t(v)] == int(s) && slot[size_t(v)] >= 0) busy[size_t(slot[size_t(v)])] = false;
    const int own = n_in + int(s);
    const int k = take();
    if (k < 0) return fail();
    in.c = uint8_t(k);
    p.code.push_back(in);
    slot[size_t(own)] = k;
    for (size_t o = 0; o < a.results.size(); ++o)
      if (a.results[o] == own) p.code.push_back({FusedKind::store, 0, 0, 0, uint8_t(k), 0, uint8_t(o)});
    if (last[size_t(own)] < 0) busy[size_t(k)] = false;  // no later step reads it
  }
  return p;
}

inline FusedProgram plan_fused_program(const Attrs& a, int n_in) {
  FusedProgram p = plan_fused_program_as(a, n_in, true);
  return p.error.empty() ? p : plan_fused_program_as(a, n_in, false);
}

// The leading instructions that load input k into slot k: the kernel issues them all before the
// program runs, each straight into its register (fused_kernel.cuh).
inline int eager_prefix(const FusedProgram& p) {
  int k = 0;
  while (k < int(p.code.size()) && p.code[size_t(k)].kind == FusedKind::load && p.code[size_t(k)].a == k &&
         p.code[size_t(k)].c == k)
    ++k;
  return k;
}

// The number of slots the program touches (the highest slot named, plus one).
inline int slots_used(const FusedProgram& p) {
  int n = 0;
  for (const FusedInstr& in : p.code) {
    const int hi = in.kind == FusedKind::load ? in.c : in.kind == FusedKind::store ? in.a : std::max({in.a, in.b, in.c});
    n = std::max(n, hi + 1);
  }
  return n;
}

}  // namespace gexec::cuda
