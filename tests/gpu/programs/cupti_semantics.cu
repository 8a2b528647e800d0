// What NVIDIA's CUPTI reports for a runtime launch made while an external correlation id is
// pushed, under each set of API activity kinds: which EXTERNAL_CORRELATION records come (and
// with which correlation id), which RUNTIME/DRIVER records, and the kernel's correlation id;
// and what the runtime API callback's correlation id is. The simulated device (tests/devsim)
// must answer the same; the GPU acceptance script runs this on a real GPU and on devsim and
// compares the two (tests/gpu/cupti_semantics.py).
//
//   cupti_semantics [none|runtime|driver|both]   which API kinds are enabled besides
//                                                 KERNEL, MEMSET and EXTERNAL_CORRELATION
// Prints one JSON object per line: {"record": ...} per activity record and
// {"callback": ...} per runtime callback, then {"done": ...}.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

constexpr uint64_t kExternalId = 4242;

__global__ void probe_kernel(int* out) { out[threadIdx.x] = int(threadIdx.x); }

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 1 << 20;
  *buffer = static_cast<uint8_t*>(aligned_alloc(8, *size));
  *max_records = 0;
}

void print_record(const CUpti_Activity* record) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      auto* k = reinterpret_cast<const CUpti_ActivityKernel9*>(record);
      std::printf("{\"record\": \"kernel\", \"correlation\": %u, \"name\": \"%s\"}\n", k->correlationId,
                  k->name ? k->name : "");
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      std::printf("{\"record\": \"memset\", \"correlation\": %u}\n", m->correlationId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      std::printf("{\"record\": \"%s\", \"correlation\": %u, \"cbid\": %u}\n",
                  record->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? "runtime" : "driver", a->correlationId, a->cbid);
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
      std::printf("{\"record\": \"external\", \"correlation\": %u, \"external_id\": %llu, \"kind\": %d}\n",
                  e->correlationId, static_cast<unsigned long long>(e->externalId), int(e->externalKind));
      break;
    }
    default:
      std::printf("{\"record\": \"kind %d\"}\n", int(record->kind));
  }
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) print_record(record);
  free(buffer);
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  auto* call = static_cast<const CUpti_CallbackData*>(data);
  if (call->callbackSite != CUPTI_API_ENTER) return;
  std::printf("{\"callback\": \"%s\", \"function\": \"%s\", \"cbid\": %u, \"correlation\": %u}\n",
              domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "runtime" : "driver",
              call->functionName ? call->functionName : "", cbid, call->correlationId);
}

bool check(CUptiResult result, const char* what) {
  if (result == CUPTI_SUCCESS) return true;
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  std::printf("{\"error\": \"%s: %s\"}\n", what, text ? text : "?");
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "none";
  const bool callbacks = argc > 2 && std::strcmp(argv[2], "callbacks") == 0;
  check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "register");
  check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "kernel");
  check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), "memset");
  check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION), "external");
  if (mode == "runtime" || mode == "both") check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), "runtime");
  if (mode == "driver" || mode == "both") check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER), "driver");
  CUpti_SubscriberHandle subscriber{};
  if (callbacks && check(cuptiSubscribe(&subscriber, on_callback, nullptr), "subscribe")) {
    check(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API), "runtime domain");
  }
  int* out = nullptr;
  cudaMalloc(&out, 64 * sizeof(int));
  check(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, kExternalId), "push");
  probe_kernel<<<1, 32>>>(out);
  cudaMemsetAsync(out, 0, 64 * sizeof(int));
  uint64_t popped = 0;
  check(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &popped), "pop");
  cudaDeviceSynchronize();
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::printf("{\"done\": \"%s\", \"popped\": %llu}\n", mode.c_str(), static_cast<unsigned long long>(popped));
  cudaFree(out);
  return 0;
}
