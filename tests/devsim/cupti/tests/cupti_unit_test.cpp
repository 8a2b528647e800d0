// Unit tests of the simulated CUPTI, driving its devsim::Tracer through a fake device and
// reading records back through the public CUPTI API, as a client would.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "fake_device.h"
#include "unit_client.h"

#include "activity_buffers.h"
#include "clock_domain.h"
#include "faults.h"
#include "records.h"
#include "session.h"

#include <cupti.h>

#include <cstdlib>
#include <ctime>

using unit_client::as;
using unit_client::kind_of;

namespace {

constexpr uint32_t kLaunchCbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;

// A fresh CUPTI with the unit client's buffer callbacks.
struct CuptiFixture {
  CuptiFixture() {
    unit_client::take();
    unit_client::g_decline = false;
    unit_client::g_max_records = 0;
    unit_client::g_misalign = 0;
    REQUIRE(cuptiActivityRegisterCallbacks(unit_client::request, unit_client::complete) == CUPTI_SUCCESS);
  }
  ~CuptiFixture() { cuptiFinalize(); }
};

// One runtime call that launches one kernel, reported as the device model reports it.
void launch(uint32_t correlation_id, const char* kernel) {
  devsim::Tracer* tracer = fake_device::installed();
  REQUIRE(tracer != nullptr);
  devsim::ApiCall call = fake_device::runtime_call(correlation_id, kLaunchCbid, "cudaLaunchKernel");
  call.symbol_name = kernel;
  tracer->on_api_enter(call);
  call.end_ns = call.start_ns + 4000;
  tracer->on_api_exit(call);
  tracer->on_op_done(fake_device::kernel_op(correlation_id, kernel));
}

}  // namespace

