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
// named stream; a "collective" range of domain "app" whose payload is described by a registered
// schema (a communicator, a size, an enum and a char[8] tag: what NCCL attaches to its ranges);
// ranges of two domains closed out of order.
// The counts it made are printed as `expect {...}` for the checker.
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>
#include <nvtx3/nvToolsExtPayload.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
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

// A payload described by a registered schema, as NCCL describes its collectives.
struct Collective {
  uint64_t comm;
  size_t bytes;
  int32_t op;
  char tag[8];
};
constexpr uint64_t kCollectiveSchema = NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 1;
constexpr uint64_t kOpEnum = NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 24;

void register_collective(nvtxDomainHandle_t domain) {
  static const nvtxPayloadEnum_t ops[] = {{"Sum", 0, 0}, {"Max", 1, 0}};
  nvtxPayloadEnumAttr_t e{};
  e.fieldMask = NVTX_PAYLOAD_ENUM_ATTR_FIELD_NAME | NVTX_PAYLOAD_ENUM_ATTR_FIELD_ENTRIES |
                NVTX_PAYLOAD_ENUM_ATTR_FIELD_NUM_ENTRIES | NVTX_PAYLOAD_ENUM_ATTR_FIELD_SIZE |
                NVTX_PAYLOAD_ENUM_ATTR_FIELD_SCHEMA_ID;
  e.name = "op", e.entries = ops, e.numEntries = 2, e.sizeOfEnum = sizeof(int32_t), e.schemaId = kOpEnum;
  nvtxPayloadEnumRegister(domain, &e);
  static const nvtxPayloadSchemaEntry_t fields[] = {
      {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "comm", nullptr, 0, offsetof(Collective, comm), nullptr, nullptr},
      {0, NVTX_PAYLOAD_ENTRY_TYPE_SIZE, "bytes", nullptr, 0, offsetof(Collective, bytes), nullptr, nullptr},
      {0, kOpEnum, "op", nullptr, 0, offsetof(Collective, op), nullptr, nullptr},
      {NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_FIXED_SIZE, NVTX_PAYLOAD_ENTRY_TYPE_CHAR, "tag", nullptr, 8,
       offsetof(Collective, tag), nullptr, nullptr}};
  nvtxPayloadSchemaAttr_t s{};
  s.fieldMask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE |
                NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
                NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID;
  s.name = "collective", s.type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC, s.entries = fields, s.numEntries = 4;
  s.payloadStaticSize = sizeof(Collective), s.schemaId = kCollectiveSchema;
  nvtxPayloadSchemaRegister(domain, &s);
}

void collective(nvtxDomainHandle_t domain, float* data, cudaStream_t stream) {
  const Collective payload{0xC0FFEE, 4096, 1, "ring"};
  nvtxPayloadData_t data_of[] = {{kCollectiveSchema, sizeof payload, &payload}};
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "collective";
  NVTX_PAYLOAD_EVTATTR_SET_MULTIPLE(a, data_of)
  nvtxDomainRangePushEx(domain, &a);
  launch(data, stream);
  nvtxDomainRangePop(domain);
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
  // A default-domain range closed while a domain range opened inside it is still open: each
  // domain pops its own, and what is launched afterwards belongs to the one still open.
  nvtxRangePushA("interleaved_outer");
  nvtxEventAttributes_t inner{};
  inner.version = NVTX_VERSION;
  inner.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  inner.messageType = NVTX_MESSAGE_TYPE_ASCII;
  inner.message.ascii = "interleaved_inner";
  nvtxDomainRangePushEx(domain, &inner);
  launch(data, stream);
  nvtxRangePop();
  launch(data, stream);
  nvtxDomainRangePop(domain);
  register_collective(domain);
  collective(domain, data, stream);
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
