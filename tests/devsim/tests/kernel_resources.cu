// Kernels of several shapes whose resources devsim must read from the cubin nvcc embeds, as
// cudaFuncGetAttributes and cuFuncGetAttribute report them on a GPU. Prints one line per
// kernel and API for kernel_resources_check.py, which compares them with what ptxas said when
// it compiled the same file (`-res-usage`), then checks the launch limits that follow.
//
//   kernel_resources <cubin of this file>
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

// Few registers, and a bound that promises 1024-thread blocks.
__global__ void __launch_bounds__(1024) scale_bounded(float* a) { a[threadIdx.x] *= 2.f; }

#include "../../workloads/register_heavy_kernel.cuh"

// A tiled kernel as in matrixMul: static shared memory from the template size.
template <int Tile>
__global__ void tiled_multiply(const float* a, const float* b, float* c, int n) {
  __shared__ float as[Tile][Tile];
  __shared__ float bs[Tile][Tile];
  int row = blockIdx.y * Tile + threadIdx.y, col = blockIdx.x * Tile + threadIdx.x;
  float sum = 0;
  for (int t = 0; t < n / Tile; ++t) {
    as[threadIdx.y][threadIdx.x] = a[row * n + t * Tile + threadIdx.x];
    bs[threadIdx.y][threadIdx.x] = b[(t * Tile + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < Tile; ++k) sum += as[threadIdx.y][k] * bs[k][threadIdx.x];
    __syncthreads();
  }
  c[row * n + col] = sum;
}

// A bound below the hardware limit: 512-thread blocks fail although registers would allow them.
__global__ void __launch_bounds__(256) bounded_256(float* a) { a[blockIdx.x * 256 + threadIdx.x] += 1.f; }

// Dynamic shared memory only.
__global__ void dynamic_shared(float* a) {
  extern __shared__ float buffer[];
  buffer[threadIdx.x] = a[threadIdx.x];
  __syncthreads();
  a[threadIdx.x] = buffer[blockDim.x - 1 - threadIdx.x];
}

namespace {

int failures = 0;

void expect(const char* what, int got, int want) {
  std::printf("%s %s: %d (expected %d)\n", got == want ? "ok" : "FAIL", what, got, want);
  if (got != want) ++failures;
}

void print_runtime(const void* kernel) {
  const char* name = nullptr;
  cudaFuncAttributes a{};
  if (cudaFuncGetName(&name, kernel) != cudaSuccess || cudaFuncGetAttributes(&a, kernel) != cudaSuccess) {
    std::printf("FAIL attributes\n");
    ++failures;
    return;
  }
  std::printf("runtime %s regs=%d shared=%zu local=%zu max_threads=%d max_dynamic_shared=%d\n", name, a.numRegs,
              a.sharedSizeBytes, a.localSizeBytes, a.maxThreadsPerBlock, a.maxDynamicSharedSizeBytes);
}

int attribute(CUfunction f, CUfunction_attribute which) {
  int value = -1;
  cuFuncGetAttribute(&value, which, f);
  return value;
}

// The same cubin loaded through the driver, as a JIT library would load it.
void print_driver(const char* cubin_path, const char* const* names, int count) {
  std::ifstream file(cubin_path, std::ios::binary);
  std::string image((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  CUmodule module = nullptr;
  if (image.empty() || cuModuleLoadData(&module, image.data()) != CUDA_SUCCESS) {
    std::printf("FAIL cuModuleLoadData %s\n", cubin_path);
    ++failures;
    return;
  }
  for (int i = 0; i < count; ++i) {
    CUfunction f = nullptr;
    if (cuModuleGetFunction(&f, module, names[i]) != CUDA_SUCCESS) continue;
    std::printf("driver %s regs=%d shared=%d local=%d max_threads=%d\n", names[i],
                attribute(f, CU_FUNC_ATTRIBUTE_NUM_REGS), attribute(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
                attribute(f, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES), attribute(f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
  }
}

int launch_error() {
  cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? int(cudaDeviceSynchronize()) : int(err);
}

void check_limits(float* d) {
  scale_bounded<<<1, 1024>>>(d);
  expect("1024 threads of scale_bounded", launch_error(), cudaSuccess);
  register_heavy<<<1, 1024>>>(d, 2);
  expect("1024 threads of register_heavy", launch_error(), cudaErrorLaunchOutOfResources);
  bounded_256<<<1, 512>>>(d);
  expect("512 threads of bounded_256", launch_error(), cudaErrorLaunchOutOfResources);
  bounded_256<<<1, 256>>>(d);
  expect("256 threads of bounded_256", launch_error(), cudaSuccess);
  scale_bounded<<<1, 1025>>>(d);
  expect("1025 threads", launch_error(), cudaErrorInvalidConfiguration);
  dynamic_shared<<<1, 256, 48 * 1024 + 4>>>(d);
  expect("48 KiB + 4 dynamic shared without opt-in", launch_error(), cudaErrorInvalidValue);
  cudaFuncSetAttribute(dynamic_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, 60 * 1024);
  dynamic_shared<<<1, 256, 60 * 1024>>>(d);
  expect("60 KiB dynamic shared after opt-in", launch_error(), cudaSuccess);
  expect("opt-in beyond the device's 64 KiB",
         int(cudaFuncSetAttribute(dynamic_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, 65 * 1024)),
         cudaErrorInvalidValue);
}

}  // namespace

int main(int argc, char** argv) {
  float* d = nullptr;
  if (cudaMalloc(&d, 1 << 22) != cudaSuccess) return 1;
  const void* kernels[] = {reinterpret_cast<const void*>(scale_bounded), reinterpret_cast<const void*>(register_heavy),
                           reinterpret_cast<const void*>(tiled_multiply<16>), reinterpret_cast<const void*>(tiled_multiply<32>),
                           reinterpret_cast<const void*>(bounded_256), reinterpret_cast<const void*>(dynamic_shared)};
  for (const void* k : kernels) print_runtime(k);
  const char* names[] = {"_Z13scale_boundedPf", "_Z14register_heavyPfi", "_Z14tiled_multiplyILi16EEvPKfS1_Pfi",
                         "_Z14tiled_multiplyILi32EEvPKfS1_Pfi", "_Z11bounded_256Pf", "_Z14dynamic_sharedPf"};
  if (argc > 1) print_driver(argv[1], names, 6);
  check_limits(d);
  cudaFree(d);
  std::printf(failures ? "kernel_resources: FAILED\n" : "kernel_resources: PASSED\n");
  return failures ? 1 : 0;
}
