// A CUPTI client written the way Kineto uses CUPTI (buffer callbacks, activity kinds, external
// correlation ids pushed around library calls, API callbacks, a registered timestamp callback,
// forced flush), run on the simulated device: it is linked against NVIDIA's libcupti.so.13 and
// libcuda.so stub and finds devsim's libraries through LD_LIBRARY_PATH only.
//
//   cupti_client full        launches on 3 streams (runtime <<<>>> and cuLaunchKernel) and checks
//                            the records against what was launched and seen by the callbacks
//   cupti_client unavailable expects DEVSIM_CUPTI=unavailable: every tracing call refused
//   cupti_client busy        expects DEVSIM_CUPTI=busy: subscriber and kernel kinds refused
//   cupti_client drop        expects DEVSIM_CUPTI_DROP_EVERY=2: half of 10 memsets dropped, counted
//   cupti_client decline     the client declines buffers: every record dropped and counted
//   cupti_client fail        expects DEVSIM_CUPTI_FAIL=cuptiActivityFlushAll=CUPTI_ERROR_UNKNOWN,cuptiGetVersion=7
//
// Prints one "PASS <what>" or "FAIL <what>" line per check and "cupti_client: PASSED" at the end.
#include "client_records.h"

#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <set>
#include <string>

namespace ops {
template <typename T>
__global__ void scale(T* data, T factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}
}  // namespace ops

// Launched only through cuLaunchKernel, as a cuBLAS-like library would.
__global__ void library_gemm_kernel(float* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}

namespace {

using cupti_client::Collected;

int g_failures = 0;
std::mutex g_mutex;
Collected g_collected;
std::thread::id g_main_thread;
bool g_decline_buffers = false;
constexpr size_t kBufferSize = 1 << 20;

void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
  if (!ok) ++g_failures;
}

void check_result(CUptiResult got, CUptiResult want, const std::string& what) {
  const char* name = nullptr;
  cuptiGetResultString(got, &name);
  check(got == want, what + " -> " + (name ? name : std::to_string(got)));
}

#define CUDA_OK(call) check((call) == cudaSuccess, #call)

// The client's own clock: CLOCK_MONOTONIC_RAW, which CUPTI's default domain is not.
uint64_t CUPTIAPI client_clock() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;
  if (g_decline_buffers) {
    *buffer = nullptr;
    *size = 0;
    return;
  }
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferSize));
  *size = kBufferSize;
}

void keep_record(Collected& c, CUpti_Activity* record) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      auto* kernel = reinterpret_cast<CUpti_ActivityKernel10*>(record);
      c.kernels.push_back(*kernel);
      c.kernel_names.emplace_back(kernel->name ? kernel->name : "");
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: c.memcpys.push_back(*reinterpret_cast<CUpti_ActivityMemcpy6*>(record)); break;
    case CUPTI_ACTIVITY_KIND_MEMSET: c.memsets.push_back(*reinterpret_cast<CUpti_ActivityMemset4*>(record)); break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: c.api.push_back(*reinterpret_cast<CUpti_ActivityAPI*>(record)); break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      c.syncs.push_back(*reinterpret_cast<CUpti_ActivitySynchronization2*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      c.external.push_back(*reinterpret_cast<CUpti_ActivityExternalCorrelation*>(record));
      break;
    default: ++c.unknown_records; break;
  }
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_size) {
  std::lock_guard<std::mutex> lock(g_mutex);
  ++g_collected.buffers;
  if (std::this_thread::get_id() == g_main_thread) g_collected.completed_on_caller_thread = true;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    keep_record(g_collected, record);
  }
  std::free(buffer);
}

void CUPTIAPI api_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  if (info->callbackSite == CUPTI_API_ENTER) {
    *info->correlationData = 0xC0FFEE00ull + info->correlationId;
    return;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  if (*info->correlationData != 0xC0FFEE00ull + info->correlationId) ++g_collected.correlation_data_mismatches;
  g_collected.exits.push_back(cupti_client::Callback{domain, cbid, info->correlationId, info->functionName,
                                                     info->symbolName ? info->symbolName : ""});
}

Collected take_collected() {
  std::lock_guard<std::mutex> lock(g_mutex);
  Collected out = g_collected;
  g_collected = Collected{};
  return out;
}

