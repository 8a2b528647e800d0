// The correlation join on synthetic host events and CUPTI-like device records.
#include <catch2/catch.hpp>

#include <algorithm>

#include "collector/api.h"
#include "collector/join.h"

using namespace profagent;
using namespace profagent::collector;

namespace {

HostEvent event(uint64_t id, EventKind kind, uint64_t start, uint64_t end, NameId name = 0,
                uint64_t arg0 = 0) {
  HostEvent e{};
  e.id = id, e.kind = uint8_t(kind), e.start = start, e.end = end, e.name = name, e.arg0 = arg0;
  return e;
}

DeviceRecord device(DeviceKind kind, uint32_t correlation, uint64_t start, std::string name = {}) {
  DeviceRecord d;
  d.kind = kind, d.correlation = correlation, d.start_ns = start, d.end_ns = start + 10;
  d.name = std::move(name);
  d.device = 0, d.context = 1, d.stream = 7;
  return d;
}

DeviceRecord driver_call(uint32_t correlation, uint32_t tid, uint64_t start, uint64_t end) {
  DeviceRecord d = device(DeviceKind::DriverApi, correlation, start, "cuLaunchKernel");
  d.end_ns = end, d.tid = tid, d.pid = 1;
  return d;
}

ThreadEvents thread(uint32_t tid, std::vector<HostEvent> events) {
  ThreadEvents t;
  t.tid = tid, t.pid = 1, t.name = "t" + std::to_string(tid), t.events = std::move(events);
  return t;
}

const HostRecord& by_id(const Trace& trace, uint64_t id) {
  auto it = std::find_if(trace.host.begin(), trace.host.end(),
                         [id](const HostRecord& r) { return r.id == id; });
  REQUIRE(it != trace.host.end());
  return *it;
}

int64_t index_of(const Trace& trace, uint64_t id) { return &by_id(trace, id) - trace.host.data(); }

const DeviceRecord& by_correlation(const Trace& trace, uint32_t correlation) {
  auto it = std::find_if(trace.device.begin(), trace.device.end(),
                         [=](const DeviceRecord& d) { return d.correlation == correlation; });
  REQUIRE(it != trace.device.end());
  return *it;
}

int stub;  // a kernel's host stub

}  // namespace

TEST_CASE("join: nesting, external ids through ranges, links, late and unmatched", "[join]") {
  JoinInput input;
  input.names = {"", "range", "op", "cudaLaunchKernel", "cudaMemcpy", "cudaDeviceSynchronize"};
  input.kernel_names[&stub] = "_Z3fooi";
  input.threads.push_back(thread(100, {
      event(30, EventKind::Launch, 200, 300, 3, uint64_t(&stub)),  // committed first: ends first
      event(40, EventKind::Memcpy, 400, 500, 4),
      event(20, EventKind::Operator, 100, 900, 2),
      event(50, EventKind::Launch, 950, 980, 3, uint64_t(&stub)),
      event(10, EventKind::Range, 0, 1000, 1),
      event(60, EventKind::Sync, 2000, 2100, 5),
  }));
  input.threads.push_back(thread(200, {event(70, EventKind::Operator, 0, 500, 2)}));
  input.device = {device(DeviceKind::Kernel, 1, 310, "_Z3fooi"),
                  device(DeviceKind::Memcpy, 2, 450, "Memcpy HtoD (Pageable -> Device)"),
                  device(DeviceKind::Kernel, 3, 990, "_Z3fooi"),
                  device(DeviceKind::Kernel, 4, 200, "_Z3barv"),  // driver launch inside op 70
                  device(DeviceKind::Kernel, 5, 100, "late"),
                  device(DeviceKind::Kernel, 6, 100, "stray"),
                  device(DeviceKind::Sync, 7, 2050)};
  input.device.back().sync_type = 3;
  input.device.back().context = 1;
  input.device.back().device = 99;  // sync records carry no device: taken from the context
  FlatMap<uint32_t, uint64_t> links{{1, 30}, {2, 40}, {3, 50}, {4, 70}, {5, 999}, {7, 60}};
  input.links = &links;

  Trace trace;
  JoinCounts counts = join(std::move(input), trace);

  REQUIRE(trace.host.size() == 7);
  CHECK(counts.late == 1);       // correlation 5: its host event is not in this window
  CHECK(counts.unmatched == 1);  // correlation 6: no link at all
  REQUIRE(trace.device.size() == 6);
  CHECK(std::is_sorted(trace.device.begin(), trace.device.end(),
                       [](auto& a, auto& b) { return a.start_ns < b.start_ns; }));

  // Parents by time containment; external id = innermost Operator/Range, else own.
  CHECK(by_id(trace, 10).parent == kNoIndex);
  CHECK(by_id(trace, 20).parent == index_of(trace, 10));
  CHECK(by_id(trace, 30).parent == index_of(trace, 20));
  CHECK(by_id(trace, 40).parent == index_of(trace, 20));
  CHECK(by_id(trace, 50).parent == index_of(trace, 10));
  CHECK(by_id(trace, 60).parent == kNoIndex);
  CHECK(by_id(trace, 10).external_id == 10);
  CHECK(by_id(trace, 20).external_id == 20);
  CHECK(by_id(trace, 30).external_id == 20);
  CHECK(by_id(trace, 40).external_id == 20);
  CHECK(by_id(trace, 50).external_id == 10);
  CHECK(by_id(trace, 60).external_id == 60);
  CHECK(by_id(trace, 30).name == "cudaLaunchKernel");
  CHECK(by_id(trace, 30).kernel_name == "foo(int)");
  CHECK(by_id(trace, 30).tid == 100);

  // Device records link to the call that issued them and carry its External id.
  const DeviceRecord& k1 = by_correlation(trace, 1);
  CHECK(k1.host == index_of(trace, 30));
  CHECK(k1.external_id == 20);
  CHECK(k1.name == "foo(int)");
  CHECK(by_id(trace, 30).correlation == 1);
  CHECK(by_correlation(trace, 2).host == index_of(trace, 40));
  CHECK(by_id(trace, 40).correlation == 2);
  CHECK(by_correlation(trace, 3).external_id == 10);
  // A driver-level launch with no DRIVER records links to the operator around it.
  CHECK(by_correlation(trace, 4).host == index_of(trace, 70));
  CHECK(by_correlation(trace, 4).external_id == 70);
  CHECK(by_id(trace, 70).correlation == 0);
  CHECK(by_correlation(trace, 6).host == kNoIndex);
  const DeviceRecord& sync = by_correlation(trace, 7);
  CHECK(sync.host == index_of(trace, 60));
  CHECK(sync.device == 0);
  // Host records are sorted by (tid, start).
  CHECK(std::is_sorted(trace.host.begin(), trace.host.end(), [](auto& a, auto& b) {
    return std::pair(a.tid, a.start_ns) < std::pair(b.tid, b.start_ns);
  }));
}

