// DevicePool and WindowClaim (collector/device_pool.h) on synthetic records: which window's
// join takes which record, what a window waits for, and what is dropped.
#include <catch2/catch.hpp>

#include "collector/device_pool.h"

using namespace profagent;
using namespace profagent::collector;

namespace {

DeviceRecord record(DeviceKind kind, uint32_t correlation, uint64_t start_ns, const char* name = "") {
  DeviceRecord r;
  r.kind = kind;
  r.correlation = correlation;
  r.start_ns = start_ns;
  r.end_ns = start_ns + 10;
  r.name = name;
  return r;
}

DeviceBatch batch(std::vector<DeviceRecord> records, std::vector<ExternalLink> links = {}) {
  DeviceBatch b;
  b.records = std::move(records);
  b.links = std::move(links);
  return b;
}

}  // namespace

TEST_CASE("device pool: a linked record goes to the window holding its call, and waits there", "[device_pool]") {
  DevicePool pool;
  // Window 1 (cut 1) holds launch 10; launch 20 is in a later window.
  WindowClaim first({{10, EventKind::Launch}}, {10}, {}, 0, 1000, 1);
  pool.absorb(batch({}, {{1, 10}, {2, 20}}), 1, 0);
  first.claim(pool);
  CHECK(first.missing() == 1);  // launch 10's kernel has not come
  pool.absorb(batch({record(DeviceKind::Kernel, 2, 1500), record(DeviceKind::Kernel, 1, 2000)}), 2, 0);
  first.claim(pool);
  CHECK(first.missing() == 0);
  REQUIRE(first.records.size() == 1);
  CHECK(first.records[0].correlation == 1);
  CHECK(first.links.at(1) == 10);
  REQUIRE(pool.records.size() == 1);  // launch 20's kernel waits for its own window
  CHECK(pool.records[0].correlation == 2);
}

