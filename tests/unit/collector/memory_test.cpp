// The allocation ledger (collector/memory_ledger.h) and CUPTI's allocation records
// (collector/cupti_memory.h), fed directly: synthetic CUpti_ActivityMemory4 and
// CUpti_ActivityMemoryPool3 records, and the calls allocation hooks make.
#include <catch2/catch.hpp>

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

TEST_CASE("hooked allocations and their device echoes are counted once; a library's are added", "[memory]") {
  Recording recording;
  set_device_memory_records(true);
  note_memory(op(MemoryOpType::Alloc, 0xA000, 100), 7);         // cudaMalloc, hooked
  note_device_memory(device_event(false, 0xA000, 100));          // ... and its MEMORY2 echo
  note_device_memory(device_event(false, 0xB000, 1000));         // a library's cuMemAlloc
  note_memory(op(MemoryOpType::Free, 0xA000), 8);                // cudaFree, hooked
  note_device_memory(device_event(true, 0xA000, 100));           // ... and its echo
  note_device_memory(device_event(true, 0xB000, 1000));          // the library's cuMemFree
  Trace trace = finish(cut_memory(true));
  const auto& records = trace.memory.records;
  REQUIRE(records.size() == 4);
  CHECK(records[0].bytes == 100);
  CHECK((records[1].bytes == 1000 && records[1].from_device));
  CHECK(records[2].bytes == -100);
  CHECK((records[3].bytes == -1000 && records[3].from_device));
  CHECK(records[0].total_allocated == 100);
  CHECK(records[1].total_allocated == 1100);  // replayed in time order
  CHECK(records[2].total_allocated == 1000);
  CHECK(records[3].total_allocated == 0);
  REQUIRE(trace.memory.end.size() == 1);
  CHECK(trace.memory.end[0].allocated == 0);
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

TEST_CASE("totals carry across windows and idle time; records are bounded", "[memory]") {
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
