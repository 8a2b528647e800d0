#include "hooks/record_cost.h"

#include <sys/mman.h>

#include <algorithm>

#include "collector/call_timing.h"
#include "hooks/hook.h"

namespace profagent::hooks {
namespace {

// A library of one calibration site: its result is recorded as a real call's would be.
struct Calibration : LibraryDefaults {
  using Error = int;
  static constexpr Error kSuccess = 0;
};
constexpr LibraryVersion kCalibration{"profagent-calibration", nullptr, nullptr};

// The slots are written as a program thread writes its buffer: a run of fresh memory, larger
// than a core's private caches, never the same few lines (which would hide the cost of the
// stores). 1 MiB, mapped for the measurement and unmapped after it.
constexpr size_t kSlotBytes = 1u << 20;
constexpr uint32_t kSlots = uint32_t(kSlotBytes / sizeof(HostEvent));
constexpr int kBatches = 7;
constexpr uint32_t kCallsPerBatch = 4000;

// The "real function" of the calibration: called through a pointer, as a hook calls the runtime.
__attribute__((noinline)) int calibration_real() noexcept {
  asm volatile("");
  return 0;
}
int (*volatile g_real)() noexcept = calibration_real;

// One call's steps, as the exported hook and intercept_recording() run them around the real call.
__attribute__((noinline)) void record_one(LibrarySite<Calibration>& site) noexcept {
  collector::note_hook_entry(__builtin_dwarf_cfa());
  asm volatile("" ::"r"(site.real.address.load(std::memory_order_acquire)), "r"(hook_work_of<Calibration>()));
  collector::RuntimeGuard guard;
  asm volatile("" ::"r"(guard.should_record()));
  const uint64_t id = collector::new_event_id();
  const uint64_t start = collector::now();
  // The external id's push and pop are their loads only: with device tracing on they are calls
  // into CUPTI, which the agent's thread must not make for the program's (a process ending
  // meanwhile tears CUPTI down under them); their cost is CUPTI's, outside this figure.
  asm volatile("" ::"r"(id), "r"(collector::g_device_tracing.load(std::memory_order_relaxed)));
  const int result = g_real();
  asm volatile("" ::"r"(collector::g_device_tracing.load(std::memory_order_relaxed)));
  record_call<Calibration, false>(site, id, start, result, Payload{});
}

}  // namespace

uint64_t measure_record_cost_ps() noexcept {
  void* region = mmap(nullptr, kSlotBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED) return 0;
  // Committed before the timing, as the agent commits a buffer's pages ahead of its writer.
  for (size_t page = 0; page < kSlotBytes; page += 4096) static_cast<volatile char*>(region)[page] = 0;
  static std::atomic<uint32_t> committed{0};
  static LibrarySite<Calibration> site("profagent_calibration", kCalibration);
  site.name.store(NameId(1), std::memory_order_relaxed);  // never interned: the slots are never read
  collector::EventCursor cursor{static_cast<HostEvent*>(region), &committed, 0, kSlots, 0, 0};
  collector::EventCursor* const own = collector::tls_cursor;
  collector::tls_cursor = &cursor;
  const uint64_t cost_ps = collector::least_per_call_ps(kBatches, kCallsPerBatch, [&] {
    if (cursor.used == cursor.capacity) cursor.used = 0;  // wrap: the pages are committed by now
    record_one(site);
  });
  collector::tls_cursor = own;
  munmap(region, kSlotBytes);
  return cost_ps;
}

}  // namespace profagent::hooks