TEST_CASE("device pool: records nobody claimed are forgotten when old in cuts and in time", "[device_pool]") {
  DevicePool pool;
  pool.absorb(batch({record(DeviceKind::Kernel, 5, 100)}, {{5, 99}}), 1, 1000);  // a warmup launch's
  const uint32_t old_cut = 1 + DevicePool::kForgetCuts + 1;
  CHECK(pool.forget_before(old_cut - 1, 10'000, 100) == 0);  // few cuts ago: may still be claimed
  CHECK(pool.forget_before(old_cut, 1050, 100) == 0);        // many cuts, but just now
  CHECK(pool.records.size() == 1);
  CHECK(pool.forget_before(old_cut, 10'000, 100) == 1);
  CHECK(pool.records.empty());
  CHECK(pool.links.empty());
}

TEST_CASE("device pool: unlinked driver calls go by time and their work follows them", "[device_pool]") {
  DevicePool pool;
  WindowClaim window({}, {}, {}, 1000, 2000, 3);
  pool.absorb(batch({record(DeviceKind::DriverApi, 7, 1500, "cuLaunchKernel"),
                     record(DeviceKind::Kernel, 7, 2600),           // ran after the cut
                     record(DeviceKind::DriverApi, 8, 2500, "cuLaunchKernel"),  // a later window's
                     record(DeviceKind::Kernel, 9, 500)}),          // before the window: idle or warmup
               3, 0);
  window.claim(pool);
  REQUIRE(window.records.size() == 2);
  CHECK(window.records[0].correlation == 7);
  CHECK(window.records[1].correlation == 7);
  CHECK(window.dropped_earlier == 1);
  REQUIRE(pool.records.size() == 1);
  CHECK(pool.records[0].correlation == 8);
}

TEST_CASE("device pool: a driver launch inside a range of the window is waited for", "[device_pool]") {
  DevicePool pool;
  WindowClaim window({{40, EventKind::Range}, {41, EventKind::Launch}}, {41}, {}, 0, 1000, 1);
  pool.absorb(batch({record(DeviceKind::DriverApi, 3, 100, "cuLaunchKernel"),
                     record(DeviceKind::DriverApi, 4, 120, "cuMemcpyHtoD_v2"),
                     record(DeviceKind::DriverApi, 5, 130, "cuCtxGetCurrent")},
                    {{3, 40}, {4, 41}, {5, 40}}),
               1, 0);
  window.claim(pool);
  // The range's cuLaunchKernel waits for its kernel; the call inside hooked launch 41 is that
  // launch's own doing (41 waits for its record), and cuCtxGetCurrent queues nothing.
  CHECK(window.missing() == 2);
  pool.absorb(batch({record(DeviceKind::Kernel, 3, 300)}), 1, 0);
  window.claim(pool);
  CHECK(window.missing() == 1);
  pool.absorb(batch({record(DeviceKind::Memcpy, 4, 320)}), 1, 0);
  window.claim(pool);
  CHECK(window.missing() == 0);
}

// With CUPTI naming every issuing call (callbacks or DRIVER records), work linked to nothing
// was issued by a call no window recorded (an idle step's, or one under way while recording was
// switched on) — or its link is still to be read: it is claimed by no window on its time.
TEST_CASE("device pool: work of an unknown call is no window's when every issuer can be known", "[device_pool]") {
  DevicePool pool;
  WindowClaim window({{60, EventKind::Launch}}, {60}, {}, 1000, 2000, 2);
  window.issuers_known = true;
  pool.absorb(batch({record(DeviceKind::Kernel, 11, 1500),    // inside the window, but no link yet
                     record(DeviceKind::Kernel, 12, 1600),    // an idle-step call's: never linked
                     record(DeviceKind::Kernel, 13, 500)}),   // before the window
               2, 0);
  window.claim(pool);
  CHECK(window.records.empty());
  CHECK(window.dropped_earlier == 1);
  CHECK(window.missing() == 1);
  pool.absorb(batch({}, {{11, 60}}), 2, 0);  // the link of launch 60 is read after its kernel
  window.claim(pool);
  REQUIRE(window.records.size() == 1);
  CHECK(window.records[0].correlation == 11);
  CHECK(window.missing() == 0);
  REQUIRE(pool.records.size() == 1);  // kept until old, as any unclaimed record
  CHECK(pool.records[0].correlation == 12);
}

// A driver launch the CUPTI callback recorded (host event 51, CUPTI correlation 6) inside a
// range (host event 50): CUPTI links correlation 6 to the range, so the launch's own event is
// never the link's target. It must still stop waiting when its kernel comes.
TEST_CASE("device pool: a callback-recorded launch inside a range stops waiting when its work comes", "[device_pool]") {
  DevicePool pool;
  WindowClaim window({{50, EventKind::Range}, {51, EventKind::Launch}}, {}, {6}, 0, 1000, 1);
  pool.absorb(batch({}, {{6, 50}}), 1, 0);
  window.claim(pool);
  CHECK(window.missing() == 1);
  pool.absorb(batch({record(DeviceKind::Kernel, 6, 300)}), 1, 0);
  window.claim(pool);
  CHECK(window.missing() == 0);
  REQUIRE(window.records.size() == 1);
  CHECK(window.links.at(6) == 50);  // the kernel's External id stays the range's
}

TEST_CASE("device pool: which host calls expect device work", "[device_pool]") {
  HostEvent e{};
  e.kind = uint8_t(EventKind::Launch);
  CHECK(expects_device_work(e));
  e.flags = kFlagFailed;
  CHECK_FALSE(expects_device_work(e));
  e.flags = kFlagCaptured;
  CHECK_FALSE(expects_device_work(e));
  e.flags = 0;
  e.kind = uint8_t(EventKind::Memcpy);
  CHECK_FALSE(expects_device_work(e));  // 0 bytes
  e.arg0 = 64;
  CHECK(expects_device_work(e));
  e.kind = uint8_t(EventKind::Sync);
  CHECK_FALSE(expects_device_work(e));
  e.kind = uint8_t(EventKind::GraphLaunch);
  e.flags = kFlagAsync;
  CHECK(expects_device_work(e));
  e.flags = kFlagAsync | kFlagGraphWithoutWork;  // memory, host or empty nodes only
  CHECK_FALSE(expects_device_work(e));
}

// The claim hands the pool's vector over whole when it can; either way its records come in
// arrival order (work before its driver call when it arrived first), and what stays keeps its
// arrival (records and arrivals stay parallel, so the forgetting below still goes by each
// record's own arrival).
TEST_CASE("device pool: a claim gives its records in arrival order, also work that arrived before its driver call",
          "[device_pool]") {
  DevicePool pool;
  WindowClaim window({}, {}, {}, 1000, 2000, 3);
  pool.absorb(batch({record(DeviceKind::Kernel, 7, 1600),                   // its driver call comes after it
                     record(DeviceKind::DriverApi, 8, 2500, "cuLaunchKernel")}),  // a later window's
               2, 100);
  pool.absorb(batch({record(DeviceKind::DriverApi, 7, 1500, "cuLaunchKernel")}), 3, 5000);
  window.claim(pool);
  REQUIRE(window.records.size() == 2);
  CHECK(window.records[0].kind == DeviceKind::Kernel);
  CHECK(window.records[1].kind == DeviceKind::DriverApi);
  REQUIRE(pool.records.size() == 1);
  REQUIRE(pool.arrivals.size() == 1);
  CHECK(pool.records[0].correlation == 8);
  CHECK(pool.arrivals[0].after_cut == 2);
  CHECK(pool.arrivals[0].ns == 100);

  WindowClaim next({}, {}, {}, 2000, 3000, 4);  // takes the later driver call: the pool is empty
  next.claim(pool);
  REQUIRE(next.records.size() == 1);
  CHECK(next.records[0].correlation == 8);
  CHECK(pool.records.empty());
  CHECK(pool.arrivals.empty());
}
