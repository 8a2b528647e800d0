#include "collector/cupti_backend.h"
#include "collector/memory_ledger.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>

#include "collector/api.h"
#include "collector/clock.h"
#include "collector/cupti_call_cost.h"
#include "collector/cupti_callbacks.h"
#include "collector/cupti_records.h"
#include "collector/cupti_status.h"
#include "collector/log.h"
#include "collector/process_info.h"

namespace profagent::collector {
namespace {

// CUPTI keeps plain function pointers: route them to the one active backend.
std::atomic<CuptiBackend*> g_active{nullptr};

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  AgentBusy busy;
  if (CuptiBackend* backend = g_active.load(std::memory_order_acquire)) {
    backend->on_buffer_requested(buffer, size, max_records);
  } else {
    *buffer = nullptr, *size = 0, *max_records = 0;
  }
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size,
                               size_t valid) {
  AgentBusy busy;
  if (CuptiBackend* backend = g_active.load(std::memory_order_acquire)) {
    backend->on_buffer_completed(context, stream, buffer, size, valid);
  }
}

// The agent clock in ns (CLOCK_MONOTONIC): converted host ticks share this domain.
uint64_t CUPTIAPI agent_timestamp() { return clock::monotonic_ns(); }

constexpr CUpti_ActivityKind kRequiredKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
// Useful but not essential: without them sync rows, driver-level launch rows and peer copies
// are missing. CUPTI reports copies between two devices only under MEMCPY2, never MEMCPY.
// RUNTIME is here for its external correlation records, not its timings (our hooks time
// runtime calls; the parser skips RUNTIME records): CUPTI writes the record that ties a pushed
// id to a call only for calls whose API records it writes, so without RUNTIME a hooked
// runtime launch's kernel never finds its call (measured on an H100, CUPTI 13.0).
constexpr CUpti_ActivityKind kOptionalKinds[] = {CUPTI_ACTIVITY_KIND_RUNTIME,
                                                 CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                                 CUPTI_ACTIVITY_KIND_DRIVER,
                                                 CUPTI_ACTIVITY_KIND_MEMCPY2};

// CUDA_INJECTION64_PATH names this library: the agent set it for its own process (so that
// calls no hook sees reach it through CUPTI's callbacks), or the agent is the injected tool.
// Anything else is another tool, which owns CUPTI.
bool injection_is_ours(const char* injection) noexcept { return names_own_library(injection); }

}  // namespace

CuptiBackend::CuptiBackend(CuptiOptions options) : options_(std::move(options)) {}

bool CuptiBackend::fail(const std::string& why, LogLevel level) noexcept {
  usable_.store(false);
  g_device_tracing.store(false);
  status_ = "none (" + why + ")";
  log_format(level, "device tracing off, host-only: %s", why.c_str());
  return false;
}

// Start-up calls are checked quietly: their failure is said here, in the one "device tracing
// off" line, with the call and CUPTI's result string.
bool CuptiBackend::refused(const CuptiOutcome& outcome) noexcept {
  return fail(std::string("CUPTI refused: ") + outcome.call + " returned " + api_.error_name(outcome.result));
}

