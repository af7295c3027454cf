// The modes the options name (--backend, --verify), parsed once into enums where they enter
// the library (the command line, the Python module), as PadPolicy is: past that point no code
// compares mode names as strings.
#pragma once

#include <cstdint>
#include <string_view>

#include "gexec/status.hpp"

namespace gexec {

// --backend: where a run runs (auto: CUDA where a device is present, else the CPU) or, for
// `gexec check`, where the reference's products are summed.
enum class BackendChoice : uint8_t { automatic, cuda, cpu };
std::string_view backend_choice_name(BackendChoice b);  // "auto", "cuda", "cpu"
// bad_input "--backend: unknown backend \"x\"; expected one of auto, cuda, cpu" for any other name.
Result<BackendChoice> parse_backend_choice(std::string_view name);

// --verify: how the outputs are checked (check.hpp's plan_check says what auto becomes).
enum class VerifyMode : uint8_t { automatic, full, sample, exact, none };
std::string_view verify_mode_name(VerifyMode m);  // "auto", "full", "sample", "exact", "none"
// bad_input "--verify: unknown mode \"x\"; expected one of auto, ..." for any other name.
Result<VerifyMode> parse_verify_mode(std::string_view name);

// --precision: f32 products on CUDA in full f32 or through TF32 (operands rounded to TF32); the
// check's bound follows what ran.
enum class PrecisionChoice : uint8_t { f32, tf32 };
std::string_view precision_choice_name(PrecisionChoice p);  // "f32", "tf32"
// bad_input "--precision: unknown precision \"x\"; expected one of f32, tf32" for any other name.
Result<PrecisionChoice> parse_precision_choice(std::string_view name);

}  // namespace gexec