void enable_kinds() {
  const CUpti_ActivityKind kinds[] = {
      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
      CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
      CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
  for (CUpti_ActivityKind kind : kinds) {
    check_result(cuptiActivityEnable(kind), CUPTI_SUCCESS, "cuptiActivityEnable(" + std::to_string(kind) + ")");
  }
}

constexpr int kStreams = 3;
constexpr int kElements = 1 << 16;
constexpr uint64_t kExternalBase = 5000;

// Per stream: HtoD copy, runtime launch, memset, driver launch inside an external id, DtoH copy.
void run_workload(float* host, float* device[kStreams], cudaStream_t streams[kStreams]) {
  cudaFunction_t library_function = nullptr;
  CUDA_OK(cudaGetFuncBySymbol(&library_function, reinterpret_cast<const void*>(&library_gemm_kernel)));
  const size_t bytes = kElements * sizeof(float);
  for (int s = 0; s < kStreams; ++s) {
    CUDA_OK(cudaMemcpyAsync(device[s], host, bytes, cudaMemcpyHostToDevice, streams[s]));
    ops::scale<float><<<kElements / 256, 256, 0, streams[s]>>>(device[s], 2.0f, kElements);
    CUDA_OK(cudaMemsetAsync(device[s], 0, bytes / 2, streams[s]));
    cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, kExternalBase + s);
    int n = kElements;
    void* params[] = {&device[s], &n};
    check(cuLaunchKernel(library_function, kElements / 128, 1, 1, 128, 1, 1, 0, streams[s], params, nullptr) ==
              CUDA_SUCCESS, "cuLaunchKernel on stream " + std::to_string(s));
    uint64_t popped = 0;
    cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &popped);
    check(popped == kExternalBase + s, "pop returns the pushed external id");
    CUDA_OK(cudaMemcpyAsync(host, device[s], bytes, cudaMemcpyDeviceToHost, streams[s]));
  }
  CUDA_OK(cudaDeviceSynchronize());
}

// Correlation id -> the API exit callback of the call that has it.
std::map<uint32_t, cupti_client::Callback> callbacks_by_id(const Collected& c) {
  std::map<uint32_t, cupti_client::Callback> by_id;
  for (const auto& cb : c.exits) by_id[cb.correlation_id] = cb;
  return by_id;
}

template <typename Record>
bool within(const Record& r, uint64_t before, uint64_t after) {
  return r.start >= before && r.start <= r.end && r.end <= after;
}

void check_kernels(const Collected& c, uint64_t before, uint64_t after) {
  check(c.kernels.size() == 2 * kStreams, "kernel records: " + std::to_string(c.kernels.size()) + " for 6 launches");
  const auto by_id = callbacks_by_id(c);
  std::map<uint32_t, uint64_t> external_by_correlation;
  for (const auto& e : c.external) {
    if (e.externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) external_by_correlation[e.correlationId] = e.externalId;
  }
  std::set<uint32_t> streams;
  std::set<uint64_t> library_external_ids;
  int runtime = 0, driver = 0, in_time = 0, launched_by_callback_call = 0;
  for (size_t i = 0; i < c.kernels.size(); ++i) {
    const auto& k = c.kernels[i];
    const std::string& name = c.kernel_names[i];
    streams.insert(k.streamId);
    in_time += within(k, before, after);
    auto it = by_id.find(k.correlationId);
    if (it != by_id.end() && it->second.symbol == name) ++launched_by_callback_call;
    if (name.find("library_gemm_kernel") != std::string::npos) {
      ++driver;
      check(it != by_id.end() && it->second.function == "cuLaunchKernel" &&
                it->second.domain == CUPTI_CB_DOMAIN_DRIVER_API,
            "driver-launched kernel correlates to its cuLaunchKernel callback");
      auto ext = external_by_correlation.find(k.correlationId);
      if (ext != external_by_correlation.end()) library_external_ids.insert(ext->second);
    } else {
      ++runtime;
      check(name.rfind("_ZN3ops5scaleIfEEvPT_S1_i", 0) == 0, "runtime kernel name is mangled: " + name);
      check(external_by_correlation.count(k.correlationId) == 0, "no external id where none was pushed");
    }
  }
  check(runtime == kStreams && driver == kStreams, "3 runtime and 3 driver-launched kernels");
  check(launched_by_callback_call == 2 * kStreams, "every kernel's correlation id is its launching call's");
  check(library_external_ids == std::set<uint64_t>{kExternalBase, kExternalBase + 1, kExternalBase + 2},
        "driver-launched kernels map to the external ids pushed around them");
  check(streams.size() == kStreams, "kernels on 3 distinct CUPTI stream ids");
  check(in_time == 2 * kStreams, "kernel timestamps within [host before launch, host after sync] in the client's clock");
  const auto& k0 = c.kernels.front();
  check(k0.gridX > 0 && k0.blockX > 0 && k0.gridY == 1 && k0.blockY == 1, "grid and block recorded");
}

