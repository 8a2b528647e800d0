// A CUPTI client that switches activity kinds on and off while the program runs, as a profiler
// does per trace window, and checks CUpti_ActivitySynchronization2 for every kind of wait:
// event synchronize, stream wait event, stream synchronize, context synchronize, from the
// runtime and the driver. Linked against NVIDIA's libcupti.so.13 and the libcuda stub; run
// with LD_LIBRARY_PATH at devsim.
//
// Phases: (A) kinds off: a kernel and waits; (B) SYNCHRONIZATION and CONCURRENT_KERNEL on: the
// waits under test; (C) off again: more of the same. Only phase B may leave records.
//
// Prints one "PASS <what>" or "FAIL <what>" line per check and "sync_records_client: PASSED".
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

__global__ void busy_kernel(float* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * 2.0f + 1.0f;
}

namespace {

struct SyncCall {  // an exit callback of a synchronising API
  std::string function;
  uint32_t correlation_id;
};

std::mutex g_mutex;
std::vector<CUpti_ActivitySynchronization2> g_syncs;
std::vector<CUpti_ActivityKernel10> g_kernels;
std::vector<SyncCall> g_sync_calls;
int g_failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
  if (!ok) ++g_failures;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;
  *size = 1 << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_size) {
  std::lock_guard<std::mutex> lock(g_mutex);
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) {
      g_syncs.push_back(*reinterpret_cast<CUpti_ActivitySynchronization2*>(record));
    } else if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      g_kernels.push_back(*reinterpret_cast<CUpti_ActivityKernel10*>(record));
    }
  }
  std::free(buffer);
}

bool is_sync_function(const char* name) {
  static const char* const kNames[] = {"cudaEventSynchronize", "cudaStreamWaitEvent", "cudaStreamSynchronize",
                                       "cudaDeviceSynchronize", "cuEventSynchronize", "cuStreamWaitEvent",
                                       "cuStreamSynchronize", "cuCtxSynchronize"};
  for (const char* n : kNames) {
    if (std::strncmp(name, n, std::strlen(n)) == 0) return true;
  }
  return false;
}

bool g_recording_calls = false;

void CUPTIAPI api_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data) {
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  if (info->callbackSite != CUPTI_API_EXIT || !is_sync_function(info->functionName)) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_recording_calls) g_sync_calls.push_back(SyncCall{info->functionName, info->correlationId});
}

void set_kinds(bool on) {
  for (CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL}) {
    CUptiResult r = on ? cuptiActivityEnable(kind) : cuptiActivityDisable(kind);
    check(r == CUPTI_SUCCESS, std::string(on ? "enable " : "disable ") + std::to_string(kind));
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  g_recording_calls = on;
}

// Waits that must leave no record: the kinds are off.
void unrecorded_waits(float* data, cudaStream_t s, cudaEvent_t e) {
  busy_kernel<<<64, 256, 0, s>>>(data, 64 * 256);
  cudaEventRecord(e, s);
  cudaEventSynchronize(e);
  cudaStreamSynchronize(s);
  cudaDeviceSynchronize();
}

struct Expected {
  CUpti_ActivitySynchronizationType type;
  uint32_t stream_id;  // CUPTI_SYNCHRONIZATION_INVALID_VALUE: not applicable
  bool has_event;
};

constexpr uint32_t kNone = CUPTI_SYNCHRONIZATION_INVALID_VALUE;

uint32_t stream_id(cudaStream_t s) {
  uint32_t id = 0;
  cuptiGetStreamId(nullptr, reinterpret_cast<CUstream>(s), &id);
  return id;
}

// The waits under test, in order; returns what each record must say.
std::vector<Expected> recorded_waits(float* data, cudaStream_t s1, cudaStream_t s2, cudaEvent_t e) {
  const auto ev = reinterpret_cast<CUevent>(e);
  busy_kernel<<<64, 256, 0, s1>>>(data, 64 * 256);
  cudaEventRecord(e, s1);
  cudaEventSynchronize(e);                                        // 0: record 1 of e
  cudaStreamWaitEvent(s2, e, 0);                                  // 1: record 1 of e
  cudaEventRecord(e, s2);
  cudaEventSynchronize(e);                                        // 2: record 2 of e
  busy_kernel<<<64, 256, 0, s2>>>(data, 64 * 256);
  cudaStreamSynchronize(s2);                                      // 3: after that kernel
  cudaDeviceSynchronize();                                        // 4
  cuEventSynchronize(ev);                                         // 5: record 2 of e
  cuStreamWaitEvent(reinterpret_cast<CUstream>(s1), ev, 0);       // 6: record 2 of e
  cuStreamSynchronize(reinterpret_cast<CUstream>(s1));            // 7
  cuCtxSynchronize();                                             // 8
  return {{CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, kNone, true},
          {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, stream_id(s2), true},
          {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, kNone, true},
          {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, stream_id(s2), false},
          {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, kNone, false},
          {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, kNone, true},
          {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, stream_id(s1), true},
          {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, stream_id(s1), false},
          {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, kNone, false}};
}