TEST_CASE("kernel records carry the launch's fields in the CUDA 13 struct", "[cupti][records]") {
  devsim::OpRecord op = fake_device::kernel_op(17, "_Z6vecAddPfS_S_i");
  op.graph_id = 3;
  op.graph_node_id = 99;
  const auto time = [](uint64_t t) { return t + 1000; };
  profagent::devsim_cupti::KernelOptions options;
  const CUpti_ActivityKernel10 r = profagent::devsim_cupti::kernel_record(op, options, time);
  CHECK(r.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  CHECK(r.correlationId == 17);
  CHECK(r.start == op.start_ns + 1000);
  CHECK(r.end == op.end_ns + 1000);
  CHECK(r.completed == r.end);
  CHECK(r.queued == 0);  // latency timestamps are off by default, as in CUPTI
  CHECK(r.streamId == 13);
  CHECK((r.gridX == 64 && r.gridY == 2 && r.gridZ == 1));
  CHECK((r.blockX == 256 && r.blockY == 1 && r.blockZ == 1));
  CHECK(r.registersPerThread == 32);
  CHECK(r.staticSharedMemory == 1024);
  CHECK(r.dynamicSharedMemory == 512);
  CHECK(std::string(r.name) == "_Z6vecAddPfS_S_i");
  CHECK(r.name != op.name);  // devsim's own copy, valid after the kernel is unregistered
  CHECK(r.graphId == 3);
  CHECK(r.graphNodeId == 99);

  options.latency_timestamps = true;
  options.kind = CUPTI_ACTIVITY_KIND_KERNEL;
  const CUpti_ActivityKernel10 serial = profagent::devsim_cupti::kernel_record(op, options, time);
  CHECK(serial.kind == CUPTI_ACTIVITY_KIND_KERNEL);
  CHECK(serial.queued == op.queued_ns + 1000);
  CHECK(serial.submitted == op.submitted_ns + 1000);
}

TEST_CASE("memcpy and API records", "[cupti][records]") {
  const auto identity = [](uint64_t t) { return t; };
  const CUpti_ActivityMemcpy6 copy =
      profagent::devsim_cupti::memcpy_record(fake_device::memcpy_op(5, 4096), identity);
  CHECK(copy.kind == CUPTI_ACTIVITY_KIND_MEMCPY);
  CHECK(copy.bytes == 4096);
  CHECK(copy.copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
  CHECK(copy.flags == CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC);
  CHECK(copy.correlationId == 5);
  CHECK(copy.copyCount == 1);

  devsim::ApiCall call = fake_device::runtime_call(8, kLaunchCbid, "cudaLaunchKernel");
  call.end_ns = call.start_ns + 10;
  call.result = 1;
  const CUpti_ActivityAPI api = profagent::devsim_cupti::api_record(call, 77, identity);
  CHECK(api.kind == CUPTI_ACTIVITY_KIND_RUNTIME);
  CHECK(api.cbid == kLaunchCbid);
  CHECK(api.correlationId == 8);
  CHECK(api.threadId == 77);
  CHECK(api.processId == 4242);
  CHECK(api.returnValue == 1);
  CHECK(api.end - api.start == 10);
}

TEST_CASE("cuptiActivityGetNextRecord walks an unaligned buffer and stops at its end", "[cupti][buffer]") {
  alignas(8) uint8_t storage[512] = {};
  uint8_t* buffer = storage + 3;  // the client's buffer need not be aligned; records are
  const size_t first = profagent::devsim_cupti::first_record_offset(buffer);
  CHECK(first == 5);
  const auto ext = profagent::devsim_cupti::external_correlation_record(
      CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 9, 1);
  CUpti_ActivityAPI api{};
  api.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  std::memcpy(buffer + first, &ext, sizeof(ext));
  std::memcpy(buffer + first + sizeof(ext), &api, sizeof(api));
  const size_t valid = first + sizeof(ext) + sizeof(api);

  CUpti_Activity* record = nullptr;
  REQUIRE(cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS);
  CHECK(record->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  REQUIRE(cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS);
  CHECK(record->kind == CUPTI_ACTIVITY_KIND_DRIVER);
  CHECK(cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_ERROR_MAX_LIMIT_REACHED);
  // A record cut short by validSize is incomplete.
  record = nullptr;
  REQUIRE(cuptiActivityGetNextRecord(buffer, valid - 8, &record) == CUPTI_SUCCESS);
  CHECK(cuptiActivityGetNextRecord(buffer, valid - 8, &record) == CUPTI_ERROR_INVALID_KIND);
  CHECK(cuptiActivityGetNextRecord(nullptr, valid, &record) == CUPTI_ERROR_INVALID_PARAMETER);
}

TEST_CASE("enable answers per kind as the header documents", "[cupti][activity]") {
  CuptiFixture fixture;
  CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS);
  CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) == CUPTI_SUCCESS);
  CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_PC_SAMPLING) == CUPTI_ERROR_NOT_COMPATIBLE);
  CHECK(cuptiActivityEnable(static_cast<CUpti_ActivityKind>(9999)) == CUPTI_ERROR_INVALID_KIND);
  CHECK(cuptiGetLastError() == CUPTI_ERROR_INVALID_KIND);
  CHECK(cuptiGetLastError() == CUPTI_SUCCESS);
  CHECK(fake_device::installed() != nullptr);
}

TEST_CASE("records reach the client on CUPTI's thread, full buffers first, partial ones when forced",
          "[cupti][buffer]") {
  CuptiFixture fixture;
  unit_client::g_max_records = 2;  // two records per buffer: the third launch fills a second one
  unit_client::g_misalign = 4;
  REQUIRE(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS);
  for (uint32_t id = 1; id <= 3; ++id) launch(id, "_Z4stepv");

  REQUIRE(cuptiActivityFlushAll(0) == CUPTI_SUCCESS);
  auto unforced = unit_client::take();
  CHECK(unforced.records.size() == 2);  // only the full buffer
  REQUIRE(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) == CUPTI_SUCCESS);
  auto forced = unit_client::take();
  REQUIRE(forced.records.size() == 1);
  CHECK(as<CUpti_ActivityKernel10>(forced.records[0]).correlationId == 3);
  for (const auto& id : forced.completion_threads) CHECK(id != std::this_thread::get_id());
}

