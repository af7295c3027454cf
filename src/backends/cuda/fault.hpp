// Fault injection for the CUDA backend's failure paths: a testing aid, off unless asked for.
//
// The tests of out-of-memory, epilogue fallback and launch failures cannot rely on the device
// misbehaving on cue, so the backend asks here whether to pretend it did. Nothing changes until
// configure() is called: by a test, or by the gexec binary's main(), which alone passes on the
// environment variable GEXEC_FAULT (install_test_faults, commands.hpp). The library never reads
// the environment. Accepted values, comma-separated:
//
//   alloc:N     the N-th device allocation made through DeviceMemory::allocate (arena, cuBLASLt
//               workspace, GEMM scratch buffers; counted from 1) fails with
//               cudaErrorMemoryAllocation, exactly as if cudaMalloc had returned it
//   epilogue    every fused cuBLASLt epilogue is treated as having no algorithm, so each GEMM
//               takes its unfused path (plain product, then the bias/activation kernel)
//   compile     every kernel generated at run time (a FUSED_ELEMENTWISE group's) is treated as
//               failing to compile, so each group runs on the program interpreter
//   skinny-drop-split  the skinny GEMM's split-K sum leaves out the last split's partial sums: a
//               wrong kernel, for the tests that show the check refuses it
//   launch[:N]  the N-th elementwise kernel launch (default the first) is given an invalid
//               block size, so that the launch fails (CUDA 13.0 reports cudaErrorInvalidValue)
//
// e.g. `GEXEC_FAULT=alloc:2 gexec run graphs/mlp3.json` exits with status 3.
#pragma once

#include <string>
#include <string_view>

#include "gexec/status.hpp"

namespace gexec::cuda::fault {

// Replaces the faults in force (and restarts the counts) with those of `spec`, in the syntax of
// GEXEC_FAULT; an empty spec turns them all off. A bad spec is a bad_input error and changes nothing.
Status configure(std::string_view spec);

// The faults in force, in the syntax of GEXEC_FAULT; empty when none.
std::string active();

// Counts one device allocation; true when it is the one to fail.
bool fail_allocation();

// True when fused epilogues are to be refused.
bool refuse_epilogue();

// True when generated kernels are to be treated as failing to compile.
bool refuse_compile();

// True when the skinny GEMM is to drop its last K split (a seeded error).
bool skinny_drop_split();

// Counts one elementwise launch; true when it is the one to break.
bool break_launch();

}  // namespace gexec::cuda::fault
