// The device's measured peak f16 GEMM rate, for "% of peak": measured once, cached on disk.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "gexec/status.hpp"

namespace gexec::cuda {

// The median rate, in TFLOP/s, of an 8192 x 8192 x 8192 f16 cuBLASLt GEMM (f32 accumulation)
// on random normal data, on the current device (which must be `device_ordinal`). Read from
// $XDG_CACHE_HOME/gexec/peak.json (default ~/.cache/gexec/peak.json) when that file has an
// entry for this device name, CUDA runtime and cuBLASLt version; measured and written there
// otherwise. A cache that cannot be written only costs a warning.
Result<double> measured_peak_tflops(int device_ordinal, cudaStream_t stream, cublasLtHandle_t lt);

}  // namespace gexec::cuda
