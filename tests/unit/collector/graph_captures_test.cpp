// The capture-time map of CUDA graph nodes (collector/graph_captures.h) on synthetic traces:
// notes made on a thread inside a scope, clone links, what is counted when unknown or full.
#include <catch2/catch.hpp>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector/clock.h"
#include "collector/graph_captures.h"
#include "collector/session.h"

using namespace profagent;
using namespace profagent::collector;

namespace {

uint32_t this_tid() { return uint32_t(syscall(SYS_gettid)); }

struct Recording {
  Recording() { set_state(RecordState::Record); }
  ~Recording() { set_state(RecordState::Off); }
};

HostRecord host(uint64_t id, EventKind kind, uint64_t start, uint64_t end, int64_t parent, uint64_t external) {
  HostRecord r;
  r.id = id, r.kind = kind, r.start_ns = start, r.end_ns = end, r.parent = parent, r.external_id = external;
  r.tid = this_tid();
  return r;
}

// Notes are taken on the agent clock just after `at`: within this much.
constexpr uint64_t kSlack = 100'000'000;

// A range (id 10) holding a captured launch (id 11) around `at`, as the join sorts and nests them.
Trace range_around(uint64_t at) {
  Trace t;
  t.host.push_back(host(10, EventKind::Range, at - 2 * kSlack, at + 2 * kSlack, kNoIndex, 10));
  t.host.push_back(host(11, EventKind::Launch, at - kSlack, at + kSlack, 0, 10));
  return t;
}

DeviceRecord replayed(uint64_t node, uint64_t launch_external) {
  DeviceRecord d;
  d.graph_id = 1, d.graph_node_id = node, d.external_id = launch_external;
  return d;
}

}  // namespace

TEST_CASE("a replayed node carries the External id open at its making, through its clone", "[graphs]") {
  reset_graph_captures();
  uint64_t at = 0;
  {
    Recording recording;
    at = clock::monotonic_ns();
    note_graph_node_created(100);
  }
  note_graph_node_cloned(200, 100);  // instantiation, outside the window
  Trace t = range_around(at);
  t.device.push_back(replayed(200, 99));
  const GraphReplayCounts counts = attribute_graph_replays(t, at + kSlack);
  CHECK(counts.replayed == 1);
  CHECK(counts.without_capture == 0);
  CHECK(t.device[0].external_id == 10);
  // Kept for later windows: the same exec node replayed again, no host record of the capture.
  Trace later;
  later.device.push_back(replayed(200, 77));
  CHECK(attribute_graph_replays(later, UINT64_MAX).without_capture == 0);
  CHECK(later.device[0].external_id == 10);
}

TEST_CASE("a node made while nothing was recorded keeps its launch's External id, counted", "[graphs]") {
  reset_graph_captures();
  note_graph_node_created(300);  // not recording: no note
  note_graph_node_cloned(301, 300);
  Trace t = range_around(clock::monotonic_ns());
  t.device.push_back(replayed(301, 42));
  t.device.push_back(DeviceRecord{});  // not from a graph: untouched, not counted
  const GraphReplayCounts counts = attribute_graph_replays(t, UINT64_MAX);
  CHECK(counts.replayed == 1);
  CHECK(counts.without_capture == 1);
  CHECK(t.device[0].external_id == 42);
}

TEST_CASE("a note after the window's end waits for the next window", "[graphs]") {
  reset_graph_captures();
  uint64_t at = 0;
  {
    Recording recording;
    at = clock::monotonic_ns();
    note_graph_node_created(400);
  }
  Trace first;
  first.device.push_back(replayed(400, 5));
  CHECK(attribute_graph_replays(first, at - 1).without_capture == 1);
  Trace second = range_around(at);
  second.device.push_back(replayed(400, 5));
  CHECK(attribute_graph_replays(second, at + kSlack).without_capture == 0);
  CHECK(second.device[0].external_id == 10);
}

TEST_CASE("clone links beyond the table's bound are counted, not kept", "[graphs]") {
  reset_graph_captures();
  for (uint64_t i = 1; i <= kMaxGraphNodes + 3; ++i) note_graph_node_cloned(1'000'000 + i, i);
  CHECK(graph_nodes_not_kept() == 3);
  reset_graph_captures();
  CHECK(graph_nodes_not_kept() == 0);
}
