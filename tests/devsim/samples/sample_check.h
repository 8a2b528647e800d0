// Shared helpers of the introductory sample programs: every CUDA call is checked, and a failure
// ends the program with a non-zero status and a line naming the call, as CUDA's own samples do.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace samples {

inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", file, line, call,
               cudaGetErrorName(status), cudaGetErrorString(status));
  std::exit(EXIT_FAILURE);
}

// A program cannot check on a simulated device what the device does not do: kernels are timed
// but do not execute. It only skips the kernel-result checks when the device says it is simulated.
inline bool device_is_simulated(int device) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) return false;
  return std::strstr(prop.name, "devsim") != nullptr || std::strstr(prop.name, "simulated") != nullptr;
}

inline void fail(const char* what) {
  std::fprintf(stderr, "FAILED: %s\n", what);
  std::exit(EXIT_FAILURE);
}

}  // namespace samples

#define CHECK_CUDA(call) ::samples::check_cuda((call), #call, __FILE__, __LINE__)

// A launch reports configuration errors through cudaGetLastError right away; execution errors
// surface at the next synchronisation, whose result the samples check as well.
#define CHECK_LAUNCH()                        \
  do {                                        \
    CHECK_CUDA(cudaGetLastError());           \
  } while (0)
