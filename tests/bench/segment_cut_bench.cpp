// What a streamed window's segment cut costs when it takes nothing, or a few events, while the
// device pool holds many launches' links and records (label bench: prints figures, never fails
// on time). A range open around N launches holds them (and leaves their links and kernel
// records in the pool) for the whole run, as a `train` range around a streamed window does; the
// agent's thread cuts every 10 ms while it streams, so an idle window pays an empty cut 100
// times a second. Figures: thread CPU ns per cut; run it under
// `valgrind --tool=callgrind --toggle-collect='profagent::collector::cut_segment*'` for the
// instructions (that total over the cuts it prints).
//   segment_cut_bench [launches] [cuts] [empty|chunk: that measure only]
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "collector/api.h"
#include "collector/clock.h"
#include "collector/segment_stream.h"
#include "collector/session.h"
#include "collector/chunk_pool.h"
#include "collector/thread_buffer.h"
#include "fake_backend.h"

using namespace profagent;
using namespace profagent::collector;

namespace {

testing::FakeBackend& fake() {
  static auto* backend = new testing::FakeBackend;
  return *backend;
}

double thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

// A runtime launch as hooks/hook.h records it, its kernel delivered with the next flush.
void launch(NameId name) {
  RuntimeGuard guard;
  if (!guard.should_record()) return;
  HostEvent event{};
  event.id = new_event_id();
  event.start = now();
  push_external_id(event.id);
  fake().enqueue_kernel("_Z6kernelv", clock::monotonic_ns(), 1000);
  pop_external_id();
  event.end = now();
  event.kind = uint8_t(EventKind::Launch);
  event.name = name;
  record(event);
}

// `cuts` segments, each after `calls` runtime calls on a thread of their own (final at once; a
// chunk is taken once it is full, so `calls` a chunk's events and one more closes one): CPU ns
// per cut, and the events the cuts wrote.
void measure(const char* what, uint64_t cuts, uint64_t calls, NameId name) {
  const StreamLimits limits;
  uint64_t written = 0;
  double ns = 0;
  for (uint64_t i = 0; i < cuts; ++i) {
    if (calls != 0) {
      std::thread([&] {
        for (uint64_t c = 0; c < calls; ++c) {
          const uint64_t at = now();
          HostEvent e{};
          e.id = new_event_id(), e.start = at, e.end = at, e.kind = uint8_t(EventKind::Runtime), e.name = name;
          record(e);
        }
      }).join();  // a thread's chunk is closed when it ends
    }
    StreamedSegment segment;
    const double start = thread_cpu_ns();
    if (!cut_segment(limits, segment)) std::fprintf(stderr, "a cut failed\n");
    ns += thread_cpu_ns() - start;
    written += segment.trace.host.size();
  }
  std::printf("%-34s %10.0f ns per cut (%llu host events written by %llu cuts)\n", what, ns / double(cuts),
              (unsigned long long)written, (unsigned long long)cuts);
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t launches = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 20000;
  const uint64_t cuts = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 200;
  configure_buffers(64u << 20);
  SessionOptions options;
  options.device_backend = &fake();
  options.config_pairs = [] { return ConfigPairs{{"PROFAGENT_CUPTI", "auto"}}; };
  if (!start(options)) return 1;
  cuda_in_use();
  set_state(RecordState::Record);
  const NameId name = intern("cudaLaunchKernel");
  RangeInfo info;
  info.name = intern("train");
  push_range(kNoName, &info);  // open for the whole run: every launch below is held
  for (uint64_t i = 0; i < launches; ++i) launch(name);
  StreamLimits limits;
  StreamedSegment segment;
  for (int i = 0; i < 8; ++i) cut_segment(limits, segment);  // the launches taken, held; the pool full
  segment.turn.end();  // "appended": the next cut's turn may come
  std::printf("%llu launches held in a range (held events: %llu)\n", (unsigned long long)launches,
              (unsigned long long)segment.held_events);
  const std::string only = argc > 3 ? argv[3] : "";
  if (only != "chunk") measure("empty cut", cuts, 0, name);
  if (only != "empty") measure("cut of one chunk's events", cuts, kEventsPerChunk + 1, name);
  pop_range(kNoName);
  return 0;
}
