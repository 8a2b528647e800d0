// The CUPTI API callback path (collector/cupti_callbacks.h) driven with synthetic callback
// data, as CUPTI calls it: what it records, what it leaves to the hooks, and the join of its
// records with device records by CUPTI correlation id.
#include <catch2/catch.hpp>

#include <algorithm>

#include "collector/cupti_callbacks.h"
#include "collector/cupti_param_bytes.h"
#include "collector/join.h"
#include "collector/names.h"
#include "collector/session.h"
#include "test_util.h"

using namespace profagent;
using namespace profagent::collector;

namespace {

// One API call as CUPTI reports it: enter, (nested calls), exit, sharing correlationData.
class FakeCall {
 public:
  FakeCall(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* name, uint32_t correlation,
           int32_t result = 0, const void* params = nullptr)
      : domain_(domain), cbid_(cbid), result_(result) {
    data_.functionName = name;
    data_.functionParams = params;
    data_.correlationId = correlation;
    data_.correlationData = &correlation_data_;
    data_.callbackSite = CUPTI_API_ENTER;
    on_api_callback(nullptr, domain_, cbid_, &data_);
  }
  ~FakeCall() {
    data_.callbackSite = CUPTI_API_EXIT;
    data_.functionReturnValue = &result_;
    on_api_callback(nullptr, domain_, cbid_, &data_);
  }

 private:
  CUpti_CallbackDomain domain_;
  CUpti_CallbackId cbid_;
  int32_t result_;
  uint64_t correlation_data_ = 0;
  CUpti_CallbackData data_{};
};

constexpr auto kDriver = CUPTI_CB_DOMAIN_DRIVER_API;
constexpr auto kRuntime = CUPTI_CB_DOMAIN_RUNTIME_API;

// This test's callback events: flagged and with a correlation id in [base, base + 100).
std::vector<HostEvent> drain_callback_events(uint32_t base) {
  std::vector<HostEvent> found;
  for (const ThreadEvents& thread : drain_all().threads) {
    for (const HostEvent& e : thread.events) {
      if ((e.flags & kFlagCallback) && e.arg0 >= base && e.arg0 < base + 100) found.push_back(e);
    }
  }
  return found;
}

std::string name_of(NameId id) { return names_snapshot().at(id); }

struct Recording {
  Recording() { set_state(RecordState::Record); }
  ~Recording() { set_state(RecordState::Off); }
};

}  // namespace

