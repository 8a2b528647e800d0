// The CUPTI backend end to end on devsim (CTest label `devsim`): this program links the
// collector, plays the hooks' part by hand (as hooks/hook.h does: id, push external id, real
// call, pop, record), runs real work through devsim's libcudart.so.13 — including a
// driver-level launch through simblas, as cuBLAS does — and checks the frozen Trace's device
// records against what it launched.
//
//   collector_cupti_devsim_test            CUPTI works: every record linked and named, CUPTI's
//                                          cost per call measured without leaving a trace
//   collector_cupti_devsim_test refused    DEVSIM_CUPTI=unavailable: host-only, reason given
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "collector/api.h"
#include "collector/session.h"
#include "operator_scope.h"
#include "simblas.h"

using namespace profagent;
using namespace profagent::collector;
using namespace profagent::collector::testing;

__global__ void scale_kernel(float* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= 2.0f;
}

namespace {

int g_failures = 0;
#define EXPECT(condition)                                                  \
  do {                                                                     \
    if (!(condition)) {                                                    \
      std::fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #condition); \
      ++g_failures;                                                        \
    }                                                                      \
  } while (0)

// One hooked runtime call, as hooks/hook.h records it.
template <typename Call>
uint64_t hooked(const char* name, EventKind kind, Call call) {
  RuntimeGuard guard;
  cuda_in_use();
  HostEvent event{};
  event.id = new_event_id();
  event.start = now();
  push_external_id(event.id);
  cudaError_t result = call();
  pop_external_id();
  event.end = now();
  event.kind = uint8_t(kind);
  event.name = intern(name);
  event.result = int16_t(result);
  if (guard.should_record()) record(event);
  return event.id;
}

struct Work {
  uint64_t copy_in = 0, launches[3] = {}, set = 0, sync = 0, saxpy_op = 0;
};

Work run_work() {
  constexpr int n = 4096;
  static float host[n];
  float* x = nullptr;
  float* y = nullptr;
  cudaStream_t stream = nullptr;
  Work work;
  hooked("cudaMalloc", EventKind::Alloc, [&] { return cudaMalloc(&x, n * sizeof(float)); });
  hooked("cudaMalloc", EventKind::Alloc, [&] { return cudaMalloc(&y, n * sizeof(float)); });
  cudaStreamCreate(&stream);
  work.copy_in = hooked("cudaMemcpy", EventKind::Memcpy, [&] {
    return cudaMemcpy(x, host, sizeof host, cudaMemcpyHostToDevice);
  });
  for (uint64_t& launch : work.launches) {
    launch = hooked("cudaLaunchKernel", EventKind::Launch, [&] {
      scale_kernel<<<n / 256, 256, 0, stream>>>(x, n);
      return cudaGetLastError();
    });
  }
  work.set = hooked("cudaMemsetAsync", EventKind::Memset,
                    [&] { return cudaMemsetAsync(y, 0, n * sizeof(float), stream); });
  work.saxpy_op = operator_scope("simblas::saxpy", [&] { simblasSaxpy(n, 2.0f, x, y, stream); });
  work.sync = hooked("cudaStreamSynchronize", EventKind::Sync,
                     [&] { return cudaStreamSynchronize(stream); });
  return work;
}

void check_device_records(const Trace& trace, const Work& work) {
  int kernels = 0, copies = 0, sets = 0, driver_kernels = 0;
  for (const DeviceRecord& d : trace.device) {
    if (d.kind == DeviceKind::Sync) continue;
    EXPECT(d.host >= 0);
    if (d.host < 0) continue;
    const HostRecord& issuer = trace.host[d.host];
    EXPECT(d.start_ns >= issuer.start_ns);  // one clock: work starts after it was issued
    EXPECT(issuer.correlation == d.correlation);
    EXPECT(d.external_id == issuer.external_id);
    if (d.kind == DeviceKind::Kernel && (issuer.flags & kFlagDriverApi)) {
      ++driver_kernels;
      EXPECT(issuer.name.rfind("cuLaunchKernel", 0) == 0);
      EXPECT(d.external_id == work.saxpy_op);
      EXPECT(issuer.parent >= 0 && trace.host[issuer.parent].id == work.saxpy_op);
      if (issuer.parent < 0 || trace.host[issuer.parent].id != work.saxpy_op) {
        const HostRecord* op = find_host(trace, work.saxpy_op);
        std::fprintf(stderr, "driver call tid %u [%lu, %lu] parent %ld; operator tid %u [%lu, %lu]\n",
                     issuer.tid, (unsigned long)issuer.start_ns, (unsigned long)issuer.end_ns,
                     (long)issuer.parent, op ? op->tid : 0, op ? (unsigned long)op->start_ns : 0,
                     op ? (unsigned long)op->end_ns : 0);
      }
    } else if (d.kind == DeviceKind::Kernel) {
      ++kernels;
      EXPECT(issuer.name == "cudaLaunchKernel");
      EXPECT(d.name == "scale_kernel(float*, int)");
      if (d.name != "scale_kernel(float*, int)") std::fprintf(stderr, "kernel name: %s\n", d.name.c_str());
      EXPECT(d.grid[0] == 16 && d.block[0] == 256);
    } else if (d.kind == DeviceKind::Memcpy) {
      ++copies;
      EXPECT(issuer.id == work.copy_in);
      EXPECT(d.name == "Memcpy HtoD (Pageable -> Device)");
      EXPECT(d.bytes == 4096 * sizeof(float));
    } else if (d.kind == DeviceKind::Memset) {
      ++sets;
      EXPECT(issuer.id == work.set);
      EXPECT(d.name == "Memset (Device)");
    }
  }
  EXPECT(kernels == 3);
  EXPECT(copies == 1);
  EXPECT(sets == 1);
  EXPECT(driver_kernels == 1);
  std::printf("kernels %d, copies %d, sets %d, driver-level kernels %d, device records %zu\n",
              kernels, copies, sets, driver_kernels, trace.device.size());
}

void check_sync(const Trace& trace, const Work& work) {
  const HostRecord* sync = find_host(trace, work.sync);
  EXPECT(sync != nullptr);
  if (!sync) return;
  for (const DeviceRecord& d : trace.device) {
    if (d.kind != DeviceKind::Sync) EXPECT(sync->end_ns >= d.end_ns);  // it waited for all
  }
}

// CUPTI's cost per traced call (collector/cupti_call_cost.h), measured from another thread as
// the agent's poller does, while this one records: a figure, and afterwards the probe's function
// is traced as before (a program's own call of it is recorded through CUPTI's callback), while
// none of the probe's own calls reaches the window.
DeviceCallCost probe_from_another_thread() {
  DeviceCallCost cost;
  std::thread poller([&] {
    AgentBusy busy;
    cost = measure_device_call_cost();
  });
  poller.join();
  return cost;
}

using DriverGetVersion = int (*)(int*);
DriverGetVersion driver_get_version() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  return driver ? reinterpret_cast<DriverGetVersion>(dlsym(driver, "cuDriverGetVersion")) : nullptr;
}

