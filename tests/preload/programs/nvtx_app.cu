// nvtx_app: a program that annotates itself with the nvtx3 headers only (no profagent API),
// as a user of Nsight Systems would, and two shared libraries with their own NVTX copies.
//
//   nvtx_app [iterations=3]
//
// Per iteration: a default-domain range "iteration" (pushA) holding a kernel; inside it a
// range of domain "app" named by a registered string, with category 7, a colour and an
// integer payload (nvtxDomainRangePushEx), holding a kernel and a copy; a mark; each library's
// range with its kernel. Once: a wide-character range, a start/end range started here and
// ended by another thread (which launches a kernel and names itself), named threads and a
// named stream. The counts it made are printed as `expect {...}` for the checker.
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <thread>

extern "C" int nvtx_library_a(float* data, int n, cudaStream_t stream);
extern "C" int nvtx_library_b(float* data, int n, cudaStream_t stream);

__global__ void app_kernel(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= 2.0f;
}

namespace {

constexpr int kN = 1 << 12;
int g_failures = 0;

void check(int status, const char* what) {
  if (status == 0) return;
  ++g_failures;
  std::printf("%s failed: %d\n", what, status);
}

uint32_t tid() { return uint32_t(syscall(SYS_gettid)); }

void launch(float* data, cudaStream_t stream) {
  app_kernel<<<(kN + 255) / 256, 256, 0, stream>>>(data, kN);
  check(cudaGetLastError(), "app_kernel");
}

nvtxEventAttributes_t app_attributes(nvtxStringHandle_t message, uint64_t payload) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.category = 7;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = 0xFF00FF00u;
  a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  a.payload.ullValue = payload;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = message;
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 3;
  nvtxNameOsThreadA(tid(), "nvtx-main");
  nvtxDomainHandle_t domain = nvtxDomainCreateA("app");
  nvtxStringHandle_t registered = nvtxDomainRegisterStringA(domain, "registered_step");
  nvtxDomainNameCategoryA(domain, 7, "compute");
  float* data = nullptr;
  float host[64] = {};
  check(cudaMalloc(&data, kN * sizeof(float)), "cudaMalloc");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  nvtxNameCudaStreamA(stream, "app stream");

  for (int i = 0; i < iterations; ++i) {
    nvtxRangePushA("iteration");
    launch(data, stream);
    const nvtxEventAttributes_t a = app_attributes(registered, uint64_t(i) + 100);
    nvtxDomainRangePushEx(domain, &a);
    launch(data, stream);
    check(cudaMemcpyAsync(host, data, sizeof host, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
    nvtxDomainRangePop(domain);
    nvtxMarkA("iteration_mark");
    check(nvtx_library_a(data, kN, stream), "nvtx_library_a");
    check(nvtx_library_b(data, kN, stream), "nvtx_library_b");
    nvtxRangePop();
  }
  nvtxRangePushW(L"wide_range");
  nvtxRangePop();

  const nvtxRangeId_t crossing = nvtxRangeStartA("cross_thread");
  std::thread worker([&] {
    nvtxNameOsThreadA(tid(), "nvtx-worker");
    launch(data, stream);
    nvtxRangeEnd(crossing);
  });
  worker.join();
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  check(cudaFree(data), "cudaFree");
  std::printf("expect {\"iterations\": %d, \"failures\": %d}\n", iterations, g_failures);
  return g_failures == 0 ? 0 : 1;
}
