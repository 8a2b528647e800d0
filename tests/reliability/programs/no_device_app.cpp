// A program as cuda-samples are written, for a machine without a usable device: it asks for
// devices, and stops the way the samples stop when none answers. Modes (argv[1]):
//   exit_failure  cudaGetDeviceCount fails -> exit(EXIT_FAILURE) (checkCudaErrors)
//   waived        cudaGetDeviceCount and cudaSetDevice fail -> exit(2) (EXIT_WAIVED)
//   return        both queries fail -> return 0 from main
//   atexit_exit   the query fails; an atexit handler calls exit(3)
//   malloc        cudaMalloc fails -> exit(2): a recorded call, so a trace is written
// Prints "device queries N" (the calls that failed) and "device found" when one answered.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

int g_failed = 0;

bool query_devices() {
  int count = 0;
  const cudaError_t result = cudaGetDeviceCount(&count);
  if (result != cudaSuccess) ++g_failed;
  if (result == cudaSuccess && count > 0) std::printf("device found\n");
  return result == cudaSuccess && count > 0;
}

void report_and_exit(int status) {
  std::printf("device queries %d\n", g_failed);
  std::fflush(stdout);
  std::exit(status);
}

void exit_from_handler() { std::exit(3); }

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (std::strcmp(mode, "atexit_exit") == 0) std::atexit(exit_from_handler);
  if (std::strcmp(mode, "malloc") == 0) {
    void* pointer = nullptr;
    const cudaError_t result = cudaMalloc(&pointer, 256);
    std::printf("cudaMalloc %d\n", int(result));
    report_and_exit(2);
  }
  const bool found = query_devices();
  if (std::strcmp(mode, "exit_failure") == 0 && !found) report_and_exit(EXIT_FAILURE);
  if (std::strcmp(mode, "waived") == 0 || std::strcmp(mode, "return") == 0) {
    if (cudaSetDevice(0) != cudaSuccess) ++g_failed;
    if (std::strcmp(mode, "waived") == 0 && !found) report_and_exit(2);
  }
  std::printf("device queries %d\n", g_failed);
  return 0;
}
