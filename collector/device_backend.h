// The device side of the collector (hooks give host timing, the device gives device truth, and
// correlation ids link the two): a source of device records (kernels, copies, sets,
// synchronisations, driver-level launches) and of the links between CUPTI correlation ids and our
// external ids. CUPTI implements it (collector/cupti_backend.h); unit tests use a fake that feeds
// synthetic records, so CUPTI logic is tested without a GPU.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "collector/trace.h"

namespace profagent::collector {

// An EXTERNAL_CORRELATION record: the CUPTI API call `correlation` ran while `external_id`
// (a host event id pushed by a hook) was on top of the thread's external id stack.
struct ExternalLink {
  uint32_t correlation = 0;
  uint64_t external_id = 0;
};

// Parsed, neutral records: names copied (CUPTI's die with its buffer), timestamps already in
// agent-clock ns (CLOCK_MONOTONIC domain).
struct DeviceBatch {
  // Kernel (name still mangled), Memcpy, Memset, Sync (name empty: the join names them), and
  // DriverApi calls (name = driver function, pid/tid/cbid set). `host` and `external_id` unset.
  std::vector<DeviceRecord> records;
  std::vector<ExternalLink> links;
  uint64_t dropped = 0;  // records the device library dropped or had no buffer for

  void append(DeviceBatch&& other);
};

// How much device activity is on: none (idle steps), device work only (an idle step right
// before a recorded one: kernels, copies, sets and their links, so that the window's first
// launches are traced — not allocations, which only recorded calls tell apart from a library's
// own), or everything (warmup and recorded steps).
enum class DeviceActivity : uint8_t { Off, WorkOnly, All };

// CUPTI's (the device library's) own work in each traced CUDA call, per call.
struct DeviceCallCost {
  // NotYet: not measurable now (the backend not started, a switch meanwhile); Untraced: host-only.
  enum class State : uint8_t { NotYet, Measured, Unavailable, Untraced };
  State state = State::NotYet;
  uint64_t ps = 0;              // Measured: picoseconds per call (at least 1)
  const char* why = "";         // Unavailable: why (a string literal)
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;

  // Enables device activity. False: host-only from now on; status() says why.
  virtual bool start() noexcept = 0;
  // Hot path, only while tracing (g_device_tracing): see api.h.
  virtual void push_external_id(uint64_t id) noexcept = 0;
  virtual void pop_external_id() noexcept = 0;
  // Pauses or resumes device activity: the session turns it off while no step records, as
  // torch.profiler/Kineto enable CUPTI activities only from warmup to the end of the active
  // steps, so idle steps pay nothing in the device library. Callers hold no collector lock: one
  // caller at a time, the holder of the session's device_applying flag (session_state.h).
  virtual void set_activity(DeviceActivity activity) noexcept { (void)activity; }
  // Forces every record so far into completed buffers. Callers hold no collector lock.
  virtual void flush() noexcept = 0;
  // Parses completed buffers into neutral records and recycles the buffers.
  virtual DeviceBatch drain() noexcept = 0;
  // Whether every device record's issuing call can be known: linked to a host event (the
  // external id a hook or range pushed, or the call the API callback recorded), or to its own
  // DRIVER record. Then work linked to nothing was issued by a call no window recorded.
  virtual bool issuers_known() const noexcept { return false; }
  // "cupti", or "none (<why>)" once host-only.
  virtual std::string status() const = 0;
  virtual std::string version() const { return {}; }
  // Fork child: never call the device library again (CUDA after fork is undefined).
  virtual void disable_in_child() noexcept = 0;
  // The CUDA runtime is about to tear itself down (its last nvcc module is being unregistered):
  // flush what the device library holds now, and never ask it to flush again (NVIDIA's CUPTI
  // crashed when flushed after that teardown). Records already completed are still drained.
  virtual void runtime_tearing_down() noexcept {}
  // What the device library costs each traced call's thread (collector/cupti_call_cost.h):
  // measured by the first call made once the backend started (an agent thread, no collector
  // lock held), whatever the activity; later calls return that. Backends whose library does
  // no work in the calls answer Unavailable.
  virtual DeviceCallCost measure_call_cost() noexcept {
    return {DeviceCallCost::State::Unavailable, 0, "the device backend does not trace calls"};
  }
};

}  // namespace profagent::collector

namespace profagent::collector {
// The backend hooks reach through push/pop_external_id (set by the session when it starts one;
// never cleared, since a hook may be using it: backends are leaked).
extern std::atomic<DeviceBackend*> g_active_device_backend;
}  // namespace profagent::collector
