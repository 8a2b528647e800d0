// The work of driver_only.cpp through the CUDA runtime, built twice: linked to the shared
// runtime (every call interposed by the agent's hooks) and to devsim's static runtime archive
// (no call passes through a dynamic symbol: the agent sees them through CUDA's tool injection
// and CUPTI's callbacks). Both builds must give the same trace counts. CUDA 13's nvcc compiles
// `<<<>>>` to its private entry __cudaLaunchKernel, which the checks count as the
// cudaLaunchKernel it implements.
//
//   runtime_work <steps>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "inject_kernels.cuh"

namespace {

void check(cudaError_t result, const char* what) {
  if (result == cudaSuccess) return;
  std::fprintf(stderr, "runtime_work: %s failed with %d\n", what, int(result));
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 4;
  constexpr int n = 1 << 16;
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  float* data = nullptr;
  check(cudaMalloc(&data, n * sizeof(float)), "cudaMalloc");
  std::vector<float> host(n, 1.0f), back(n, 0.0f);
  check(cudaEventRecord(start, stream), "cudaEventRecord");
  for (int step = 0; step < steps; ++step) {
    check(cudaMemcpyAsync(data, host.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream), "HtoD");
    scale<<<(n + 255) / 256, 256, 0, stream>>>(data, 2.0f, n);
    offset<<<(n + 255) / 256, 256, 0, stream>>>(data, 1.0f, n);
    check(cudaMemsetAsync(data, 0, 256, stream), "cudaMemsetAsync");
    check(cudaMemcpyAsync(back.data(), data, n * sizeof(float), cudaMemcpyDeviceToHost, stream), "DtoH");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }
  check(cudaEventRecord(stop, stream), "cudaEventRecord");
  check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  if (back[0] != 0.0f || back[n - 1] != 1.0f) {
    std::fprintf(stderr, "runtime_work: wrong bytes back (%g, %g)\n", back[0], back[n - 1]);
    return 3;
  }
  check(cudaFree(data), "cudaFree");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  std::printf("expect {\"kernels\": {\"scale\": %d, \"offset\": %d}, \"memcpy\": %d, \"memset\": %d, "
              "\"calls\": {\"cudaLaunchKernel\": %d, \"cudaMemcpyAsync\": %d, \"cudaMemsetAsync\": %d, "
              "\"cudaStreamSynchronize\": %d}}\n",
              steps, steps, 2 * steps, steps, 2 * steps, 2 * steps, steps, steps);
  return 0;
}
