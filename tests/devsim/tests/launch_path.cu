// An unmodified nvcc program (built with -cudart shared) exercising the CUDA 13 launch path:
// <<<>>> with plain, templated and namespaced kernels, __device__ and __constant__ symbols,
// a per-thread-stream launch, a stream, events. Prints PASS lines CTest checks.
#include <cstdio>
#include <cstring>

__device__ float g_table[8];
__constant__ int g_scale;

__global__ void plain_kernel(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = g_table[i % 8] * g_scale;
}

namespace model {
template <typename T>
__global__ void scale(T* data, T factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}
}  // namespace model

#define CHECK(call)                                                                     \
  do {                                                                                  \
    cudaError_t err_ = (call);                                                          \
    if (err_ != cudaSuccess) {                                                          \
      std::printf("FAIL %s: %s (%s)\n", #call, cudaGetErrorName(err_), cudaGetErrorString(err_)); \
      return 1;                                                                         \
    }                                                                                   \
  } while (0)

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s\n", prop.name);

  float table[8] = {1, 2, 3, 4, 5, 6, 7, 8}, back[8] = {};
  int scale = 3, scale_back = 0;
  CHECK(cudaMemcpyToSymbol(g_table, table, sizeof table));
  CHECK(cudaMemcpyToSymbol(g_scale, &scale, sizeof scale));
  CHECK(cudaMemcpyFromSymbol(back, g_table, sizeof back));
  CHECK(cudaMemcpyFromSymbol(&scale_back, g_scale, sizeof scale_back));
  if (std::memcmp(table, back, sizeof table) != 0 || scale_back != 3) {
    std::printf("FAIL symbol round trip\n");
    return 1;
  }
  std::printf("PASS symbols\n");

  float* d = nullptr;
  CHECK(cudaMalloc(&d, 1024 * sizeof(float)));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start, s));
  plain_kernel<<<4, 256, 0, s>>>(d, 1024);
  CHECK(cudaGetLastError());
  model::scale<float><<<4, 256, 0, s>>>(d, 2.0f, 1024);
  model::scale<double><<<1, 32>>>(reinterpret_cast<double*>(d), 2.0, 32);
  CHECK(cudaGetLastError());
  model::scale<int><<<1, 32, 0, cudaStreamPerThread>>>(reinterpret_cast<int*>(d), 2, 32);
  CHECK(cudaEventRecord(stop, s));
  CHECK(cudaEventSynchronize(stop));
  CHECK(cudaDeviceSynchronize());
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  std::printf("PASS launches (%.3f ms between events)\n", ms);

  plain_kernel<<<1, 4096>>>(d, 1);  // too many threads per block
  cudaError_t bad = cudaGetLastError();
  std::printf("%s bad launch -> %s\n", bad == cudaErrorInvalidConfiguration ? "PASS" : "FAIL", cudaGetErrorName(bad));

  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, plain_kernel));
  int blocks = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, plain_kernel, 256, 0));
  int min_grid = 0, best_block = 0;
  CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &best_block, plain_kernel, 0, 0));
  bool sane = attr.numRegs > 0 && blocks > 0 && best_block >= 32 && best_block <= 1024 && min_grid > 0;
  std::printf("%s attributes (regs %d, blocks/SM %d, best block %d, min grid %d)\n", sane ? "PASS" : "FAIL",
              attr.numRegs, blocks, best_block, min_grid);
  CHECK(cudaFree(d));
  std::printf("Result = PASS\n");
  return 0;
}
