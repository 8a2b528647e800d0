// CUDA graph replays attributed to their capture (label bench: prints figures, never fails on
// time): what the capture-time map costs (collector/graph_captures.h).
//   - per node made while recording (CUPTI's GRAPHNODE_CREATED callback's work, less
//     cuptiGetGraphNodeId) and per node cloned (GRAPHNODE_CLONED);
//   - at a window's join, per replayed device record (a graph of N nodes replayed R times).
// Thread CPU time per operation: on a shared machine the wall clock mostly measures others.
//   graph_replay_bench [nodes=1000] [replays=1000]
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "collector/clock.h"
#include "collector/graph_captures.h"
#include "collector/session.h"

using namespace profagent;
using namespace profagent::collector;

namespace {

double thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

// One range around the whole capture, as the join sorts and nests host records.
Trace capture_window(uint64_t start, uint64_t end) {
  Trace t;
  HostRecord range;
  range.id = 7, range.kind = EventKind::Range, range.start_ns = start, range.end_ns = end, range.external_id = 7;
  range.tid = uint32_t(syscall(SYS_gettid));
  t.host.push_back(range);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t nodes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000;
  const uint64_t replays = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1000;
  reset_graph_captures();
  set_state(RecordState::Record);
  const uint64_t start = clock::monotonic_ns();
  double t0 = thread_cpu_ns();
  for (uint64_t n = 1; n <= nodes; ++n) note_graph_node_created(n);
  const double created = (thread_cpu_ns() - t0) / double(nodes);
  set_state(RecordState::Off);
  t0 = thread_cpu_ns();
  for (uint64_t n = 1; n <= nodes; ++n) note_graph_node_cloned(1'000'000 + n, n);  // instantiation
  const double cloned = (thread_cpu_ns() - t0) / double(nodes);
  Trace window = capture_window(start, clock::monotonic_ns());
  window.device.resize(nodes * replays);
  for (uint64_t i = 0; i < window.device.size(); ++i) {
    window.device[i].graph_id = 1;
    window.device[i].graph_node_id = 1'000'000 + 1 + i % nodes;
  }
  t0 = thread_cpu_ns();
  const GraphReplayCounts counts = attribute_graph_replays(window, UINT64_MAX);
  const double per_record = (thread_cpu_ns() - t0) / double(window.device.size());
  std::printf("graph_replay_bench: %llu nodes, %llu replays\n", (unsigned long long)nodes, (unsigned long long)replays);
  std::printf("  node made while recording: %.1f ns; node cloned: %.1f ns\n", created, cloned);
  std::printf("  join: %.1f ns per replayed record (%llu records, %llu without capture: %s)\n", per_record,
              (unsigned long long)counts.replayed, (unsigned long long)counts.without_capture,
              counts.without_capture == 0 && window.device[0].external_id == 7 ? "attributed" : "NOT ATTRIBUTED");
  return counts.without_capture == 0 ? 0 : 1;
}
