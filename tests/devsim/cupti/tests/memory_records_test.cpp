// Unit tests of the memory record kinds of the simulated CUPTI (MEMORY2, MEMORY_POOL, MEMCPY2)
// on a private session: the record builders' fields, and the kinds switched while tracing.
#include <catch2/catch.hpp>

#include "fake_device.h"
#include "unit_client.h"

#include "faults.h"
#include "records.h"
#include "session.h"

using unit_client::as;
using unit_client::kind_of;

namespace {

using namespace profagent::devsim_cupti;

devsim::MemoryRecord pool_allocation(uint32_t correlation_id) {
  devsim::MemoryRecord m{};
  m.operation = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  m.memory_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.address = 0x7f0000001000;
  m.bytes = 4096;
  m.timestamp_ns = 1000;
  m.correlation_id = correlation_id;
  m.device_id = 1;
  m.context_id = 2;
  m.stream_id = 13;
  m.is_async = 1;
  m.pool_type = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  m.pool_address = 0x5000;
  m.pool_release_threshold = 1 << 20;
  m.pool_size = 8192;
  m.pool_utilized_size = 4096;
  return m;
}

devsim::OpRecord peer_copy_op(uint32_t correlation_id) {
  devsim::OpRecord op = fake_device::memcpy_op(correlation_id, 1 << 20);
  op.copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  op.src_device_id = 0;
  op.dst_device_id = 1;
  return op;
}

struct PrivateSession {
  Faults faults = parse_faults(nullptr, nullptr, nullptr);
  Session session{DeviceLink{[](devsim::Tracer*) { return true; }, &devsim::now_ns}, faults};
  PrivateSession() {
    unit_client::take();
    unit_client::g_decline = false;
    unit_client::g_max_records = 0;
    session.buffers().set_callbacks(unit_client::request, unit_client::complete);
  }
  ~PrivateSession() { session.finalize(); }
  unit_client::Collected flush() {
    session.buffers().flush(true);
    return unit_client::take();
  }
};

}  // namespace

TEST_CASE("MEMORY2 records carry every field the model reports", "[cupti][memory]") {
  const auto identity = [](uint64_t t) { return t; };
  const CUpti_ActivityMemory4 r = memory_record(pool_allocation(42), 777, identity);
  CHECK(r.kind == CUPTI_ACTIVITY_KIND_MEMORY2);
  CHECK(r.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION);
  CHECK(r.memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  CHECK(r.correlationId == 42);
  CHECK(r.address == 0x7f0000001000);
  CHECK(r.bytes == 4096);
  CHECK(r.timestamp == 1000);
  CHECK(r.PC == 0);
  CHECK(r.processId == 777);
  CHECK(r.deviceId == 1);
  CHECK(r.contextId == 2);
  CHECK(r.streamId == 13);
  CHECK(r.name == nullptr);
  CHECK(r.isAsync == 1);
  CHECK(r.memoryPoolConfig.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL);
  CHECK(r.memoryPoolConfig.address == 0x5000);
  CHECK(r.memoryPoolConfig.releaseThreshold == (1u << 20));
  CHECK(r.memoryPoolConfig.pool.size == 8192);
  CHECK(r.memoryPoolConfig.utilizedSize == 4096);
}

TEST_CASE("MEMORY_POOL and MEMCPY2 records", "[cupti][memory]") {
  const auto identity = [](uint64_t t) { return t; };
  devsim::MemoryPoolRecord p{};
  p.operation = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED;
  p.pool_type = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  p.address = 0x5000;
  p.min_bytes_to_keep = 2048;
  p.size = 2048;
  p.utilized_size = 0;
  p.correlation_id = 9;
  p.timestamp_ns = 55;
  const CUpti_ActivityMemoryPool3 pool = memory_pool_record(p, 777, identity);
  CHECK(pool.kind == CUPTI_ACTIVITY_KIND_MEMORY_POOL);
  CHECK(pool.memoryPoolOperationType == CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED);
  CHECK(pool.minBytesToKeep == 2048);
  CHECK(pool.address == 0x5000);
  CHECK(pool.size == 2048);
  CHECK(pool.timestamp == 55);
  CHECK(pool.correlationId == 9);
  CHECK(pool.processId == 777);
  const CUpti_ActivityMemcpyPtoP4 copy = peer_memcpy_record(peer_copy_op(3), identity);
  CHECK(copy.kind == CUPTI_ACTIVITY_KIND_MEMCPY2);
  CHECK(copy.copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);
  CHECK(copy.srcDeviceId == 0);
  CHECK(copy.dstDeviceId == 1);
  CHECK(copy.srcContextId != copy.dstContextId);
  CHECK(copy.bytes == (1u << 20));
  CHECK(copy.correlationId == 3);
}

TEST_CASE("MEMORY2 switched on and off while tracing, peer copies only under MEMCPY2", "[cupti][memory]") {
  PrivateSession s;
  s.session.on_memory(pool_allocation(1));  // before the enable: nothing
  REQUIRE(s.session.enable_kind(CUPTI_ACTIVITY_KIND_MEMORY2) == CUPTI_SUCCESS);
  s.session.on_memory(pool_allocation(2));
  REQUIRE(s.session.disable_kind(CUPTI_ACTIVITY_KIND_MEMORY2) == CUPTI_SUCCESS);
  s.session.on_memory(pool_allocation(3));
  REQUIRE(s.session.enable_kind(CUPTI_ACTIVITY_KIND_MEMCPY) == CUPTI_SUCCESS);
  s.session.on_op_done(peer_copy_op(4));  // MEMCPY alone does not carry peer copies
  REQUIRE(s.session.enable_kind(CUPTI_ACTIVITY_KIND_MEMCPY2) == CUPTI_SUCCESS);
  s.session.on_op_done(peer_copy_op(5));
  const auto got = s.flush();
  REQUIRE(got.records.size() == 2);
  CHECK(kind_of(got.records[0]) == CUPTI_ACTIVITY_KIND_MEMORY2);
  CHECK(as<CUpti_ActivityMemory4>(got.records[0]).correlationId == 2);
  CHECK(kind_of(got.records[1]) == CUPTI_ACTIVITY_KIND_MEMCPY2);
  CHECK(as<CUpti_ActivityMemcpyPtoP4>(got.records[1]).correlationId == 5);
}
