// One runtime's side of a test program: what it reports about the device,
// then copies and launches through it. Built plain C++ (no nvcc) against the CUDA 13 headers;
// CUDA_SIDE_MAJOR says which runtime the including object is linked to (12: devsim's
// libcudart.so.12, so its references carry version libcudart.so.12; 13: libcudart.so.13).
//
// Everything prints "[cudaNN] key=value ..." lines, which the cases compare with and without the
// agent and parse for the values the trace must show.
#pragma once

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <vector>

#if CUDA_SIDE_MAJOR == 12
#include "cudart/cuda12_device_prop.h"
// What `cudaGetDeviceProperties` means in CUDA 12 headers (a #define to this name).
extern "C" cudaError_t cudaGetDeviceProperties_v2(devsim_cuda12::DeviceProp* prop, int device);
#endif

extern "C" {
void** __cudaRegisterFatBinary(void* fat_cubin);
void __cudaRegisterFatBinaryEnd(void** handle);
void __cudaRegisterFunction(void** handle, const char* host_fun, char* device_fun, const char* device_name,
                            int thread_limit, uint3* tid, uint3* bid, dim3* block, dim3* grid, int* wsize);
}

namespace {  // internal linkage: the plugin and the program each keep their own copy

#if CUDA_SIDE_MAJOR == 12
constexpr const char* kSide = "[cuda12]";
constexpr const char* kKernel = "cuda12_kernel";
#else
constexpr const char* kSide = "[cuda13]";
constexpr const char* kKernel = "cuda13_kernel";
#endif

// Hooked calls made by run_side(), by API name (and launches by kernel name).
struct Counts {
  long malloc_calls = 0, memcpy_calls = 0, launches = 0, free_calls = 0, syncs = 0;
};

void print_versions() {
  int runtime = 0, driver = 0, count = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  cudaGetDeviceCount(&count);
  std::printf("%s runtime=%d driver=%d devices=%d\n", kSide, runtime, driver, count);
}

int attribute(cudaDeviceAttr attr, int device) {
  int value = -1;
  cudaDeviceGetAttribute(&value, attr, device);
  return value;
}

// The struct of this side's major, read the way a program of that major reads it.
void print_properties(int device) {
#if CUDA_SIDE_MAJOR == 12
  devsim_cuda12::DeviceProp p{};
  cudaError_t err = cudaGetDeviceProperties_v2(&p, device);
  const int clock_khz = p.clockRate, memory_clock_khz = p.memoryClockRate;
#else
  cudaDeviceProp p{};
  cudaError_t err = cudaGetDeviceProperties(&p, device);
  const int clock_khz = attribute(cudaDevAttrClockRate, device);  // no longer in the CUDA 13 struct
  const int memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, device);
#endif
  std::printf("%s device=%d status=%d name=\"%s\" totalGlobalMem=%zu multiProcessorCount=%d clockRate=%d "
              "memoryClockRate=%d major=%d minor=%d warpSize=%d maxThreadsPerBlock=%d "
              "maxThreadsPerMultiProcessor=%d regsPerBlock=%d regsPerMultiprocessor=%d "
              "sharedMemPerBlock=%zu sharedMemPerMultiprocessor=%zu sharedMemPerBlockOptin=%zu\n",
              kSide, device, int(err), p.name, p.totalGlobalMem, p.multiProcessorCount, clock_khz,
              memory_clock_khz, p.major, p.minor, p.warpSize, p.maxThreadsPerBlock,
              p.maxThreadsPerMultiProcessor, p.regsPerBlock, p.regsPerMultiprocessor, p.sharedMemPerBlock,
              p.sharedMemPerMultiprocessor, p.sharedMemPerBlockOptin);
  std::printf("%s attribute multiProcessorCount=%d clockRate=%d\n", kSide,
              attribute(cudaDevAttrMultiProcessorCount, device), attribute(cudaDevAttrClockRate, device));
}

char g_kernel_stub;  // the host-side handle nvcc would generate for the kernel