void check_probe(const Trace& trace, const DeviceCallCost& cost) {
  EXPECT(cost.state == DeviceCallCost::State::Measured);
  EXPECT(cost.ps > 0);
  int recorded = 0;
  for (const HostRecord& h : trace.host) {
    if (h.name == "cuDriverGetVersion") {
      ++recorded;
      EXPECT(h.flags & kFlagCallback);
    }
  }
  EXPECT(recorded == 1);  // the program's one call, none of the probe's 601
  std::printf("CUPTI's cost per traced call: %.1f ns; cuDriverGetVersion recorded %d time(s)\n",
              double(cost.ps) / 1000, recorded);
}

}  // namespace

int main(int argc, char** argv) {
  bool expect_refused = argc > 1 && std::strcmp(argv[1], "refused") == 0;
  SessionOptions options;
  options.cupti.mode = CuptiMode::On;
  start(options);
  set_state(RecordState::Record);
  Work work = run_work();
  const DeviceCallCost probe = expect_refused ? DeviceCallCost{} : probe_from_another_thread();
  if (!expect_refused) {  // the program's own call of the probe's function
    const DriverGetVersion get_version = driver_get_version();
    int version = 0;
    EXPECT(get_version != nullptr && get_version(&version) == 0 && version > 0);
  }
  Trace trace = freeze_window();
  set_state(RecordState::Off);
  std::printf("device backend: %s (CUPTI %s); host records %zu\n", trace.device_backend.c_str(),
              trace.cupti_version.c_str(), trace.host.size());
  EXPECT(find_host(trace, work.launches[0]) != nullptr);
  EXPECT(trace.drops.host_events == 0);
  if (expect_refused) {
    EXPECT(trace.device_backend.rfind("none (CUPTI refused", 0) == 0);
    EXPECT(trace.device.empty());
  } else {
    EXPECT(trace.device_backend == "cupti");
    EXPECT(trace.drops.device_records == 0);
    EXPECT(trace.drops.unmatched_device_records == 0);
    check_device_records(trace, work);
    check_sync(trace, work);
    check_probe(trace, probe);
  }
  std::printf("%s\n", g_failures ? "FAILED" : "passed");
  return g_failures ? 1 : 0;
}