TEST_CASE("a declined buffer request drops records and counts them", "[cupti][buffer]") {
  CuptiFixture fixture;
  unit_client::g_decline = true;
  REQUIRE(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS);
  launch(1, "_Z1av");
  launch(2, "_Z1bv");
  size_t dropped = 0;
  REQUIRE(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS);
  CHECK(dropped == 2);
  REQUIRE(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS);
  CHECK(dropped == 0);  // the count resets on read
}

TEST_CASE("external correlation records precede API records and name the pushed id", "[cupti][external]") {
  CuptiFixture fixture;
  REQUIRE(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) == CUPTI_SUCCESS);
  REQUIRE(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME) == CUPTI_SUCCESS);
  REQUIRE(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 500) == CUPTI_SUCCESS);
  REQUIRE(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 501) == CUPTI_SUCCESS);
  launch(40, "_Z1cv");
  uint64_t popped = 0;
  REQUIRE(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &popped) == CUPTI_SUCCESS);
  CHECK(popped == 501);
  launch(41, "_Z1cv");
  REQUIRE(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &popped) == CUPTI_SUCCESS);
  CHECK(popped == 500);
  CHECK(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &popped) == CUPTI_ERROR_QUEUE_EMPTY);
  CHECK(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_INVALID, 1) == CUPTI_ERROR_INVALID_PARAMETER);
  launch(42, "_Z1cv");  // nothing pushed: no external record

  REQUIRE(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) == CUPTI_SUCCESS);
  const auto got = unit_client::take();
  REQUIRE(got.records.size() == 5);
  const auto ext0 = as<CUpti_ActivityExternalCorrelation>(got.records[0]);
  CHECK(ext0.kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  CHECK(ext0.externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1);
  CHECK(ext0.externalId == 501);
  CHECK(ext0.correlationId == 40);
  CHECK(as<CUpti_ActivityAPI>(got.records[1]).correlationId == 40);
  CHECK(as<CUpti_ActivityExternalCorrelation>(got.records[2]).externalId == 500);
  CHECK(as<CUpti_ActivityExternalCorrelation>(got.records[2]).correlationId == 41);
  CHECK(kind_of(got.records[4]) == CUPTI_ACTIVITY_KIND_RUNTIME);
  CHECK(as<CUpti_ActivityAPI>(got.records[4]).correlationId == 42);
}

TEST_CASE("external correlation records come only with the API records of the call's domain", "[cupti][external]") {
  // As measured with NVIDIA's CUPTI 13.0 on an H100: with EXTERNAL_CORRELATION alone, or with
  // only DRIVER records, a pushed id names no runtime call, so its kernel stays unlinked.
  CuptiFixture fixture;
  REQUIRE(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) == CUPTI_SUCCESS);
  REQUIRE(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, 7) == CUPTI_SUCCESS);
  launch(50, "_Z1cv");
  REQUIRE(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER) == CUPTI_SUCCESS);
  launch(51, "_Z1cv");
  REQUIRE(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME) == CUPTI_SUCCESS);
  launch(52, "_Z1cv");
  uint64_t popped = 0;
  REQUIRE(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &popped) == CUPTI_SUCCESS);
  REQUIRE(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) == CUPTI_SUCCESS);
  std::vector<uint32_t> linked;
  for (const auto& record : unit_client::take().records) {
    if (kind_of(record) != CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) continue;
    linked.push_back(as<CUpti_ActivityExternalCorrelation>(record).correlationId);
  }
  CHECK(linked == std::vector<uint32_t>{52});
}

namespace {
struct SeenCallback {
  CUpti_ApiCallbackSite site;
  uint32_t correlation_id;
  uint64_t correlation_data_on_exit;
  std::string function;
  std::string symbol;
  int32_t result;
};
std::vector<SeenCallback> g_seen;

void CUPTIAPI record_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data) {
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
  SeenCallback seen{cb->callbackSite, cb->correlationId, 0, cb->functionName,
                    cb->symbolName ? cb->symbolName : "", 0};
  if (cb->callbackSite == CUPTI_API_ENTER) *cb->correlationData = 1000 + cb->correlationId;
  if (cb->callbackSite == CUPTI_API_EXIT) {
    seen.correlation_data_on_exit = *cb->correlationData;
    seen.result = *static_cast<const int32_t*>(cb->functionReturnValue);
  }
  g_seen.push_back(seen);
}
}  // namespace