TEST_CASE("join: driver-level launches become host records when DRIVER records come", "[join]") {
  JoinInput input;
  input.names = {"", "range", "cudaLaunchKernel"};
  input.threads.push_back(thread(300, {event(90, EventKind::Launch, 300, 400, 2),
                                       event(80, EventKind::Range, 0, 1000, 1)}));
  input.device = {driver_call(9, 300, 100, 200),   // cuBLAS-style: no hook saw it
                  device(DeviceKind::Kernel, 9, 250, "gemm"),
                  driver_call(10, 300, 320, 380),  // inside the hooked cudaLaunchKernel
                  device(DeviceKind::Kernel, 10, 450, "axpy"),
                  driver_call(11, 300, 500, 510),  // enqueued nothing (e.g. cuCtxGetDevice)
                  driver_call(12, 300, 330, 340)}; // no link, but inside the hooked call by time
  input.device.push_back(device(DeviceKind::Kernel, 12, 460, "scal"));
  FlatMap<uint32_t, uint64_t> links{{9, 80}, {10, 90}};
  input.links = &links;

  Trace trace;
  JoinCounts counts = join(std::move(input), trace);
  CHECK(counts.unmatched == 1);  // correlation 12: its driver call was the hooked call's own
  REQUIRE(trace.host.size() == 3);
  const HostRecord& driver = trace.host[1];  // sorted by start: range, driver call, launch
  CHECK(driver.name == "cuLaunchKernel");
  CHECK((driver.flags & kFlagDriverApi) != 0);
  CHECK(driver.kind == EventKind::Launch);
  CHECK(driver.parent == index_of(trace, 80));
  CHECK(driver.external_id == 80);
  CHECK(driver.correlation == 9);
  CHECK(by_correlation(trace, 9).host == 1);
  CHECK(by_correlation(trace, 9).external_id == 80);
  CHECK(by_correlation(trace, 10).host == index_of(trace, 90));
  CHECK(by_correlation(trace, 12).host == kNoIndex);
  CHECK(trace.device.size() == 3);  // driver records never appear as device rows
}

TEST_CASE("join: host-only launches still get kernel names from registration", "[join]") {
  JoinInput input;
  input.names = {"", "cudaLaunchKernel"};
  input.kernel_names[&stub] = "_Z6vecAddPKfS0_Pfi";
  input.threads.push_back(thread(1, {event(5, EventKind::Launch, 1, 2, 1, uint64_t(&stub))}));
  Trace trace;
  join(std::move(input), trace);
  REQUIRE(trace.host.size() == 1);
  CHECK(trace.host[0].kernel_name == "vecAdd(float const*, float const*, float*, int)");
  CHECK(trace.host[0].external_id == 5);
}

