// Of the kind of CUDA's matrixMul sample, about the limits a launch meets on real hardware: a
// tiled matrix multiply in 32 x 32 = 1024-thread blocks, compiled with __launch_bounds__(1024)
// so its registers fit (registers x 1024 <= 65536), must launch; a kernel the compiler gives
// more than 64 registers must be refused for 1024-thread blocks with
// cudaErrorLaunchOutOfResources, as a GPU refuses it, and then run at the block size
// cudaFuncGetAttributes allows. Prints the registers cudaFuncGetAttributes reports.
//
// The device may be simulated (kernels do not run there), so the program checks what every
// device gives back: launch results, attributes, event times and the bytes copied back.
#include <cstdio>
#include <cstring>
#include <vector>

#include "workload_check.h"

constexpr int kTile = 32;
constexpr int kN = 512;  // matrices are kN x kN

__global__ void __launch_bounds__(kTile * kTile) matrix_mul_tiled(const float* a, const float* b, float* c, int n) {
  __shared__ float as[kTile][kTile];
  __shared__ float bs[kTile][kTile];
  int row = blockIdx.y * kTile + threadIdx.y, col = blockIdx.x * kTile + threadIdx.x;
  float sum = 0;
  for (int t = 0; t < n / kTile; ++t) {
    as[threadIdx.y][threadIdx.x] = a[row * n + t * kTile + threadIdx.x];
    bs[threadIdx.y][threadIdx.x] = b[(t * kTile + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < kTile; ++k) sum += as[threadIdx.y][k] * bs[k][threadIdx.x];
    __syncthreads();
  }
  c[row * n + col] = sum;
}

#include "register_heavy_kernel.cuh"

static bool describe(const char* what, const void* kernel, cudaFuncAttributes* attr) {
  CHECK(cudaFuncGetAttributes(attr, kernel));
  std::printf("%s: %d registers, %zu bytes static shared, %zu bytes local, max %d threads per block\n", what,
              attr->numRegs, attr->sharedSizeBytes, attr->localSizeBytes, attr->maxThreadsPerBlock);
  return true;
}

static bool multiply(const std::vector<float>& host_a) {
  const size_t bytes = size_t(kN) * kN * sizeof(float);
  float *a = nullptr, *b = nullptr, *c = nullptr;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  CHECK(cudaMalloc(&c, bytes));
  CHECK(cudaMemcpy(a, host_a.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b, host_a.data(), bytes, cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start));
  matrix_mul_tiled<<<dim3(kN / kTile, kN / kTile), dim3(kTile, kTile)>>>(a, b, c, kN);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  std::printf("matrix_mul_tiled: %d x %d blocks of %d threads launched, %.3f ms\n", kN / kTile, kN / kTile,
              kTile * kTile, ms);
  std::vector<float> back(size_t(kN) * kN);
  CHECK(cudaMemcpy(back.data(), a, bytes, cudaMemcpyDeviceToHost));
  if (std::memcmp(back.data(), host_a.data(), bytes) != 0) {
    std::printf("FAIL the input matrix did not come back unchanged\n");
    return false;
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  return true;
}

static bool oversubscribe(const cudaFuncAttributes& heavy) {
  float* data = nullptr;
  CHECK(cudaMalloc(&data, 64 * 1024 * sizeof(float)));
  register_heavy<<<4, 1024>>>(data, 4);
  const cudaError_t refused = cudaGetLastError();
  std::printf("register_heavy in blocks of 1024 threads: %s\n", cudaGetErrorName(refused));
  if (refused != cudaErrorLaunchOutOfResources) {
    std::printf("FAIL expected cudaErrorLaunchOutOfResources\n");
    return false;
  }
  register_heavy<<<4, heavy.maxThreadsPerBlock>>>(data, 4);  // what the attributes allow
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::printf("register_heavy in blocks of %d threads: launched\n", heavy.maxThreadsPerBlock);
  CHECK(cudaFree(data));
  return true;
}

int main() {
  cudaFuncAttributes tiled{}, heavy{};
  if (!describe("matrix_mul_tiled", reinterpret_cast<const void*>(matrix_mul_tiled), &tiled)) return 1;
  if (!describe("register_heavy", reinterpret_cast<const void*>(register_heavy), &heavy)) return 1;
  if (tiled.numRegs * kTile * kTile > 65536 || tiled.maxThreadsPerBlock != kTile * kTile) {
    std::printf("FAIL matrix_mul_tiled does not fit 1024 threads\n");
    return 1;
  }
  if (heavy.numRegs <= 64 || heavy.maxThreadsPerBlock >= 1024) {
    std::printf("FAIL register_heavy was expected to need more than 64 registers\n");
    return 1;
  }
  std::vector<float> host_a(size_t(kN) * kN);
  for (size_t i = 0; i < host_a.size(); ++i) host_a[i] = float(i % 17) * 0.25f;
  if (!multiply(host_a) || !oversubscribe(heavy)) return 1;
  std::printf("register_limits: PASSED\n");
  return 0;
}