TEST_CASE("API callbacks carry correlation ids and a per-call correlationData slot", "[cupti][callbacks]") {
  CuptiFixture fixture;
  g_seen.clear();
  CUpti_SubscriberHandle subscriber = nullptr;
  REQUIRE(cuptiSubscribe(&subscriber, record_callback, nullptr) == CUPTI_SUCCESS);
  CUpti_SubscriberHandle second = nullptr;
  CHECK(cuptiSubscribe(&second, record_callback, nullptr) == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  REQUIRE(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, kLaunchCbid) == CUPTI_SUCCESS);
  uint32_t state = 0;
  REQUIRE(cuptiGetCallbackState(&state, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, kLaunchCbid) == CUPTI_SUCCESS);
  CHECK(state == 1);
  launch(70, "_Z6kernelv");
  REQUIRE(g_seen.size() == 2);
  CHECK(g_seen[0].site == CUPTI_API_ENTER);
  CHECK(g_seen[0].correlation_id == 70);
  CHECK(g_seen[0].function == "cudaLaunchKernel");
  CHECK(g_seen[0].symbol == "_Z6kernelv");
  CHECK(g_seen[1].site == CUPTI_API_EXIT);
  CHECK(g_seen[1].correlation_data_on_exit == 1070);
  REQUIRE(cuptiUnsubscribe(subscriber) == CUPTI_SUCCESS);
  CHECK(cuptiSubscribe(&second, record_callback, nullptr) == CUPTI_SUCCESS);
  const char* name = nullptr;
  REQUIRE(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, kLaunchCbid, &name) == CUPTI_SUCCESS);
  CHECK(std::string(name) == "cudaLaunchKernel_v7000");
}