// The join sorts through a permutation applied in place (cycle by cycle) and skips the sort
// when records already arrive in order: every record must land once, fields intact, and
// device records with equal starts keep their arrival order.
TEST_CASE("join: out-of-order records are sorted in place, ties in arrival order", "[join]") {
  JoinInput input;
  input.names = {"", "call"};
  std::vector<HostEvent> events;
  const uint64_t starts[] = {50, 10, 40, 0, 30, 20, 70, 60};  // several permutation cycles
  for (uint64_t i = 0; i < 8; ++i) events.push_back(event(100 + i, EventKind::Runtime, starts[i], starts[i] + 5, 1));
  input.threads.push_back(thread(7, events));
  FlatMap<uint32_t, uint64_t> links;
  const uint64_t device_starts[] = {300, 100, 200, 100, 300, 100};
  for (uint32_t c = 1; c <= 6; ++c) {
    input.device.push_back(device(DeviceKind::Memcpy, c, device_starts[c - 1], "copy"));
    links[c] = 100 + c;
  }
  input.links = &links;

  Trace trace;
  join(std::move(input), trace);

  REQUIRE(trace.host.size() == 8);
  for (size_t i = 0; i < trace.host.size(); ++i) {
    CHECK(trace.host[i].start_ns == 10 * i);
    CHECK(trace.host[i].end_ns == 10 * i + 5);
    CHECK(trace.host[i].name == "call");
  }
  CHECK(by_id(trace, 100).start_ns == 50);
  CHECK(by_id(trace, 103).start_ns == 0);
  std::vector<uint32_t> order;
  for (const DeviceRecord& d : trace.device) order.push_back(d.correlation);
  CHECK(order == std::vector<uint32_t>{2, 4, 6, 3, 1, 5});
  for (const DeviceRecord& d : trace.device) CHECK(d.host == index_of(trace, 100 + d.correlation));
}

// Device records come nearly in order (a synchronisation's record after the work it waited
// for, which started after it): sorted by insertion within a bound. Records that come backwards
// pass the bound and take the full sort. Either way: by start, ties in arrival order.
TEST_CASE("join: device records are sorted by start, ties in arrival order, nearly sorted or backwards", "[join]") {
  for (const bool backwards : {false, true}) {
    JoinInput input;
    input.names = {"", "copy"};
    std::vector<HostEvent> events;
    FlatMap<uint32_t, uint64_t> links;
    constexpr uint32_t kRecords = 3000;
    for (uint32_t c = 1; c <= kRecords; ++c) {
      events.push_back(event(100000 + c, EventKind::Memcpy, 10 * c, 10 * c + 5, 1, 8));
      links[c] = 100000 + c;
      // Nearly sorted: every 100th record started 50 records earlier; pairs of equal starts.
      uint64_t start = 20 * (c / 2);
      if (!backwards && c % 100 == 0) start -= 1000;
      if (backwards) start = 20 * ((kRecords - c) / 2);
      input.device.push_back(device(DeviceKind::Memcpy, c, start, "copy"));
    }
    input.threads.push_back(thread(7, events));
    input.links = &links;
    Trace trace;
    join(std::move(input), trace);
    REQUIRE(trace.device.size() == kRecords);
    bool ordered = true;
    for (size_t i = 1; i < trace.device.size(); ++i) {
      const DeviceRecord& a = trace.device[i - 1];
      const DeviceRecord& b = trace.device[i];
      ordered = ordered && (a.start_ns < b.start_ns || (a.start_ns == b.start_ns && a.correlation < b.correlation));
    }
    CHECK(ordered);
    for (const DeviceRecord& d : trace.device) REQUIRE(d.host == index_of(trace, 100000 + d.correlation));
  }
}

