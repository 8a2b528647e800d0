// preload_workload: a CUDA program that knows exactly what it asked the device to do, run
// under LD_PRELOAD=libprofagent.so by tests/preload. It prints one line
//   expect {"kernels":{...},"memcpy":N,"memset":N,"driver_kernels":N,"ranges":{...}}
// which the checker compares with the written trace. Every runtime call's result is printed
// as it happens ("<call>: <error name>") only when it fails, so a run on a machine without a
// driver prints the same lines with and without the agent.
//
//   preload_workload [iterations=3]
// With -DPRELOAD_AS_LIBRARY, main() becomes preload_workload_main() of a shared library that
// programs/dlopen_local.cpp loads with RTLD_LOCAL. Built as programs: with libsimblas (driver-level cuLaunchKernel inside a profagent range), and
// with -DPRELOAD_NO_SIMBLAS for the run against the real libcudart without a driver.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#ifndef PRELOAD_NO_SIMBLAS
#include "simblas.h"
#endif

#ifdef PRELOAD_EARLY_LIBRARY
extern "C" int early_cuda_library_loaded();  // keeps the library linked (--as-needed)
#endif

extern "C" {
void profagent_range_push(const char* name) __attribute__((weak));
void profagent_range_pop(void) __attribute__((weak));
}

__global__ void scale_kernel(float* data, float factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

__global__ void add_kernel(const float* a, float* b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] += a[i];
}

namespace {

int g_failures = 0;

void check(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  ++g_failures;
  std::printf("%s: %s\n", call, cudaGetErrorName(status));
}
#define CHECK(call) check((call), #call)

struct Range {
  explicit Range(const char* name) { if (profagent_range_push) profagent_range_push(name); }
  ~Range() { if (profagent_range_pop) profagent_range_pop(); }
};

constexpr int kN = 1 << 16;
constexpr int kThreads = 256;
constexpr int kBlocks = (kN + kThreads - 1) / kThreads;
constexpr size_t kBytes = kN * sizeof(float);

}  // namespace

#ifdef PRELOAD_AS_LIBRARY
extern "C" __attribute__((visibility("default"))) int preload_workload_main(int argc, char** argv) {
#else
int main(int argc, char** argv) {
#endif
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 3;
#ifdef PRELOAD_EARLY_LIBRARY
  if (!early_cuda_library_loaded()) return 2;
#endif
  std::vector<float> host(kN, 1.0f), back(kN, 0.0f);
  float *a = nullptr, *b = nullptr, *pinned = nullptr;
  cudaStream_t s1 = nullptr, s2 = nullptr;
  cudaEvent_t done = nullptr;
  CHECK(cudaMalloc(reinterpret_cast<void**>(&a), kBytes));
  CHECK(cudaMalloc(reinterpret_cast<void**>(&b), kBytes));
  CHECK(cudaMallocHost(reinterpret_cast<void**>(&pinned), kBytes));
  CHECK(cudaStreamCreate(&s1));
  CHECK(cudaStreamCreate(&s2));
  CHECK(cudaEventCreate(&done));
  CHECK(cudaMemcpy(a, host.data(), kBytes, cudaMemcpyHostToDevice));          // memcpy 1
  CHECK(cudaMemset(b, 0, kBytes));                                            // memset 1
  int scale = 0, add = 0, driver = 0, copies = 1, sets = 1;
  for (int i = 0; i < iterations; ++i) {
    Range step("iteration");
    int device = -1;  // frameworks ask this thousands of times a step; it is left out of traces,
    CHECK(cudaGetDevice(&device));  // and so are the driver calls the runtime makes inside it
    scale_kernel<<<kBlocks, kThreads, 0, s1>>>(a, 1.5f, kN), ++scale;
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(done, s1));
    CHECK(cudaStreamWaitEvent(s2, done, 0));
    add_kernel<<<kBlocks, kThreads, 0, s2>>>(a, b, kN), ++add;
    CHECK(cudaGetLastError());
    CHECK(cudaMemsetAsync(a, 0, kBytes / 2, s1)), ++sets;
    CHECK(cudaMemcpyAsync(pinned != nullptr ? pinned : back.data(), b, kBytes, cudaMemcpyDeviceToHost, s2)), ++copies;
    CHECK(cudaStreamSynchronize(s2));  // the copy just issued on s2 must be finished by its end
#ifndef PRELOAD_NO_SIMBLAS
    {
      Range blas("driver_region");  // kernels launched by cuLaunchKernel get this External id
      if (simblasSaxpy(kN, 2.0f, a, b, s1) == SIMBLAS_STATUS_SUCCESS) ++driver;
      if (simblasSaxpy(kN, 0.5f, b, a, s1) == SIMBLAS_STATUS_SUCCESS) ++driver;
    }
#endif
    CHECK(cudaDeviceSynchronize());
  }
  CHECK(cudaMemcpy(back.data(), b, kBytes, cudaMemcpyDeviceToHost)), ++copies;
  CHECK(cudaEventSynchronize(done));
  CHECK(cudaEventDestroy(done));
  CHECK(cudaStreamDestroy(s1));
  CHECK(cudaStreamDestroy(s2));
  CHECK(cudaFreeHost(pinned));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
#ifdef PRELOAD_NO_SIMBLAS
  const int driver_ranges = 0;
#else
  const int driver_ranges = iterations;
#endif
  std::printf("expect {\"kernels\":{\"scale_kernel\":%d,\"add_kernel\":%d},\"memcpy\":%d,\"memset\":%d,"
              "\"driver_kernels\":%d,\"ranges\":{\"iteration\":%d,\"driver_region\":%d},\"failures\":%d}\n",
              scale, add, copies, sets, driver, iterations, driver_ranges, g_failures);
  return g_failures == 0 ? 0 : 3;
}