namespace {
uint64_t g_client_epoch = 0;
// A client clock in another domain: ns since the client's own epoch, shifted by 1 s.
uint64_t CUPTIAPI client_clock() { return devsim::now_ns() - g_client_epoch + 1'000'000'000ull; }
}  // namespace

TEST_CASE("timestamps follow the client's clock once registered, CLOCK_REALTIME before", "[cupti][clock]") {
  profagent::devsim_cupti::ClockDomain clock(&devsim::now_ns);
  timespec real{};
  clock_gettime(CLOCK_REALTIME, &real);
  const uint64_t realtime = static_cast<uint64_t>(real.tv_sec) * 1'000'000'000ull + real.tv_nsec;
  const uint64_t default_now = clock.now();
  const int64_t skew = static_cast<int64_t>(default_now - realtime);
  CHECK(std::llabs(skew) < 50'000'000);  // the CLOCK_REALTIME domain (offset sampled at start)
  CHECK(default_now - devsim::now_ns() > 1'000'000'000ull);  // not CLOCK_MONOTONIC

  g_client_epoch = devsim::now_ns();
  clock.use_client_clock(client_clock);
  const uint64_t mono = devsim::now_ns();
  const uint64_t before = client_clock();
  const uint64_t mapped = clock.to_domain(mono);
  const uint64_t after = client_clock();
  // The offset is sampled by pairing two clock reads, so it errs by up to one clock call either
  // way (seen: 11 ns past `after` at load 8): bounded far below 100 us on both sides.
  CHECK(mapped + 100'000 >= before);
  CHECK(mapped <= after + 100'000);
}

TEST_CASE("fault knobs parse as documented", "[cupti][faults]") {
  using namespace profagent::devsim_cupti;
  const Faults busy = parse_faults("busy", "3", "cuptiActivityEnable=CUPTI_ERROR_NOT_INITIALIZED,cuptiSubscribe=39");
  CHECK(busy.availability == Availability::Busy);
  CHECK(busy.drop_every == 3);
  CHECK(busy.injected("cuptiActivityEnable") == CUPTI_ERROR_NOT_INITIALIZED);
  CHECK(busy.injected("cuptiSubscribe") == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  CHECK(busy.injected("cuptiFinalize") == CUPTI_SUCCESS);
  CHECK(parse_faults("unavailable", nullptr, nullptr).availability_error() == CUPTI_ERROR_NOT_INITIALIZED);
  CHECK(parse_faults("noperm", nullptr, nullptr).availability_error() == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
  CHECK(parse_faults(nullptr, nullptr, nullptr).availability_error() == CUPTI_SUCCESS);
}

TEST_CASE("a busy CUPTI refuses subscribers and kernel kinds, drop-every drops and counts",
          "[cupti][faults]") {
  using namespace profagent::devsim_cupti;
  const Faults faults = parse_faults("busy", "2", nullptr);
  bool (*no_device)(devsim::Tracer*) = [](devsim::Tracer*) { return true; };
  Session session(DeviceLink{no_device, &devsim::now_ns}, faults);
  CUpti_SubscriberHandle handle = nullptr;
  CHECK(session.subscribe(&handle, record_callback, nullptr) == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  CHECK(session.enable_kind(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  CHECK(session.enable_kind(CUPTI_ACTIVITY_KIND_KERNEL) == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  REQUIRE(session.enable_kind(CUPTI_ACTIVITY_KIND_MEMCPY) == CUPTI_SUCCESS);

  unit_client::take();
  unit_client::g_decline = false;
  unit_client::g_max_records = 0;
  session.buffers().set_callbacks(unit_client::request, unit_client::complete);
  for (uint32_t id = 1; id <= 6; ++id) session.on_op_done(fake_device::memcpy_op(id, 64));
  session.buffers().flush(true);
  const auto got = unit_client::take();
  REQUIRE(got.records.size() == 3);
  CHECK(as<CUpti_ActivityMemcpy6>(got.records[0]).correlationId == 1);
  CHECK(as<CUpti_ActivityMemcpy6>(got.records[1]).correlationId == 3);
  CHECK(session.buffers().take_dropped() == 3);
  session.finalize();
}

TEST_CASE("an operation is traced if its kind was on when it was queued", "[cupti][activity]") {
  using namespace profagent::devsim_cupti;
  const Faults faults = parse_faults(nullptr, nullptr, nullptr);
  bool (*no_device)(devsim::Tracer*) = [](devsim::Tracer*) { return true; };
  Session session(DeviceLink{no_device, &devsim::now_ns}, faults);
  unit_client::take();
  unit_client::g_decline = false;
  unit_client::g_max_records = 0;
  session.buffers().set_callbacks(unit_client::request, unit_client::complete);
  // Each switch and each queueing at a later devsim time than the one before.
  auto later = [] {
    const uint64_t start = devsim::now_ns();
    while (devsim::now_ns() == start) {
    }
  };
  REQUIRE(session.enable_kind(CUPTI_ACTIVITY_KIND_MEMCPY) == CUPTI_SUCCESS);
  later();
  const devsim::OpRecord queued_while_on = fake_device::memcpy_op(1, 64);
  later();
  REQUIRE(session.disable_kind(CUPTI_ACTIVITY_KIND_MEMCPY) == CUPTI_SUCCESS);
  later();
  const devsim::OpRecord queued_while_off = fake_device::memcpy_op(2, 64);
  session.on_op_done(queued_while_on);  // ends after the switch-off: still reported
  later();
  REQUIRE(session.enable_kind(CUPTI_ACTIVITY_KIND_MEMCPY) == CUPTI_SUCCESS);
  session.on_op_done(queued_while_off);  // ends after the switch-on: never reported
  session.buffers().flush(true);
  const auto got = unit_client::take();
  REQUIRE(got.records.size() == 1);
  CHECK(as<CUpti_ActivityMemcpy6>(got.records[0]).correlationId == 1);
  session.finalize();
}

TEST_CASE("KERNEL alone gives serial-kind kernel records", "[cupti][activity]") {
  CuptiFixture fixture;
  REQUIRE(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_KERNEL) == CUPTI_SUCCESS);
  launch(90, "_Z6serialv");
  REQUIRE(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_KERNEL) == CUPTI_SUCCESS);
  launch(91, "_Z6serialv");  // disabled: no record
  REQUIRE(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) == CUPTI_SUCCESS);
  const auto got = unit_client::take();
  REQUIRE(got.records.size() == 1);
  CHECK(kind_of(got.records[0]) == CUPTI_ACTIVITY_KIND_KERNEL);
  CHECK(as<CUpti_ActivityKernel10>(got.records[0]).correlationId == 90);
}

namespace {
bool g_finalize_on_exit = false;
void CUPTIAPI finalize_on_exit(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void* data) {
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  // Kineto's pattern: detach CUPTI from an API exit callback rather than from an arbitrary thread.
  if (cb->callbackSite == CUPTI_API_EXIT && g_finalize_on_exit) cuptiFinalize();
}
}  // namespace

TEST_CASE("cuptiFinalize from an exit callback detaches everything, CUPTI can start again",
          "[cupti][lifecycle]") {
  CuptiFixture fixture;
  CUpti_SubscriberHandle subscriber = nullptr;
  REQUIRE(cuptiSubscribe(&subscriber, finalize_on_exit, nullptr) == CUPTI_SUCCESS);
  REQUIRE(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API) == CUPTI_SUCCESS);
  REQUIRE(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS);
  g_finalize_on_exit = true;
  launch(100, "_Z1dv");  // its exit callback finalizes; the kernel record arrives after
  g_finalize_on_exit = false;
  CHECK(fake_device::installed() == nullptr);
  CHECK(unit_client::take().records.empty());
  CHECK(cuptiActivityFlushAll(0) == CUPTI_ERROR_INVALID_OPERATION);  // callbacks forgotten

  REQUIRE(cuptiActivityRegisterCallbacks(unit_client::request, unit_client::complete) == CUPTI_SUCCESS);
  REQUIRE(cuptiSubscribe(&subscriber, finalize_on_exit, nullptr) == CUPTI_SUCCESS);
  REQUIRE(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS);
  launch(101, "_Z1dv");
  REQUIRE(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) == CUPTI_SUCCESS);
  const auto got = unit_client::take();
  REQUIRE(got.records.size() == 1);
  CHECK(as<CUpti_ActivityKernel10>(got.records[0]).correlationId == 101);
}

TEST_CASE("per-callback-id API records: EnableRuntimeApi alone, and the RUNTIME kind overriding it",
          "[cupti][activity]") {
  CuptiFixture fixture;
  constexpr uint32_t kMallocCbid = CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020;
  REQUIRE(cuptiActivityEnableRuntimeApi(kLaunchCbid, 1) == CUPTI_SUCCESS);
  devsim::Tracer* tracer = fake_device::installed();
  REQUIRE(tracer != nullptr);
  auto call = [&](uint32_t id, uint32_t cbid) {
    devsim::ApiCall c = fake_device::runtime_call(id, cbid, "cudaSomething");
    tracer->on_api_enter(c);
    c.end_ns = c.start_ns + 1;
    tracer->on_api_exit(c);
  };
  call(1, kLaunchCbid);
  call(2, kMallocCbid);  // not enabled
  REQUIRE(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME) == CUPTI_SUCCESS);
  REQUIRE(cuptiActivityEnableRuntimeApi(kLaunchCbid, 0) == CUPTI_SUCCESS);
  call(3, kLaunchCbid);  // switched off after the kind
  call(4, kMallocCbid);
  CHECK(cuptiActivityEnableRuntimeApi(100000, 1) == CUPTI_ERROR_INVALID_PARAMETER);
  REQUIRE(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) == CUPTI_SUCCESS);
  const auto got = unit_client::take();
  REQUIRE(got.records.size() == 2);
  CHECK(as<CUpti_ActivityAPI>(got.records[0]).correlationId == 1);
  CHECK(as<CUpti_ActivityAPI>(got.records[1]).correlationId == 4);
}
