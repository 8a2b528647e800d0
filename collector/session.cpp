#include "collector/session.h"
#include "collector/memory_ledger.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <map>
#include <mutex>
#include <new>

#include "collector/clock.h"
#include "collector/cpu_times.h"
#include "collector/cupti_backend.h"
#include "collector/join.h"
#include "collector/log.h"
#include "collector/names.h"
#include "collector/session_state.h"

namespace profagent::collector {

std::atomic<DeviceBackend*> g_active_device_backend{nullptr};

void DeviceBatch::append(DeviceBatch&& other) {
  if (records.empty()) {
    records = std::move(other.records);
  } else {
    records.insert(records.end(), std::make_move_iterator(other.records.begin()),
                   std::make_move_iterator(other.records.end()));
  }
  links.insert(links.end(), other.links.begin(), other.links.end());
  dropped += other.dropped;
}

Session& session() {
  static Session* instance = new Session;  // leaked: freeze runs at exit
  return *instance;
}

// Built when the library loads, while the process has one thread: a function-local static
// first built by one thread while another forks leaves the child waiting forever on its
// initialisation guard (reliability.fork_stress_light hung on names' table()).
[[gnu::constructor]] static void build_session_at_load() { session(); }

namespace {

enum CudaState : uint8_t { kCudaUnused = 0, kCudaStarting = 1, kCudaReady = 2 };

std::atomic<bool> g_device_ahead{false};  // set_device_ahead()
std::atomic<uint8_t> g_cuda_state{kCudaUnused};

// Fork child: the parent's device data must never be written by the child, and CUDA/CUPTI
// are unusable until exec. Locks are re-created rather than unlocked (another parent thread
// may have held them); the old state is forgotten, never destroyed.
void session_fork_child() noexcept {
  Session& s = session();
  new (&s.freeze_mutex) std::mutex;
  new (&s.mutex) std::mutex;
  new (&s.pool) DevicePool;
  new (&s.carried) std::vector<ThreadEvents>;
  s.drains_in_flight.store(0);
  s.device_applying.store(false);
  s.device_applied.store(s.device_requests.load());
  s.forked_child.store(true);
  // The child's process CPU clock starts from zero: its first window starts here. Its system
  // times wait for its first event: a child that execs at once reads no /proc/stat.
  s.window_start_cpu = begin_deferred_start();
  s.window_start_deferred = true;
  g_device_tracing.store(false);
  if (DeviceBackend* backend = g_active_device_backend.load()) backend->disable_in_child();
  forget_memory_in_child();
}

uint64_t monotonic_ms() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return uint64_t(now.tv_sec) * 1000 + uint64_t(now.tv_nsec) / 1'000'000;
}

// Applies the record state to the device while this thread holds `device_applying`.
void apply_device_state(Session& s, DeviceBackend& backend) noexcept {
  const uint64_t serving = s.device_requests.load();
  // Read after the ticket: a later request is served again.
  const DeviceActivity wanted = recording() ? DeviceActivity::All
                                : g_device_ahead.load(std::memory_order_relaxed) ? DeviceActivity::WorkOnly
                                                                                 : DeviceActivity::Off;
  if (wanted != s.device_activity) {
    AgentBusy busy;
    backend.set_activity(wanted);  // CUPTI: no lock of ours is held here
    s.device_activity = wanted;
  }
  s.device_applied.store(serving);
}

// Device activity on while recording (warmup or record), off while idle. Called after every
// state change and once the backend started (CUDA may be used first during an idle step).
// Step boundaries on different threads may race; the device must end in the state of the
// last one, and a boundary returns only once its state was applied (the program's next launch
// is then traced or not as that state says), or after kDeviceFollowLimitMs if CUPTI is stuck.
constexpr uint64_t kDeviceFollowLimitMs = 2000;

void follow_state_with_device(Session& s) noexcept {
  DeviceBackend* backend = g_active_device_backend.load(std::memory_order_acquire);
  if (backend == nullptr || !s.backend_ready.load(std::memory_order_acquire)) return;
  const uint64_t ticket = s.device_requests.fetch_add(1) + 1;
  uint64_t give_up_ms = 0;
  for (unsigned spins = 0; s.device_applied.load() < ticket; ++spins) {
    if (!s.device_applying.exchange(true)) {
      apply_device_state(s, *backend);
      s.device_applying.store(false);
      continue;
    }
    if (spins < 64) {
      sched_yield();
      continue;
    }
    if (give_up_ms == 0) give_up_ms = monotonic_ms() + kDeviceFollowLimitMs;
    if (monotonic_ms() > give_up_ms) return;  // the other thread will still apply the latest state
    const timespec pause{0, 50'000};
    nanosleep(&pause, nullptr);
  }
}

void start_backend(Session& s) noexcept {
  if (!s.options.activity_cuda || s.backend_started.exchange(true)) return;
  DeviceBackend* backend = s.options.device_backend;
  if (!backend) backend = new (std::nothrow) CuptiBackend(s.options.cupti);
  if (!backend) return;
  AgentBusy busy;
  g_active_device_backend.store(backend);
  bool tracing = backend->start();
  {
    std::lock_guard lock(s.mutex);
    s.backend = backend;
  }
  g_device_tracing.store(tracing);
  s.backend_ready.store(true, std::memory_order_release);
  follow_state_with_device(s);
}

void first_cuda_use() noexcept {
  uint8_t expected = kCudaUnused;
  if (g_cuda_state.compare_exchange_strong(expected, kCudaStarting)) {
    read_deferred_system_times();  // device records may come before any host event
    Session& s = session();
    if (s.started.load()) start_backend(s);
    g_cuda_state.store(kCudaReady, std::memory_order_release);
    return;
  }
  // Another thread is enabling device tracing: wait so our first work is traced. Not when
  // we are the agent ourselves (CUPTI calling CUDA while it starts), and not forever.
  for (int spin = 0; spin < 200'000 && tls_agent_busy == 0 &&
                     g_cuda_state.load(std::memory_order_acquire) == kCudaStarting;
       ++spin) {
    sched_yield();
  }
}

}  // namespace

// ---- collector/api.h: device correlation ------------------------------------------------

void cuda_in_use() noexcept {
  if (__builtin_expect(g_cuda_state.load(std::memory_order_acquire) == kCudaReady, 1)) return;
  first_cuda_use();
}

bool cuda_used() noexcept { return g_cuda_state.load() != kCudaUnused; }

DeviceCallCost measure_device_call_cost() noexcept {
  Session& s = session();
  DeviceBackend* backend = g_active_device_backend.load(std::memory_order_acquire);
  if (backend == nullptr || !s.backend_ready.load(std::memory_order_acquire) || s.forked_child.load()) return {};
  if (!g_device_tracing.load()) return {DeviceCallCost::State::Untraced, 0, ""};
  return backend->measure_call_cost();
}

void cuda_runtime_tearing_down() noexcept {
  AgentBusy busy;  // the flush's own calls are not the program's
  if (DeviceBackend* backend = g_active_device_backend.load(std::memory_order_acquire)) {
    backend->runtime_tearing_down();
  }
}

// ---- session ------------------------------------------------------------------------------

bool start(const SessionOptions& options) noexcept {
  Session& s = session();
  // The first window's start; its system half waits for the first event (collector/cpu_times.h).
  const CpuTimes cpu = begin_deferred_start();
  {
    std::lock_guard lock(s.mutex);
    if (s.started.load()) return false;
    try {
      s.options = options;
    } catch (...) {
      log(LogLevel::Error, "out of memory while starting the session; nothing is recorded");
      return false;
    }
    configure_buffers(options.buffer_bytes);
    s.window_start_ticks = now();
    s.window_start_cpu = cpu;
    s.window_start_deferred = true;
    pthread_atfork(nullptr, nullptr, &session_fork_child);
  }
  s.started.store(true);
  // Something may already be recorded, or CUDA in use (a hook ran before the agent finished
  // init): the system times are read now, not at a first event that has passed.
  if (g_cuda_state.load() != kCudaUnused || any_buffer_taken()) read_deferred_system_times();
  // CUDA may already be in use (a hook ran before the agent finished init).
  if (g_cuda_state.load() != kCudaUnused) start_backend(s);
  return true;
}

bool started() noexcept { return session().started.load(); }

void set_record_state(RecordState state) noexcept {
  g_record_state.store(uint8_t(state), std::memory_order_relaxed);
  const uint8_t bits = kHookRecording | (stacks_on() ? kHookStacks : 0);
  if (state == RecordState::Off) {
    g_hook_work.fetch_and(uint8_t(~bits), std::memory_order_relaxed);
  } else {
    g_hook_work.fetch_or(bits, std::memory_order_relaxed);
  }
}

void follow_device_state() noexcept { follow_state_with_device(session()); }

void set_device_ahead(bool on) noexcept { g_device_ahead.store(on, std::memory_order_relaxed); }

void set_state(RecordState state) noexcept {
  set_record_state(state);
  follow_device_state();
}

RecordState state() noexcept {
  return RecordState(g_record_state.load(std::memory_order_relaxed));
}

}  // namespace profagent::collector