void check_record(size_t i, const CUpti_ActivitySynchronization2& r, const Expected& want, const SyncCall& call,
                  uint32_t event_id, uint64_t begin, uint64_t end) {
  const std::string at = "sync record " + std::to_string(i) + " (" + call.function + ")";
  check(r.type == want.type, at + " type " + std::to_string(r.type));
  check(r.correlationId == call.correlation_id, at + " correlation id equals its call's");
  check(r.streamId == want.stream_id, at + " stream id " + std::to_string(r.streamId));
  check(r.cudaEventId == (want.has_event ? event_id : kNone), at + " event id " + std::to_string(r.cudaEventId));
  check(want.has_event ? r.cudaEventSyncId != kNone : r.cudaEventSyncId == kNone, at + " event sync id applicable");
  check(r.contextId != 0 && r.contextId != kNone, at + " context id");
  check(r.returnValue == 0, at + " return value");
  check(begin <= r.start && r.start <= r.end && r.end <= end, at + " inside the enabled window");
}

void check_records(const std::vector<Expected>& expected, uint64_t begin, uint64_t end) {
  check(g_syncs.size() == expected.size(), "sync records only while enabled: " + std::to_string(g_syncs.size()) +
                                               " for " + std::to_string(expected.size()) + " waits");
  check(g_sync_calls.size() == expected.size(), "sync calls seen by callbacks: " + std::to_string(g_sync_calls.size()));
  if (g_syncs.size() != expected.size() || g_sync_calls.size() != expected.size()) return;
  const uint32_t event_id = g_syncs[0].cudaEventId;
  for (size_t i = 0; i < expected.size(); ++i) {
    check_record(i, g_syncs[i], expected[i], g_sync_calls[i], event_id, begin, end);
  }
  check(g_syncs[0].cudaEventSyncId == g_syncs[1].cudaEventSyncId, "wait on the same record: same event sync id");
  check(g_syncs[2].cudaEventSyncId != g_syncs[0].cudaEventSyncId, "a new record of the event: new event sync id");
  check(g_syncs[5].cudaEventSyncId == g_syncs[2].cudaEventSyncId && g_syncs[6].cudaEventSyncId == g_syncs[2].cudaEventSyncId,
        "driver waits name the latest record");
  check(g_kernels.size() == 2, "kernel records only for launches while enabled: " + std::to_string(g_kernels.size()));
  if (g_kernels.size() == 2) {
    const auto& second = g_kernels[0].streamId == expected[3].stream_id ? g_kernels[0] : g_kernels[1];
    check(g_syncs[3].end >= second.end, "stream synchronize ends after the stream's kernel");
    check(g_syncs[0].end >= g_kernels[0].end || g_syncs[0].end >= g_kernels[1].end,
          "event synchronize ends after the recorded kernel");
  }
}

}  // namespace

int main() {
  check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) == CUPTI_SUCCESS, "register callbacks");
  CUpti_SubscriberHandle subscriber = nullptr;
  check(cuptiSubscribe(&subscriber, api_callback, nullptr) == CUPTI_SUCCESS, "subscribe");
  cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  float* data = nullptr;
  cudaStream_t s1, s2;
  cudaEvent_t e;
  if (cudaMalloc(&data, 64 * 256 * sizeof(float)) != cudaSuccess) return 1;
  cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
  cudaEventCreate(&e);

  unrecorded_waits(data, s1, e);  // A
  uint64_t begin = 0, end = 0;
  cuptiGetTimestamp(&begin);
  set_kinds(true);
  const std::vector<Expected> expected = recorded_waits(data, s1, s2, e);  // B
  set_kinds(false);
  cuptiGetTimestamp(&end);
  unrecorded_waits(data, s2, e);  // C
  check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) == CUPTI_SUCCESS, "forced flush");

  {
    std::lock_guard<std::mutex> lock(g_mutex);
    check_records(expected, begin, end);
  }
  cuptiUnsubscribe(subscriber);
  cudaEventDestroy(e);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
  cudaFree(data);
  std::printf(g_failures ? "sync_records_client: FAILED\n" : "sync_records_client: PASSED\n");
  return g_failures ? 1 : 0;
}