bool CuptiBackend::start() noexcept {
  try {
    if (options_.mode == CuptiMode::Off) return fail("PROFAGENT_CUPTI=off", LogLevel::Info);
    const char* injection = std::getenv("CUDA_INJECTION64_PATH");
    if (options_.mode == CuptiMode::Auto && injection && *injection && !injection_is_ours(injection)) {
      return fail("another tool is injected through CUDA_INJECTION64_PATH");
    }
    std::string why;
    if (!api_.load(options_.library_path, &why)) return fail(why);
    if (!buffers_.reserve(options_.buffer_count)) return fail("no memory for activity buffers");
    AgentBusy busy;
    uint32_t version = 0;
    if (const CuptiOutcome got = CUPTI_CALL_QUIET(api_, get_version, &version); !got) return refused(got);
    version_ = std::to_string(version);
    Dl_info loaded{};  // the file the loader found for api_.path (a bare soname or a full path)
    const bool found = dladdr(reinterpret_cast<void*>(api_.get_version), &loaded) != 0 && loaded.dli_fname;
    log_format(LogLevel::Info, "CUPTI %u loaded from %s", version, found ? loaded.dli_fname : api_.path.c_str());
    g_active.store(this, std::memory_order_release);
    if (const CuptiOutcome registered = CUPTI_CALL_QUIET(api_, register_callbacks, &buffer_requested, &buffer_completed);
        !registered) {
      return refused(registered);
    }
    align_clock();
    // DRIVER records then carry OS thread ids (gettid), as our host records do; the default
    // is pthread_self(). Without it, driver calls still find their scope by external id.
    if (api_.set_thread_id_type) CUPTI_CALL_QUIET(api_, set_thread_id_type, CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    if (!enable_kinds()) return false;
    subscribe_callbacks();
    issuers_known_ = subscriber_ != nullptr ||
                     std::find(enabled_.begin(), enabled_.end(), CUPTI_ACTIVITY_KIND_DRIVER) != enabled_.end();
    usable_.store(true);
    status_ = "cupti";
    g_device_tracing.store(true);
    return true;
  } catch (...) {
    return fail("unexpected error while starting CUPTI");
  }
}

// Without the callbacks the hooks still see every interposed call; only calls they cannot
// interpose (driver API, static runtime) are missing, which is said once.
void CuptiBackend::subscribe_callbacks() noexcept {
  std::string why;
  if (subscribe_api_callbacks(api_, &subscriber_, &why)) {
    callbacks_on_.store(true);
    if (!enable_graph_callbacks(api_, subscriber_)) {
      log(LogLevel::Warn, "CUPTI graph node callbacks unavailable: CUDA graph replays are attributed to their "
          "cudaGraphLaunch, not to the operator or range open when they were captured");
    }
    return;
  }
  subscriber_ = nullptr;
  log_format(LogLevel::Warn, "CUPTI API callbacks off (%s): only interposed CUDA runtime calls are recorded, "
             "driver API and statically linked runtime calls are not", why.c_str());
}

void CuptiBackend::align_clock() noexcept {
  // Optional (older CUPTI lacks it): without it the clocks are aligned by measurement.
  if (api_.register_timestamp_callback && CUPTI_CALL_QUIET(api_, register_timestamp_callback, &agent_timestamp)) {
    offset_ns_ = 0;
    clock_shared_ = true;
    return;
  }
  // No callback: measure CUPTI's clock against ours, bracketed, and keep the tightest sample.
  uint64_t best_width = UINT64_MAX;
  for (int attempt = 0; attempt < 5; ++attempt) {
    uint64_t before = clock::monotonic_ns();
    uint64_t cupti = 0;
    if (!CUPTI_CALL(api_, get_timestamp, &cupti)) return;
    uint64_t after = clock::monotonic_ns();
    if (after - before < best_width) {
      best_width = after - before;
      offset_ns_ = int64_t(cupti) - int64_t(before + (after - before) / 2);
    }
  }
}

bool CuptiBackend::enable_kinds() noexcept {
  for (CUpti_ActivityKind kind : kRequiredKinds) {
    if (const CuptiOutcome enabled = CUPTI_CALL_QUIET(api_, enable, kind); !enabled) {
      for (CUpti_ActivityKind done : enabled_) CUPTI_CALL(api_, disable, done);
      enabled_.clear();
      return refused(enabled);
    }
    enabled_.push_back(kind);
  }
  for (CUpti_ActivityKind kind : kOptionalKinds) enable_optional(kind);
  if (memory_tracking()) enable_memory_kinds();
  return true;
}

bool CuptiBackend::enable_optional(CUpti_ActivityKind kind) noexcept {
  if (!CUPTI_CALL_QUIET(api_, enable, kind)) {
    log_format(LogLevel::Info, "CUPTI activity kind %d unavailable", int(kind));
    return false;
  }
  enabled_.push_back(kind);
  return true;
}

// PROFAGENT_PROFILE_MEMORY: allocations no hook sees (a library's cuMemAlloc, pools) come only
// as these records. Without them the hooked allocations are still complete.
void CuptiBackend::enable_memory_kinds() noexcept {
  const bool memory = enable_optional(CUPTI_ACTIVITY_KIND_MEMORY2);
  enable_optional(CUPTI_ACTIVITY_KIND_MEMORY_POOL);
  set_device_memory_records(memory, clock_shared_);
  if (!memory) log(LogLevel::Warn, "CUPTI has no MEMORY2 records: driver-level allocations by libraries are not counted");
}

void CuptiBackend::push_external_id(uint64_t id) noexcept {
  if (!usable_.load(std::memory_order_relaxed)) return;
  AgentBusy busy;
  CUPTI_CALL(api_, push_external, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, id);
}

void CuptiBackend::pop_external_id() noexcept {
  if (!usable_.load(std::memory_order_relaxed)) return;
  AgentBusy busy;
  uint64_t last = 0;
  CUPTI_CALL(api_, pop_external, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last);
}

// Every kind enabled at start is switched together. The first enable happened at the first
// CUDA use, before module loading (kernel tracing enabled late has stalled processes for seconds
// while CUPTI instrumented the loaded modules): a resume at a warmup step may pay CUPTI's
// instrumentation of modules loaded since, which is what the warmup steps absorb. WorkOnly
// leaves the allocation kinds off (device_backend.h).
void CuptiBackend::set_activity(DeviceActivity activity) noexcept {
  if (!usable_.load()) return;
  AgentBusy busy;
  // Odd while switching: a cost probe running meanwhile sees the count move and measures again.
  activity_switches_.fetch_add(1);
  struct Switched {
    CuptiBackend& backend;
    DeviceActivity activity;
    ~Switched() {
      backend.activity_.store(activity);
      backend.activity_switches_.fetch_add(1);
    }
  } switched{*this, activity};
  // The API callbacks record calls, and serve step markers, which must see calls while nothing records.
  const bool callbacks_wanted = activity == DeviceActivity::All || step_markers_armed();
  if (subscriber_ != nullptr && callbacks_wanted != callbacks_on_.load() &&
      enable_api_callbacks(api_, subscriber_, callbacks_wanted)) {
    callbacks_on_.store(callbacks_wanted);
  }
  for (CUpti_ActivityKind kind : enabled_) {
    const bool allocations = kind == CUPTI_ACTIVITY_KIND_MEMORY2 || kind == CUPTI_ACTIVITY_KIND_MEMORY_POOL;
    if (activity == DeviceActivity::Off || (activity == DeviceActivity::WorkOnly && allocations)) {
      CUPTI_CALL(api_, disable, kind);
    } else if (const CuptiOutcome resumed = CUPTI_CALL_QUIET(api_, enable, kind); !resumed && !resume_failed_reported_) {
      resume_failed_reported_ = true;
      log_format(LogLevel::Warn, "CUPTI refused to resume activity kind %d (%s returned %s): its records are missing",
                 int(kind), resumed.call, api_.error_name(resumed.result).c_str());
    }
  }
}

void CuptiBackend::flush() noexcept {
  if (!usable_.load() || runtime_gone_.load()) return;
  AgentBusy busy;
  // Runs the completed callback (which takes buffers_'s lock) synchronously: no collector
  // lock may be held here.
  CUPTI_CALL(api_, flush_all, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void CuptiBackend::runtime_tearing_down() noexcept {
  flush();
  runtime_gone_.store(true);
}

DeviceBatch CuptiBackend::drain() noexcept {
  DeviceBatch batch;
  try {
    AgentBusy busy;
    CuptiRecordParser parser(api_, offset_ns_);
    const std::vector<ActivityBuffers::Completed> completed = buffers_.take_completed();
    size_t bytes = 0;
    for (const ActivityBuffers::Completed& done : completed) bytes += done.valid_bytes;
    CuptiRecordParser::reserve_links(bytes, batch);
    for (const ActivityBuffers::Completed& done : completed) {
      if (usable_.load()) parser.parse(done.buffer, done.valid_bytes, batch);
      buffers_.give_back(done.buffer);
    }
    parser.book_memory();
  } catch (...) {
    static CappedSite drains_lost;  // the device poller drains every few milliseconds
    log_capped(drains_lost, LogLevel::Warn, "out of memory while reading device records; some are lost");
  }
  batch.dropped += dropped_.exchange(0);
  return batch;
}

// Once per process, from an agent thread (the poller's first tick with the device traced, or
// the first window's export), in whatever state the device is: the probe switches its one
// function as recording would and back. A set_activity running meanwhile (a step boundary)
// switches the whole callback domain and the activity kinds, the probe's function with them:
// the figure is then dropped, the function set back as the domain now is, and a later call
// measures anew.
DeviceCallCost CuptiBackend::measure_call_cost() noexcept {
  using State = DeviceCallCost::State;
  if (const State known = call_cost_state_.load(std::memory_order_acquire); known != State::NotYet) {
    return {known, call_cost_ps_, call_cost_why_};
  }
  const uint32_t switches = activity_switches_.load();
  if (!usable_.load() || runtime_gone_.load() || switches % 2 != 0) return {};
  AgentBusy busy;  // the probe's calls are the agent's: its callback records none of them
  auto probe_now = [this] {
    const bool traced = activity_.load() != DeviceActivity::Off;
    const bool driver = std::find(enabled_.begin(), enabled_.end(), CUPTI_ACTIVITY_KIND_DRIVER) != enabled_.end();
    return CuptiProbeSwitch{&api_, subscriber_, callbacks_on_.load(), traced && driver, traced};
  };
  const CuptiCallCost cost = measure_cupti_call_cost(probe_now());
  if (activity_switches_.load() != switches) {
    if (api_.enable_callback && api_.enable_driver_api && subscriber_ != nullptr) restore_probe_function(probe_now());
    return {};
  }
  if (cost.unavailable != nullptr) {
    call_cost_why_ = cost.unavailable;
    call_cost_state_.store(State::Unavailable, std::memory_order_release);
    return {State::Unavailable, 0, cost.unavailable};
  }
  if (!cost.measured) return {};  // the thread's CPU clock failed: try again later
  // At least 1 ps: 0 means "not measured" to the overhead line (a difference lost in noise is
  // a cost of about nothing, still measured).
  call_cost_ps_ = std::max<uint64_t>(cost.cost_ps(), 1);
  call_cost_state_.store(State::Measured, std::memory_order_release);
  log_format(LogLevel::Info, "CUPTI's cost per traced call: %.1f ns (%.1f ns with it, %.1f ns without)",
             double(cost.cost_ps()) / 1000, double(cost.traced_ps) / 1000, double(cost.bare_ps) / 1000);
  return {State::Measured, call_cost_ps_, ""};
}

void CuptiBackend::disable_in_child() noexcept {
  usable_.store(false);
  g_active.store(nullptr);
  status_ = "none (forked child: CUDA is unusable after fork)";
}

void CuptiBackend::on_buffer_requested(uint8_t** buffer, size_t* size,
                                       size_t* max_records) noexcept {
  *max_records = 0;  // as many as fit
  *buffer = buffers_.take();
  *size = *buffer ? kActivityBufferBytes : 0;  // size 0: CUPTI drops and counts
  if (!*buffer) dropped_.fetch_add(1, std::memory_order_relaxed);
}

void CuptiBackend::on_buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer,
                                       size_t size, size_t valid) noexcept {
  size_t dropped = 0;
  if (CUPTI_CALL(api_, get_num_dropped, context, stream, &dropped) && dropped > 0) {
    dropped_.fetch_add(dropped, std::memory_order_relaxed);
  }
  buffers_.complete(buffer, valid);
}

}  // namespace profagent::collector