void register_kernel() {
  void** module = __cudaRegisterFatBinary(nullptr);
  __cudaRegisterFunction(module, &g_kernel_stub, const_cast<char*>(kKernel), kKernel, -1, nullptr, nullptr,
                         nullptr, nullptr, nullptr);
  __cudaRegisterFatBinaryEnd(module);
}

// Per round: allocate, copy in, two launches, copy out, free; then one synchronize. The bytes
// come back through the device, so a wrong forwarding that lost them would show.
void run_rounds(int rounds, Counts& counts) {
  std::vector<unsigned char> in(4096), out(4096);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 7 + rounds);
  bool same = true;
  for (int r = 0; r < rounds; ++r) {
    void* device = nullptr;
    cudaMalloc(&device, in.size());
    cudaMemcpy(device, in.data(), in.size(), cudaMemcpyHostToDevice);
    for (int k = 0; k < 2; ++k) cudaLaunchKernel(&g_kernel_stub, dim3(4), dim3(128), nullptr, 0, nullptr);
    cudaMemcpy(out.data(), device, out.size(), cudaMemcpyDeviceToHost);
    cudaFree(device);
    same = same && std::memcmp(in.data(), out.data(), in.size()) == 0;
  }
  cudaDeviceSynchronize();
  counts.malloc_calls += rounds, counts.memcpy_calls += 2L * rounds, counts.launches += 2L * rounds;
  counts.free_calls += rounds, counts.syncs += 1;
  std::printf("%s rounds=%d bytes_back=%s\n", kSide, rounds, same ? "equal" : "DIFFERENT");
}

// A failing call, then this runtime's own last error: each runtime keeps its own, so a call
// forwarded to the other runtime leaves this one saying cudaSuccess.
void own_last_error(Counts& counts) {
  void* huge = nullptr;
  cudaError_t err = cudaMalloc(&huge, size_t(1) << 62);
  counts.malloc_calls += 1;
  cudaError_t last = cudaGetLastError();
  std::printf("%s failed_malloc=%s last_error=%s\n", kSide, cudaGetErrorName(err), cudaGetErrorName(last));
}

Counts run_side(int rounds) {
  Counts counts;
  print_versions();
  print_properties(0);
  register_kernel();
  run_rounds(rounds, counts);
  own_last_error(counts);
  std::fflush(stdout);
  return counts;
}

// Loads the other major's half (cuda_plugin.cpp) with dlopen(`scope`) and runs it: `theirs`
// gets its counts. False (said on stderr) when it cannot be loaded.
[[maybe_unused]] bool run_plugin(const char* path, int scope, int rounds, Counts& theirs) {
  void* plugin = dlopen(path, RTLD_NOW | scope);
  auto* run = plugin ? reinterpret_cast<void (*)(int, long*)>(dlsym(plugin, "cuda_plugin_run")) : nullptr;
  if (run == nullptr) {
    std::fprintf(stderr, "cannot load the plugin: %s\n", dlerror());
    return false;
  }
  long counts[5] = {};
  run(rounds, counts);
  theirs.malloc_calls = counts[0], theirs.memcpy_calls = counts[1], theirs.launches = counts[2];
  theirs.free_calls = counts[3], theirs.syncs = counts[4];
  return true;
}

[[maybe_unused]] Counts operator+(Counts a, const Counts& b) {
  a.malloc_calls += b.malloc_calls, a.memcpy_calls += b.memcpy_calls, a.launches += b.launches;
  a.free_calls += b.free_calls, a.syncs += b.syncs;
  return a;
}

// The checker's "expect" line: hooked calls by API name, kernels by name, over both sides.
[[maybe_unused]] void print_expect(const Counts& all, long cuda12_launches, long cuda13_launches) {
  std::printf("expect {\"cudaMalloc\": %ld, \"cudaMemcpy\": %ld, \"cudaLaunchKernel\": %ld, \"cudaFree\": %ld, "
              "\"cudaDeviceSynchronize\": %ld, \"cuda12_kernel\": %ld, \"cuda13_kernel\": %ld}\n",
              all.malloc_calls, all.memcpy_calls, all.launches, all.free_calls, all.syncs, cuda12_launches,
              cuda13_launches);
}

}  // namespace