void check_copies_and_sets(const Collected& c, uint64_t before, uint64_t after) {
  const auto by_id = callbacks_by_id(c);
  check(c.memcpys.size() == 2 * kStreams, "memcpy records: " + std::to_string(c.memcpys.size()) + " for 6 copies");
  check(c.memsets.size() == kStreams, "memset records: " + std::to_string(c.memsets.size()) + " for 3 sets");
  int htod = 0, dtoh = 0, matched = 0, in_time = 0;
  for (const auto& m : c.memcpys) {
    htod += m.copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    dtoh += m.copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    auto it = by_id.find(m.correlationId);
    matched += it != by_id.end() && it->second.function == "cudaMemcpyAsync";
    in_time += within(m, before, after) && m.bytes == kElements * sizeof(float);
  }
  for (const auto& m : c.memsets) {
    auto it = by_id.find(m.correlationId);
    matched += it != by_id.end() && it->second.function == "cudaMemsetAsync";
    in_time += within(m, before, after) && m.bytes == kElements * sizeof(float) / 2;
  }
  check(htod == kStreams && dtoh == kStreams, "3 HtoD and 3 DtoH copies");
  check(matched == 3 * kStreams, "copy and set correlation ids are their API calls'");
  check(in_time == 3 * kStreams, "copy and set bytes and timestamps as launched, in the client's clock");
}

// API calls started after `start` (the client's clock when tracing began).
void check_api_records(const Collected& c, uint64_t start, uint64_t after) {
  std::set<uint32_t> from_callbacks, from_records;
  for (const auto& cb : c.exits) from_callbacks.insert(cb.correlation_id);
  int in_time = 0;
  for (const auto& a : c.api) {
    from_records.insert(a.correlationId);
    in_time += a.start >= start && a.start <= a.end && a.end <= after;
  }
  check(!c.api.empty() && from_records == from_callbacks,
        "RUNTIME/DRIVER records and API callbacks carry the same correlation ids (" +
            std::to_string(from_records.size()) + ")");
  check(in_time == static_cast<int>(c.api.size()), "API record timestamps in the client's clock");
  std::map<uint32_t, uint64_t> call_start;
  for (const auto& a : c.api) call_start[a.correlationId] = a.start;
  int after_call = 0;
  for (const auto& k : c.kernels) after_call += call_start.count(k.correlationId) && k.start >= call_start[k.correlationId];
  check(after_call == static_cast<int>(c.kernels.size()), "every kernel starts after its launching call started");
  check(c.correlation_data_mismatches == 0, "correlationData written on enter is read back on exit");
  bool context_sync = false;
  for (const auto& s : c.syncs) {
    context_sync |= s.type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE && s.end <= after;
  }
  check(context_sync, "cudaDeviceSynchronize gives a context synchronization record");
  check(c.unknown_records == 0, "no record of a kind that was not enabled");
  check(!c.completed_on_caller_thread, "buffers completed on a thread CUPTI owns");
}