TEST_CASE("callbacks: a call no hook saw is one host event named by its API", "[callbacks]") {
  Recording recording;
  { FakeCall launch(kDriver, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel", 1001); }
  { FakeCall copy(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy_v3020", 1002, 1); }
  const auto events = drain_callback_events(1000);
  REQUIRE(events.size() == 2);
  CHECK(name_of(events[0].name) == "cuLaunchKernel");
  CHECK(events[0].kind == uint8_t(EventKind::Launch));
  CHECK((events[0].flags & (kFlagDriverApi | kFlagAsync)) == (kFlagDriverApi | kFlagAsync));
  CHECK(events[0].arg0 == 1001);
  CHECK(events[0].end >= events[0].start);
  CHECK(name_of(events[1].name) == "cudaMemcpy");  // the ABI suffix is not part of the name
  CHECK(events[1].kind == uint8_t(EventKind::Memcpy));
  CHECK((events[1].flags & kFlagDriverApi) == 0);
  CHECK((events[1].flags & kFlagFailed) != 0);
  CHECK(events[1].result == 1);
}

TEST_CASE("callbacks: copies, sets and allocations carry their byte count as hooked calls do", "[callbacks]") {
  Recording recording;
  // cuMemcpyHtoDAsync_v2_params and cuMemsetD32Async_params: {pointer, pointer-sized, size_t, ...}.
  struct { uint64_t dst; const void* src; size_t bytes; void* stream; } copy{0, nullptr, 4096, nullptr};
  struct { uint64_t dst; unsigned value; size_t count; void* stream; } set{0, 0, 100, nullptr};
  { FakeCall call(kDriver, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync_v2", 1301, 0, &copy); }
  { FakeCall call(kDriver, CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async, "cuMemsetD32Async", 1302, 0, &set); }
  { FakeCall call(kDriver, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync_v2", 1303); }  // no params
  const auto events = drain_callback_events(1300);
  REQUIRE(events.size() == 3);
  CHECK(events[0].arg1 == 4096);
  CHECK((events[0].flags & (kFlagAsync | kMemcpyKindMask)) == (kFlagAsync | 1));  // HtoD
  CHECK(events[1].arg1 == 400);  // 100 32-bit elements
  CHECK(events[2].arg1 == 0);
  CHECK(byte_count_field("cudaMemcpyAsync_ptsz").offset == byte_count_field("cudaMemcpyAsync").offset);
  CHECK(byte_count_field("cuLaunchKernel").offset == -1);
}

TEST_CASE("callbacks: calls a hook has, the agent's own and nested ones are not recorded", "[callbacks]") {
  Recording recording;
  {
    RuntimeGuard hook;  // a hook recording its call: the runtime reports it to CUPTI too
    FakeCall call(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel", 1101);
  }
  {
    HookForwarding hook;  // a hook forwarding (step markers while idle, first calls)
    FakeCall call(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel", 1102);
  }
  {
    AgentBusy agent;
    FakeCall call(kDriver, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, "cuCtxSynchronize", 1103);
  }
  {
    FakeCall outer(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy", 1104);
    FakeCall inner(kDriver, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2", 1105);
  }
  { FakeCall plumbing(kRuntime, CUPTI_RUNTIME_TRACE_CBID___cudaRegisterFunction_v13000, "__cudaRegisterFunction", 1106); }
  const auto events = drain_callback_events(1100);
  REQUIRE(events.size() == 1);
  CHECK(events[0].arg0 == 1104);
}

// One rule with the hooks (collector/api.h): device queries are recorded, the calls Kineto
// leaves out of its traces are not, also in their ABI-suffixed CUPTI spelling.
TEST_CASE("callbacks: the calls torch.profiler leaves out are left out, device queries are not", "[callbacks]") {
  Recording recording;
  { FakeCall call(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020, "cudaSetDevice_v3020", 1401); }
  { FakeCall call(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020, "cudaGetLastError_v3020", 1402); }
  { FakeCall call(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaEventCreate_v3020, "cudaEventCreate_v3020", 1403); }
  { FakeCall call(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020, "cudaGetDeviceCount_v3020", 1404); }
  { FakeCall call(kDriver, CUPTI_DRIVER_TRACE_CBID_cuCtxSetCurrent, "cuCtxSetCurrent", 1405); }
  const auto events = drain_callback_events(1400);
  REQUIRE(events.size() == 2);
  CHECK(name_of(events[0].name) == "cudaGetDeviceCount");
  CHECK(name_of(events[1].name) == "cuCtxSetCurrent");  // the rule is about runtime calls
  CHECK(left_out_of_traces("cudaGetDevice"));
  CHECK(left_out_of_traces("cudaEventDestroy"));
  CHECK_FALSE(left_out_of_traces("cudaEventRecord"));
  CHECK_FALSE(left_out_of_traces("cudaGetDeviceProperties"));
}

TEST_CASE("callbacks: nothing is recorded while the session does not record", "[callbacks]") {
  set_state(RecordState::Off);
  { FakeCall launch(kDriver, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel", 1201); }
  CHECK(drain_callback_events(1200).empty());
}

TEST_CASE("join: callback records link their device work by correlation, once", "[callbacks][join]") {
  JoinInput input;
  input.names = {"", "cuLaunchKernel"};
  HostEvent launch{};
  launch.id = 7, launch.start = 100, launch.end = 200, launch.name = 1, launch.arg0 = 42;
  launch.kind = uint8_t(EventKind::Launch), launch.flags = kFlagCallback | kFlagDriverApi | kFlagAsync;
  ThreadEvents thread;
  thread.tid = 5, thread.pid = 1, thread.events = {launch};
  input.threads.push_back(thread);
  DeviceRecord kernel;
  kernel.kind = DeviceKind::Kernel, kernel.correlation = 42, kernel.start_ns = 300, kernel.end_ns = 310;
  kernel.name = "scale";
  DeviceRecord driver = kernel;  // CUPTI's DRIVER activity record of the same call
  driver.kind = DeviceKind::DriverApi, driver.name = "cuLaunchKernel", driver.start_ns = 100, driver.end_ns = 200;
  driver.tid = 5, driver.pid = 1;
  input.device = {kernel, driver};
  Trace trace;
  const JoinCounts counts = join(std::move(input), trace);
  CHECK(counts.unmatched == 0);
  REQUIRE(trace.host.size() == 1);  // the DRIVER record did not become a second row
  CHECK(trace.host[0].correlation == 42);
  CHECK(trace.host[0].arg0 == 0);  // arg1 (the byte count of copies) moved to arg0: none here
  REQUIRE(trace.device.size() == 1);
  CHECK(trace.device[0].host == 0);
}
