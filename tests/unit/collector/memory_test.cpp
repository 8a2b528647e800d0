// The allocation ledger (collector/memory_ledger.h) and CUPTI's allocation records
// (collector/cupti_memory.h), fed directly: synthetic CUpti_ActivityMemory4 and
// CUpti_ActivityMemoryPool3 records, and the calls allocation hooks make.
#include <catch2/catch.hpp>

#include <algorithm>

#include "collector/api.h"
#include "collector/clock.h"
#include "collector/memory_ledger.h"

namespace profagent::collector {
namespace {

// Memory profiling on and the session recording, for one test; off again afterwards.
class Recording {
 public:
  Recording() : state_(g_record_state.load()) {
    g_memory_tracking.store(true);
    g_record_state.store(uint8_t(RecordState::Record));
    reset_memory_for_tests();
    configure_memory_records(1000);
    cut_memory(false);  // the window starts now, from zero totals
  }
  ~Recording() {
    set_device_memory_records(false);
    reset_memory_for_tests();
    g_record_state.store(state_);
    g_memory_tracking.store(false);
  }

 private:
  uint8_t state_;
};

MemoryOp op(MemoryOpType type, uint64_t address, uint64_t bytes = 0, MemoryKind kind = MemoryKind::Device) {
  MemoryOp o;
  o.type = type;
  o.kind = kind;
  o.device = is_host_memory(kind) ? kHostDevice : 0;
  o.address = address;
  o.bytes = bytes;
  o.api = intern("cudaMalloc");
  return o;
}

DeviceMemoryEvent device_event(bool release, uint64_t address, uint64_t bytes) {
  DeviceMemoryEvent e;
  e.release = release;
  e.address = address;
  e.bytes = bytes;
  e.ns = clock::monotonic_ns();
  return e;
}

Trace finish(MemoryCut&& cut) {
  clock::add_anchor();
  Trace trace;
  finish_memory(std::move(cut), clock::converter(), trace);
  return trace;
}

CUpti_ActivityMemory4 memory_record(CUpti_ActivityMemoryOperationType type, CUpti_ActivityMemoryKind kind) {
  CUpti_ActivityMemory4 r{};
  r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  r.memoryOperationType = type;
  r.memoryKind = kind;
  r.correlationId = 41;
  r.address = 0x7000;
  r.bytes = 4096;
  r.timestamp = 5000;
  r.deviceId = 1;
  r.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID;
  return r;
}

}  // namespace

TEST_CASE("CUPTI MEMORY2 records become ledger events", "[memory]") {
  DeviceMemoryEvent e;
  auto device = memory_record(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  REQUIRE(memory_event_of(device, 1000, &e));
  CHECK((!e.release && e.kind == MemoryKind::Device && e.device == 1 && e.address == 0x7000 && e.bytes == 4096));
  CHECK(e.ns == 4000);  // CUPTI time minus the clock offset
  CHECK(e.correlation == 41);

  auto pinned = memory_record(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
  REQUIRE(memory_event_of(pinned, 0, &e));
  CHECK((e.release && e.kind == MemoryKind::Pinned && e.device == kHostDevice));

  auto pooled = device;
  pooled.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  pooled.memoryPoolConfig.address = 0x9000;
  pooled.memoryPoolConfig.pool.size = 2 << 20;
  REQUIRE(memory_event_of(pooled, 0, &e));
  CHECK(e.kind == MemoryKind::Pool);
  CHECK((e.pool_address == 0x9000 && e.pool_size == (2u << 20)));

  auto pageable = memory_record(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
  CHECK_FALSE(memory_event_of(pageable, 0, &e));
  auto invalid = memory_record(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  CHECK_FALSE(memory_event_of(invalid, 0, &e));
}

TEST_CASE("CUPTI MEMORY_POOL records give the pool's size", "[memory]") {
  CUpti_ActivityMemoryPool3 r{};
  r.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
  r.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED;
  r.address = 0x9000;
  r.size = 2 << 20;
  r.deviceId = 0;
  r.timestamp = 10;
  PoolReservation pool;
  REQUIRE(pool_reservation_of(r, 0, &pool));
  CHECK((pool.pool == 0x9000 && pool.reserved == (2u << 20) && pool.device == 0));
  r.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED;
  REQUIRE(pool_reservation_of(r, 0, &pool));
  CHECK(pool.reserved == 0);
  r.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_INVALID;
  CHECK_FALSE(pool_reservation_of(r, 0, &pool));
}

TEST_CASE("hooked allocations and their device records are counted once, a library's are added", "[memory]") {
  Recording recording;
  set_device_memory_records(true);
  note_memory(op(MemoryOpType::Alloc, 0xA000, 100), 7);         // cudaMalloc, hooked
  note_device_memory(device_event(false, 0xA000, 100));          // ... and its MEMORY2 record
  note_device_memory(device_event(false, 0xB000, 1000));         // a library's cuMemAlloc
  note_memory(op(MemoryOpType::Free, 0xA000), 8);                // cudaFree, hooked
  note_device_memory(device_event(true, 0xA000, 100));           // ... and its record
  note_device_memory(device_event(true, 0xB000, 1000));          // the library's cuMemFree
  Trace trace = finish(cut_memory(true));
  const auto& records = trace.memory.records;
  REQUIRE(records.size() == 4);
  CHECK((records[0].bytes == 100 && records[0].event_id == 7));  // booked by its record, as the call's
  CHECK((records[1].bytes == 1000 && records[1].event_id == 0));
  CHECK((records[2].bytes == -100 && records[2].event_id == 8));
  CHECK((records[3].bytes == -1000 && records[3].event_id == 0));
  CHECK(records[0].total_allocated == 100);
  CHECK(records[1].total_allocated == 1100);  // replayed in time order
  CHECK(records[2].total_allocated == 1000);
  CHECK(records[3].total_allocated == 0);
  REQUIRE(trace.memory.end.size() == 1);
  CHECK(trace.memory.end[0].allocated == 0);
}

namespace {

// A hooked call that started at `start` (monotonic ns) and ends now.
MemoryOp call_at(MemoryOpType type, uint64_t address, uint64_t bytes, uint64_t start) {
  MemoryOp o = op(type, address, bytes);
  o.call_ns = start;
  return o;
}

DeviceMemoryEvent device_at(bool release, uint64_t address, uint64_t bytes, uint64_t ns) {
  DeviceMemoryEvent e = device_event(release, address, bytes);
  e.ns = ns;
  return e;
}

int64_t peak(const MemoryReport& m) {
  int64_t most = 0;
  for (const MemoryRecord& r : m.records) most = std::max(most, r.total_allocated);
  return most;
}

}  // namespace

TEST_CASE("an address the driver and the runtime take in turn is counted once per allocation", "[memory]") {
  Recording recording;
  set_device_memory_records(true);
  constexpr uint64_t kAt = 0x40000, kMiB = 1 << 20;
  const uint64_t t0 = clock::monotonic_ns() - 1000000;  // every time below is past when booked
  // cuMemAlloc/cuMemFree (no hook), then cudaMalloc/cudaFree at the same address; the device's
  // records of all four are read only after the hooked calls returned.
  note_memory(call_at(MemoryOpType::Alloc, kAt, kMiB, t0 + 30000), 11);
  note_memory(call_at(MemoryOpType::Free, kAt, 0, t0 + 50000), 12);
  note_device_memory(device_at(false, kAt, kMiB, t0 + 10000));  // the driver's allocation
  note_device_memory(device_at(true, kAt, kMiB, t0 + 20000));   // ... and free
  note_device_memory(device_at(false, kAt, kMiB, t0 + 40000));  // cudaMalloc's record
  note_device_memory(device_at(true, kAt, kMiB, t0 + 60000));   // cudaFree's
  Trace trace = finish(cut_memory(true));
  const MemoryReport& m = trace.memory;
  REQUIRE(m.records.size() == 4);
  CHECK(peak(m) == int64_t(kMiB));
  CHECK((m.records[2].event_id == 11 && m.records[3].event_id == 12));  // the hooked pair
  CHECK((m.records[0].event_id == 0 && m.records[1].event_id == 0));    // the driver's pair
  CHECK((m.unknown_frees == 0 && m.live_count == 0));
}

TEST_CASE("the driver freeing the runtime's memory and the runtime the driver's keep one allocation live", "[memory]") {
  Recording recording;
  set_device_memory_records(true);
  constexpr uint64_t kAt = 0x50000, kMiB = 1 << 20;
  const uint64_t t0 = clock::monotonic_ns() - 1000000;  // every time below is past when booked
  note_memory(call_at(MemoryOpType::Alloc, kAt, kMiB, t0 + 10000), 21);  // cudaMalloc
  note_memory(call_at(MemoryOpType::Free, kAt, 0, t0 + 70000), 24);      // cudaFree of the driver's
  note_device_memory(device_at(false, kAt, kMiB, t0 + 15000));           // cudaMalloc's record
  note_device_memory(device_at(true, kAt, kMiB, t0 + 30000));            // cuMemFree of it
  note_device_memory(device_at(false, kAt, kMiB, t0 + 50000));           // cuMemAlloc, same address
  note_device_memory(device_at(true, kAt, kMiB, t0 + 75000));            // cudaFree's record
  Trace trace = finish(cut_memory(true));
  const MemoryReport& m = trace.memory;
  REQUIRE(m.records.size() == 4);
  CHECK(peak(m) == int64_t(kMiB));
  CHECK(m.records[3].event_id == 24);
  CHECK((m.unknown_frees == 0 && m.live_count == 0 && m.end[0].allocated == 0));
}

TEST_CASE("a free read before its allocation's record waits for it (a graph's allocation node)", "[memory]") {
  Recording recording;
  set_device_memory_records(true);
  const uint64_t t0 = clock::monotonic_ns() - 1000000;  // every time below is past when booked
  note_memory(call_at(MemoryOpType::Free, 0x60000, 0, t0 + 50000), 31);  // cudaFree outside the graph
  note_device_memory(device_at(true, 0x60000, 4096, t0 + 60000));        // its record, read first
  note_device_memory(device_at(false, 0x60000, 4096, t0 + 20000));       // the alloc node's, when it ran
  MemoryCut cut = cut_memory(true);
  absorb_device_memory(cut, t0, clock::monotonic_ns());
  Trace trace = finish(std::move(cut));
  const MemoryReport& m = trace.memory;
  REQUIRE(m.records.size() == 2);
  CHECK((m.records[0].bytes == 4096 && m.records[1].bytes == -4096 && m.records[1].event_id == 31));
  CHECK((m.unknown_frees == 0 && m.live_count == 0));
}

TEST_CASE("a free whose allocation never comes is unknown at the join, a call whose record never comes is booked", "[memory]") {
  Recording recording;
  set_device_memory_records(true);
  const uint64_t t0 = clock::monotonic_ns() - 1000000;  // every time below is past when booked
  note_device_memory(device_at(true, 0x70000, 64, t0 + 1000));          // memory made before the agent
  note_memory(call_at(MemoryOpType::Alloc, 0x80000, 256, t0 + 2000), 41);  // its record is dropped
  MemoryCut cut = cut_memory(true);
  absorb_device_memory(cut, t0, clock::monotonic_ns());
  Trace trace = finish(std::move(cut));
  const MemoryReport& m = trace.memory;
  CHECK(m.unknown_frees == 1);
  REQUIRE(m.records.size() == 1);
  CHECK((m.records[0].bytes == 256 && m.records[0].event_id == 41));
  CHECK((m.live_count == 1 && m.live_bytes == 256));
  REQUIRE(m.live.size() == 1);
  CHECK(m.live[0].api == "cudaMalloc");
}

TEST_CASE("a record read while its call is still in flight is claimed by the call", "[memory]") {
  Recording recording;
  set_device_memory_records(true);
  MemoryOp call = op(MemoryOpType::Alloc, 0xA0000, 4096);
  call.call_ns = memory_call_starts();                                             // the hook, before the real call
  note_device_memory(device_at(false, 0xA0000, 4096, clock::monotonic_ns()));      // another thread flushed CUPTI
  note_device_memory(device_at(false, 0xB0000, 64, clock::monotonic_ns()));        // a library's, held too
  note_memory(call, 61);                                                           // the hook books its call
  Trace trace = finish(cut_memory(true));
  const MemoryReport& m = trace.memory;
  REQUIRE(m.records.size() == 2);
  CHECK((m.records[0].event_id == 61 && m.records[0].bytes == 4096));
  CHECK((m.records[1].event_id == 0 && m.records[1].bytes == 64));
  CHECK((m.live_count == 2 && m.end[0].allocated == 4096 + 64));
}

TEST_CASE("a driver allocation read after the cut joins its window and starts the next one", "[memory]") {
  Recording recording;
  set_device_memory_records(true);
  const uint64_t t0 = clock::monotonic_ns() - 1000000;  // every time below is past when booked
  MemoryCut first = cut_memory(true);
  const uint64_t end = clock::monotonic_ns();
  note_device_memory(device_at(false, 0x90000, 1000, t0 + 100));  // made in window 1, read at its join
  absorb_device_memory(first, t0, end);
  Trace one = finish(std::move(first));
  REQUIRE(one.memory.end.size() == 1);
  CHECK(one.memory.end[0].allocated == 1000);
  CHECK((one.memory.live_count == 1 && one.memory.live.size() == 1 && one.memory.live[0].api == "driver"));
  Trace two = finish(cut_memory(true));
  REQUIRE(two.memory.start.size() == 1);
  CHECK(two.memory.start[0].allocated == 1000);
  CHECK(two.memory.end[0].allocated == 1000);
}

TEST_CASE("a zero-byte allocation books nothing, a refused registration is no out-of-memory", "[memory]") {
  Recording recording;
  note_memory(op(MemoryOpType::Alloc, 0, 0), 51);  // cudaMalloc(&p, 0): success, p null
  MemoryOp refused = op(MemoryOpType::Refused, 0xD000, 4096, MemoryKind::Registered);
  refused.error = 712;  // cudaErrorHostMemoryAlreadyRegistered
  note_memory(refused, 52);
  Trace trace = finish(cut_memory(true));
  const MemoryReport& m = trace.memory;
  CHECK((m.live_count == 0 && m.unknown_frees == 0));
  REQUIRE(m.records.size() == 1);
  CHECK((m.records[0].failed && m.records[0].refused && m.records[0].error == 712));
  CHECK(m.records[0].total_allocated == 0);
}

TEST_CASE("bad frees and failed allocations never change the totals", "[memory]") {
  Recording recording;
  note_memory(op(MemoryOpType::Alloc, 0xC000, 64), 1);
  note_memory(op(MemoryOpType::Free, 0xDEAD), 2);                // allocated before the agent loaded
  note_memory(op(MemoryOpType::Free, 0), 3);                     // cudaFree(nullptr)
  note_memory(op(MemoryOpType::FailedFree, 0xBEEF), 4);          // rejected by the runtime
  note_memory(op(MemoryOpType::FailedAlloc, 0, 1ull << 40), 5);  // out of memory
  note_memory(op(MemoryOpType::Free, 0xC000), 6);
  note_memory(op(MemoryOpType::Free, 0xC000), 7);                // already freed
  Trace trace = finish(cut_memory(true));
  const MemoryReport& m = trace.memory;
  CHECK(m.unknown_frees == 3);
  CHECK(m.null_frees == 1);
  REQUIRE(m.records.size() == 3);
  CHECK((m.records[1].failed && m.records[1].bytes == int64_t(1ull << 40) && m.records[1].total_allocated == 64));
  CHECK(m.records[2].total_allocated == 0);
  for (const MemoryRecord& r : m.records) CHECK(r.total_allocated >= 0);
}

TEST_CASE("totals carry across windows and idle time, records are bounded", "[memory]") {
  Recording recording;
  g_record_state.store(uint8_t(RecordState::Off));
  note_memory(op(MemoryOpType::Alloc, 0x1000, 500), 0);               // an idle step: counters only
  note_memory(op(MemoryOpType::Alloc, 0x2000, 300, MemoryKind::Pinned), 0);
  cut_memory(false);
  g_record_state.store(uint8_t(RecordState::Record));
  configure_memory_records(2);
  for (uint64_t i = 0; i < 5; ++i) note_memory(op(MemoryOpType::Alloc, 0x10000 + i, 10), 10 + i);
  Trace trace = finish(cut_memory(true));
  const MemoryReport& m = trace.memory;
  REQUIRE(m.start.size() == 2);
  CHECK((m.start[0].device == kHostDevice && m.start[0].allocated == 300));
  CHECK((m.start[1].device == 0 && m.start[1].allocated == 500));
  CHECK(m.records.size() == 2);
  CHECK(m.dropped_records == 3);
  CHECK(m.records[0].total_allocated == 510);
  CHECK(m.end[1].allocated == 550);  // exact beyond the bound
  CHECK(m.live_count == 7);
  CHECK(m.live.front().bytes == 500);  // largest first
  CHECK(m.live.front().api == "cudaMalloc");
}

TEST_CASE("pool sizes the device reports raise the reserved total", "[memory]") {
  Recording recording;
  note_pool_reservation({0x9000, 0, 1 << 20, 0});
  note_memory(op(MemoryOpType::Alloc, 0x5000, 4096, MemoryKind::Pool), 1);
  note_memory(op(MemoryOpType::Alloc, 0x6000, 100), 2);
  Trace trace = finish(cut_memory(true));
  REQUIRE(trace.memory.records.size() == 2);
  CHECK(trace.memory.records[0].total_allocated == 4096);
  CHECK(trace.memory.records[0].total_reserved == (1 << 20));
  CHECK(trace.memory.records[1].total_reserved == (1 << 20) + 100);
}

}  // namespace profagent::collector