TEST_CASE("join: calls without device work get their own CUPTI correlation from the window's links",
          "[join]") {
  JoinInput input;
  input.names = {"", "op", "cudaEventRecord", "cudaLaunchKernel", "cudaFree"};
  input.threads.push_back(thread(100, {
      event(10, EventKind::Runtime, 100, 110, 2),   // cudaEventRecord: no device work
      event(20, EventKind::Launch, 200, 210, 3),    // its kernel carries correlation 8
      event(30, EventKind::Free, 300, 310, 4),      // no link at all (e.g. CUPTI lost it)
      event(40, EventKind::Operator, 0, 400, 1),    // scopes keep none
  }));
  FlatMap<uint32_t, uint64_t> links = {{8, 20}};
  input.links = &links;
  // CUPTI links every API call made while an id is pushed: the call itself first, then calls
  // it makes (a later, larger correlation); the operator's own id links its inner driver call.
  input.call_links = {{5, 10}, {6, 10}, {7, 40}, {8, 20}, {9, 20}};
  input.device = {device(DeviceKind::Kernel, 8, 220, "k")};
  Trace trace;
  join(std::move(input), trace);
  CHECK(by_id(trace, 10).correlation == 5);
  CHECK(by_id(trace, 20).correlation == 8);  // the device record's, not the smaller/larger link
  CHECK(by_id(trace, 30).correlation == 0);  // the exporter gives it a fresh one
  CHECK(by_id(trace, 40).correlation == 0);
}

// An NCCL call's arguments travel beside its 48-byte event (collector::record_collective) and
// are taken by the window's join, once: a second window never shows them again.
TEST_CASE("join: an NCCL operator gets its communication arguments, once", "[join]") {
  CollectiveArgs args;
  args.collective = "allreduce", args.dtype = "Float", args.in_nelems = args.out_nelems = 1024;
  args.comm_hash = 77, args.seq = 5, args.group_size = 4, args.rank = 2;
  const uint64_t handle = collector::record_collective(args);
  REQUIRE(handle != 0);
  HostEvent op = event(9, EventKind::Operator, 1, 5, 1);
  op.flags = kFlagCollective, op.arg1 = handle;
  HostEvent plain = event(10, EventKind::Operator, 6, 7, 1);  // arg1 without the flag: no arguments
  plain.arg1 = handle;
  for (int window = 0; window < 2; ++window) {
    JoinInput input;
    input.names = {"", "ncclAllReduce"};
    input.threads.push_back(thread(1, {op, plain}));
    Trace trace;
    join(std::move(input), trace);
    CHECK(by_id(trace, 10).collective == -1);
    if (window == 0) {
      REQUIRE(by_id(trace, 9).collective == 0);
      REQUIRE(trace.collectives.size() == 1);
      const CollectiveArgs& got = trace.collectives[0];
      CHECK(std::string(got.collective) == "allreduce");
      CHECK((got.comm_hash == 77 && got.seq == 5 && got.group_size == 4 && got.rank == 2 && got.in_nelems == 1024));
    } else {
      CHECK(by_id(trace, 9).collective == -1);  // already taken
      CHECK(trace.collectives.empty());
    }
  }
}

TEST_CASE("join: records in commit order, threads out of order, are sorted as a full sort would", "[join]") {
  JoinInput input;
  input.names = {"", "call", "op", "range"};
  // Each thread commits a scope after what it encloses; the threads come in no tid order.
  for (uint32_t tid : {30u, 10u, 20u}) {
    const uint64_t id = 1000 * tid;
    input.threads.push_back(thread(tid, {
        event(id + 1, EventKind::Runtime, 10, 15, 1),
        event(id + 2, EventKind::Runtime, 20, 25, 1),
        event(id + 3, EventKind::Operator, 5, 30, 2),
        event(id + 4, EventKind::Runtime, 40, 45, 1),
        event(id + 5, EventKind::Range, 0, 50, 3),
    }));
  }
  // A thread whose records come backwards: more moves than an insertion sort is allowed.
  std::vector<HostEvent> backwards;
  for (uint64_t i = 0; i < 2000; ++i) backwards.push_back(event(500000 + i, EventKind::Runtime, 10 * (2000 - i), 10 * (2000 - i) + 5, 1));
  input.threads.push_back(thread(5, backwards));

  Trace trace;
  join(std::move(input), trace);

  REQUIRE(trace.host.size() == 2015);
  for (size_t i = 0; i < 2000; ++i) CHECK(trace.host[i].start_ns == 10 * (i + 1));
  for (uint32_t k = 0; k < 3; ++k) {
    const uint32_t tid = 10 * (k + 1);
    const size_t at = 2000 + 5 * k;
    std::vector<uint64_t> starts;
    for (size_t i = at; i < at + 5; ++i) {
      CHECK(trace.host[i].tid == tid);
      starts.push_back(trace.host[i].start_ns);
    }
    CHECK(starts == std::vector<uint64_t>{0, 5, 10, 20, 40});
    const uint64_t id = 1000 * tid;
    CHECK(by_id(trace, id + 1).parent == index_of(trace, id + 3));
    CHECK(by_id(trace, id + 3).parent == index_of(trace, id + 5));
    CHECK(by_id(trace, id + 4).parent == index_of(trace, id + 5));
    CHECK(by_id(trace, id + 4).external_id == id + 5);
  }
}