int run_full() {
  uint32_t version = 0;
  check_result(cuptiGetVersion(&version), CUPTI_SUCCESS, "cuptiGetVersion");
  check(version == CUPTI_API_VERSION, "CUPTI_API_VERSION " + std::to_string(version));
  check_result(cuptiActivityRegisterTimestampCallback(client_clock), CUPTI_SUCCESS, "timestamp callback");
  const uint64_t start = client_clock();
  check_result(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), CUPTI_SUCCESS, "buffer callbacks");
  enable_kinds();
  CUpti_SubscriberHandle subscriber = nullptr, second = nullptr;
  check_result(cuptiSubscribe(&subscriber, api_callback, nullptr), CUPTI_SUCCESS, "cuptiSubscribe");
  check_result(cuptiSubscribe(&second, api_callback, nullptr), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
               "a second subscriber");
  check_result(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_SUCCESS, "runtime domain");
  check_result(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API), CUPTI_SUCCESS, "driver domain");

  cudaStream_t streams[kStreams];
  float* device[kStreams];
  float* host = nullptr;
  CUDA_OK(cudaMallocHost(&host, kElements * sizeof(float)));
  for (int s = 0; s < kStreams; ++s) {
    CUDA_OK(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));
    CUDA_OK(cudaMalloc(&device[s], kElements * sizeof(float)));
  }
  const uint64_t before = client_clock();
  run_workload(host, device, streams);
  const uint64_t after = client_clock();
  check_result(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS, "forced flush");
  const Collected c = take_collected();
  size_t dropped = 1;
  check_result(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS, "dropped count");
  check(dropped == 0, "no record dropped");
  check_kernels(c, before, after);
  std::set<uint32_t> queried, recorded;
  for (int s = 0; s < kStreams; ++s) {
    uint32_t id = 0;
    check_result(cuptiGetStreamId(nullptr, reinterpret_cast<CUstream>(streams[s]), &id), CUPTI_SUCCESS,
                 "cuptiGetStreamId");
    queried.insert(id);
  }
  for (const auto& k : c.kernels) recorded.insert(k.streamId);
  check(queried == recorded, "cuptiGetStreamId gives the stream ids the kernel records carry");
  check_copies_and_sets(c, before, after);
  check_api_records(c, start, after);
  check_result(cuptiUnsubscribe(subscriber), CUPTI_SUCCESS, "cuptiUnsubscribe");
  check_result(cuptiFinalize(), CUPTI_SUCCESS, "cuptiFinalize");
  return 0;
}

// Ten memsets with only MEMSET enabled; returns how many records arrived.
size_t memset_records(size_t* dropped) {
  check_result(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), CUPTI_SUCCESS, "buffer callbacks");
  check_result(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), CUPTI_SUCCESS, "enable MEMSET");
  float* device = nullptr;
  CUDA_OK(cudaMalloc(&device, 4096));
  for (int i = 0; i < 10; ++i) CUDA_OK(cudaMemset(device, i, 4096));
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  cuptiActivityGetNumDroppedRecords(nullptr, 0, dropped);
  return take_collected().memsets.size();
}

int run_unavailable() {
  CUpti_SubscriberHandle subscriber = nullptr;
  check_result(cuptiSubscribe(&subscriber, api_callback, nullptr), CUPTI_ERROR_NOT_INITIALIZED, "subscribe");
  check_result(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_ERROR_NOT_INITIALIZED, "enable");
  check_result(cuptiActivityFlushAll(0), CUPTI_ERROR_NOT_INITIALIZED, "flush");
  void* device = nullptr;
  CUDA_OK(cudaMalloc(&device, 64));  // the device itself still works
  return 0;
}

int run_busy() {
  CUpti_SubscriberHandle subscriber = nullptr;
  check_result(cuptiSubscribe(&subscriber, api_callback, nullptr), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
               "subscribe while another profiler holds CUPTI");
  check_result(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
               CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "enable CONCURRENT_KERNEL while busy");
  check_result(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_KERNEL), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
               "enable KERNEL while busy");
  return 0;
}

int run_drop() {
  size_t dropped = 0;
  const size_t kept = memset_records(&dropped);
  check(kept == 5 && dropped == 5, "every 2nd record dropped: kept " + std::to_string(kept) + ", dropped " +
                                        std::to_string(dropped));
  return 0;
}

int run_decline() {
  g_decline_buffers = true;
  size_t dropped = 0;
  const size_t kept = memset_records(&dropped);
  check(kept == 0 && dropped == 10, "declined buffers drop every record: dropped " + std::to_string(dropped));
  return 0;
}

int run_fail() {
  uint32_t version = 0;
  check_result(cuptiGetVersion(&version), CUPTI_ERROR_INVALID_OPERATION, "injected cuptiGetVersion=7");
  check_result(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), CUPTI_SUCCESS, "callbacks");
  check_result(cuptiActivityFlushAll(0), CUPTI_ERROR_UNKNOWN, "injected cuptiActivityFlushAll");
  check_result(cuptiGetLastError(), CUPTI_ERROR_UNKNOWN, "cuptiGetLastError keeps the last failure");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  g_main_thread = std::this_thread::get_id();
  const std::string mode = argc > 1 ? argv[1] : "full";
  if (mode == "full") run_full();
  else if (mode == "unavailable") run_unavailable();
  else if (mode == "busy") run_busy();
  else if (mode == "drop") run_drop();
  else if (mode == "decline") run_decline();
  else if (mode == "fail") run_fail();
  else check(false, "unknown mode " + mode);
  std::printf("cupti_client: %s\n", g_failures == 0 ? "PASSED" : "FAILED");
  return g_failures == 0 ? 0 : 1;
}
