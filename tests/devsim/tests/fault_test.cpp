// Fault injection (DEVSIM_FAIL) and sticky errors. DEVSIM_FAIL counts the calls of the
// process, so each case runs in a process of its own, with its own DEVSIM_FAIL (see
// CMakeLists.txt): [nth_call] under "cudaMalloc=2@2,cuLaunchKernel=1", [sticky] under
// "cudaLaunchKernel=719@3".
#include <catch2/catch.hpp>

#include <cuda.h>

#include "model_test_support.h"

using namespace devsim_test;

namespace {
void fault_stub() {}
const void* k_fault = fake_kernel(reinterpret_cast<const void*>(&fault_stub), "_Z7k_faultv");
}  // namespace

TEST_CASE("DEVSIM_FAIL makes a named API fail on its n-th call", "[fault][nth_call]") {
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  CHECK(cudaMalloc(&a, 64) == cudaSuccess);
  CHECK(cudaMalloc(&b, 64) == cudaErrorMemoryAllocation);  // the 2nd call only
  CHECK(cudaGetLastError() == cudaErrorMemoryAllocation);
  CHECK(cudaMalloc(&c, 64) == cudaSuccess);
  auto mallocs = tracer().calls("cudaMalloc");
  REQUIRE(mallocs.size() == 3);
  CHECK(mallocs[1].result == cudaErrorMemoryAllocation);

  cudaFunction_t fn;
  REQUIRE(cudaGetFuncBySymbol(&fn, k_fault) == cudaSuccess);
  CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(fn), 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr) ==
        CUDA_ERROR_INVALID_VALUE);  // every call
  cudaFree(a), cudaFree(c);
}

TEST_CASE("an injected sticky error poisons every later call until reset", "[fault][sticky]") {
  tracer().clear();
  CHECK(cudaLaunchKernel(k_fault, 1, 1, nullptr, 0, nullptr) == cudaSuccess);
  CHECK(cudaLaunchKernel(k_fault, 1, 1, nullptr, 0, nullptr) == cudaSuccess);
  CHECK(cudaLaunchKernel(k_fault, 1, 1, nullptr, 0, nullptr) == cudaErrorLaunchFailure);  // 3rd call
  void* p = nullptr;
  CHECK(cudaMalloc(&p, 64) == cudaErrorLaunchFailure);
  CHECK(cudaGetLastError() == cudaErrorLaunchFailure);
  CHECK(cudaGetLastError() == cudaErrorLaunchFailure);  // sticky: not cleared
  REQUIRE(cudaDeviceReset() == cudaSuccess);          // waits for the device, clears the error
  CHECK(tracer().kernels("_Z7k_faultv").size() == 2);  // the failed launch enqueued nothing
  // Module variables survive the reset, as the module stays registered.
  static int symbol_shadow = 0;
  static void** module = __cudaRegisterFatBinary(nullptr);
  __cudaRegisterVar(module, reinterpret_cast<char*>(&symbol_shadow), nullptr, "symbol_shadow", 0, sizeof(int), 0, 0);
  REQUIRE(cudaDeviceReset() == cudaSuccess);
  int in = 42, out = 0;
  CHECK(cudaMemcpyToSymbol(&symbol_shadow, &in, sizeof in) == cudaSuccess);
  CHECK(cudaMemcpyFromSymbol(&out, &symbol_shadow, sizeof out) == cudaSuccess);
  CHECK(out == 42);
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(cudaMalloc(&p, 64) == cudaSuccess);
  cudaFree(p);
}

// This process runs with DEVSIM_DEVICE_COUNT=2.
TEST_CASE("each device has its own legacy stream, context and memory", "[multidevice]") {
  int count = 0;
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  REQUIRE(count == 2);
  tracer().clear();
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  void* dev1 = nullptr;
  REQUIRE(cudaMalloc(&dev1, 1 << 20) == cudaSuccess);
  size_t free1 = 0, total = 0;
  cudaMemGetInfo(&free1, &total);
  REQUIRE(cudaLaunchKernel(k_fault, 1, 1, nullptr, 0, nullptr) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  size_t free0 = 0;
  cudaMemGetInfo(&free0, &total);
  CHECK(free0 - free1 == (1u << 20));  // device 1's allocation is not device 0's
  auto ks = tracer().kernels("_Z7k_faultv");
  REQUIRE(ks.size() == 1);
  CHECK(ks[0].device_id == 1);
  CHECK(ks[0].context_id == 2);
  CHECK(ks[0].stream_id == 7);
  CHECK(cudaSetDevice(2) == cudaErrorInvalidDevice);
  cudaGetLastError();
  cudaSetDevice(1);
  cudaFree(dev1);
  cudaSetDevice(0);
}
