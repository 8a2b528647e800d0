// A streamed window's memory records and their calls (streamed_memory.h): a record joins the
// segment that holds its call (whenever that segment comes), the call's place is kept for the
// tail, and a record that comes after its call's segment is counted, not lost silently.
#include <catch2/catch.hpp>

#include <vector>

#include "exporters/summaries/streamed_memory.h"

using namespace profagent;
using namespace profagent::exporters;

namespace {

HostRecord host(uint64_t id, EventKind kind, const char* name, uint64_t start, uint64_t end, int64_t parent) {
  HostRecord h;
  h.id = id, h.kind = kind, h.name = InternedName(name), h.start_ns = start, h.end_ns = end, h.parent = parent;
  return h;
}

MemoryRecord allocation(uint64_t event_id, int64_t bytes, uint64_t ns) {
  MemoryRecord r;
  r.event_id = event_id, r.bytes = bytes, r.ns = ns, r.total_allocated = bytes, r.total_reserved = bytes;
  return r;
}

// A segment of one operator around one allocation call.
Trace segment_with(uint64_t op_id, uint64_t call_id, uint64_t at) {
  Trace t;
  t.host.push_back(host(op_id, EventKind::Operator, "conv", at, at + 100, kNoIndex));
  t.host.push_back(host(call_id, EventKind::Alloc, "cudaMalloc", at + 10, at + 20, 0));
  return t;
}

}  // namespace

TEST_CASE("memory records join the segment holding their call, also one that comes later", "[exporters][streamed]") {
  MemoryCallsFold fold;
  fold.want({allocation(11, 4096, 1015), allocation(21, 512, 2015), allocation(0, 64, 1500)});
  std::vector<MemoryRecord> first = fold.add(segment_with(10, 11, 1000));
  REQUIRE(first.size() == 1);
  CHECK(first[0].event_id == 11);
  CHECK(first[0].host == 1);
  // Call 21 was held: its record waits for the segment that holds it.
  std::vector<MemoryRecord> second = fold.add(segment_with(20, 21, 2000));
  REQUIRE(second.size() == 1);
  CHECK(second[0].host == 1);
  REQUIRE(fold.calls().contains(11));
  CHECK(fold.calls().at(11).scope == "conv");
  CHECK(fold.calls().at(11).name == "cudaMalloc");
  CHECK(fold.calls().at(11).start_ns == 1010);

  Trace tail;
  tail.memory.enabled = true;
  tail.memory.records = {allocation(11, 4096, 1015), allocation(21, 512, 2015)};
  tail.memory.live.push_back({0x1000, 4096, 1015, 11, 1, 0, MemoryKind::Device, "cudaMalloc", {}});
  CHECK(fold.unplaced(tail) == 0);
  fold.complete(tail);
  CHECK(tail.memory.live[0].call_ns == 1010);

  // An echo of call 11 that comes after its segment was folded counts in no row: counted.
  fold.want({allocation(11, 4096, 1016)});
  CHECK(fold.add(segment_with(30, 31, 3000)).empty());
  CHECK(fold.unplaced(tail) == 1);
}

TEST_CASE("the memory summary of a tail places records whose calls were in earlier segments", "[exporters][streamed]") {
  MemoryCallsFold fold;
  fold.want({allocation(11, 4096, 1015)});
  fold.add(segment_with(10, 11, 1000));
  Trace tail;
  tail.start_ns = 900, tail.end_ns = 5000;
  tail.steps.push_back({7, 900, 1500});
  tail.memory.enabled = true;
  tail.memory.records = {allocation(11, 4096, 1015)};
  const MemorySummary without = summarize_memory(tail);
  const MemorySummary with = summarize_memory(tail, host_costs(tail), &fold.calls());
  REQUIRE(with.devices.size() == 1);
  CHECK(without.devices[0].allocated_at.scope.empty());
  CHECK(with.devices[0].allocated_at.scope == "conv");
  CHECK(with.devices[0].allocated_at.step == 7);
}
