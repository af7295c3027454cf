// GEXEC_HD marks functions compiled for both the host and the device (nvcc), plain C++ elsewhere.
#pragma once

#if defined(__CUDACC__)
#define GEXEC_HD __host__ __device__
#else
#define GEXEC_HD
#endif
