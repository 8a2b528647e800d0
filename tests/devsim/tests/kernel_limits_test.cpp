// Launch limits of kernels whose image says nothing about them (fake kernels, like a PTX-only
// module): the fallback figures never fail a valid launch, and DEVSIM_KERNEL_REGS still decides
// the registers, with the codes real CUDA gives for each limit.
#include <catch2/catch.hpp>

#include <cuda.h>

#include "model_test_support.h"

using namespace devsim_test;

namespace {

void plain_stub() {}
void regs128_stub() {}  // DEVSIM_KERNEL_REGS=k_regs128=128 in devsim.model

const void* k_plain = fake_kernel(reinterpret_cast<const void*>(&plain_stub), "_Z7k_plainv");
const void* k_regs128 = fake_kernel(reinterpret_cast<const void*>(&regs128_stub), "_Z9k_regs128v");

cudaError_t launch(const void* k, unsigned threads, size_t dynamic_shared = 0) {
  cudaError_t err = cudaLaunchKernel(k, 1, threads, nullptr, dynamic_shared, nullptr);
  cudaGetLastError();
  return err;
}

}  // namespace

TEST_CASE("a kernel without resources in its image gets 32 registers and launches 1024 threads", "[devsim][limits]") {
  cudaFuncAttributes a{};
  REQUIRE(cudaFuncGetAttributes(&a, k_plain) == cudaSuccess);
  CHECK(a.numRegs == 32);
  CHECK(a.sharedSizeBytes == 0);
  CHECK(a.maxThreadsPerBlock == 1024);
  CHECK(a.maxDynamicSharedSizeBytes == 48 * 1024);
  CHECK(launch(k_plain, 1024) == cudaSuccess);
  CHECK(launch(k_plain, 1025) == cudaErrorInvalidConfiguration);
  CHECK(launch(k_plain, 64, 48 * 1024 + 1) == cudaErrorInvalidValue);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
}

TEST_CASE("registers beyond a block's register file fail the launch with 701", "[devsim][limits]") {
  cudaFuncAttributes a{};
  REQUIRE(cudaFuncGetAttributes(&a, k_regs128) == cudaSuccess);
  CHECK(a.numRegs == 128);
  CHECK(a.maxThreadsPerBlock == 512);  // 65536 / (128 x 32) warps
  CHECK(launch(k_regs128, 1024) == cudaErrorLaunchOutOfResources);
  CHECK(cudaPeekAtLastError() == cudaSuccess);  // not sticky, already read
  CHECK(launch(k_regs128, 512) == cudaSuccess);
  int blocks = -1;
  REQUIRE(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k_regs128, 512, 0) == cudaSuccess);
  CHECK(blocks == 1);
  REQUIRE(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k_regs128, 1024, 0) == cudaSuccess);
  CHECK(blocks == 0);  // such a block cannot launch at all
  REQUIRE(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k_plain, 256, 0) == cudaSuccess);
  CHECK(blocks == 4);  // 32 registers: 8 warps x 1024 registers per block, thread-limited to 4

  cudaFunction_t f = nullptr;
  REQUIRE(cudaGetFuncBySymbol(&f, k_regs128) == cudaSuccess);
  auto cu = reinterpret_cast<CUfunction>(f);
  int max_threads = 0;
  REQUIRE(cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, cu) == CUDA_SUCCESS);
  CHECK(max_threads == 512);
  CHECK(cuLaunchKernel(cu, 1, 1, 1, 1024, 1, 1, 0, nullptr, nullptr, nullptr) == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
  CHECK(cuLaunchKernel(cu, 1, 1, 1, 2048, 1, 1, 0, nullptr, nullptr, nullptr) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
}
