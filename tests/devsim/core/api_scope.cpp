#include "api_scope.h"

#include <time.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/syscall.h>

#include <atomic>
#include <cstring>

#include "config.h"
#include "device.h"
#include "injection.h"

namespace devsim {
namespace {

std::atomic<uint32_t> g_correlation{0};
std::atomic<Tracer*> g_tracer{nullptr};
// Per-thread nesting depth of public calls: plain initial-exec TLS words (no destructors).
__thread int t_depth = 0;
__thread uint32_t t_tid = 0;
__thread uint32_t t_correlation = 0;  // of the outermost open scope

// One counter per DEVSIM_FAIL rule, so "@nth" counts calls of that API only.
std::atomic<uint64_t>* fault_counters() {
  static auto* counters = new std::atomic<uint64_t>[config().faults.size() + 1]();
  return counters;
}

int check_fault(const char* name) {
  const auto& faults = config().faults;
  if (faults.empty()) return 0;
  for (size_t i = 0; i < faults.size(); ++i) {
    if (faults[i].api != name) continue;
    uint64_t n = fault_counters()[i].fetch_add(1) + 1;
    if (faults[i].nth == 0 || faults[i].nth == n) return faults[i].error;
  }
  return 0;
}

// getpid() is a system call in current glibc; the pid is cached and refreshed in fork children.
std::atomic<uint32_t> g_pid{0};

uint32_t cached_pid() {
  uint32_t pid = g_pid.load(std::memory_order_relaxed);
  if (pid == 0) {
    static const bool registered = [] {
      pthread_atfork(nullptr, nullptr, [] {
        g_pid.store(0);
        t_tid = 0;  // the child's only thread has a new tid
      });
      return true;
    }();
    (void)registered;
    pid = static_cast<uint32_t>(getpid());
    g_pid.store(pid, std::memory_order_relaxed);
  }
  return pid;
}

}  // namespace

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

bool set_tracer(Tracer* t) {
  if (t == nullptr) {
    g_tracer.store(nullptr);
    return true;
  }
  Tracer* expected = nullptr;
  return g_tracer.compare_exchange_strong(expected, t);
}

Tracer* tracer() { return g_tracer.load(std::memory_order_acquire); }

uint32_t next_correlation_id() { return g_correlation.fetch_add(1, std::memory_order_relaxed) + 1; }

uint32_t current_tid() {
  if (t_tid == 0) t_tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return t_tid;
}

void spend_host_time(HostCost cost) {
  double scale = config().host_cost_scale;
  if (scale <= 0.0 || cost == HostCost::None) return;
  uint64_t until = now_ns() + static_cast<uint64_t>(static_cast<double>(cost) * scale);
  // Busy on purpose: the modelled cost is CPU work the application thread cannot overlap.
  while (now_ns() < until) {
  }
}

ApiScope::ApiScope(ApiDomain domain, uint32_t cbid, const char* name, HostCost cost,
                   const char* symbol_name, const void* params) {
  // The runtime's first call initialises CUDA, and with it the tool injection (the real
  // runtime reaches it through cuInit); the driver does it in cuInit (driver/driver_api.cpp).
  // nvcc's module registration (__cudaRegister*, from static initialisers) does not: NVIDIA's
  // runtime calls cuInit at the program's first real call (seen on an H100: cuInit under
  // cudaFuncGetAttributes, long after registration).
  const bool registration = name != nullptr && name[0] == '_';
  if (domain == ApiDomain::Runtime && t_depth == 0 && !registration) run_tool_injection_once();
  reported_ = t_depth++ == 0;
  if (!reported_) {
    call_.correlation_id = t_correlation;
    return;
  }
  call_.domain = domain;
  call_.cbid = cbid;
  call_.name = name;
  call_.symbol_name = symbol_name;
  call_.correlation_id = t_correlation = next_correlation_id();
  call_.process_id = cached_pid();
  call_.thread_id = current_tid();
  call_.device_id = static_cast<uint32_t>(current_device());
  call_.params = params;
  call_.context_id = call_.device_id + 1;
  call_.start_ns = now_ns();
  entered_ = tracer();
  if (entered_) entered_->on_api_enter(call_);
  injected_ = check_fault(name);
  if (injected_ == 0) spend_host_time(cost);
}

ApiScope::ApiScope(InternalDriverCall, uint32_t cbid, const char* name) {
  ++t_depth;
  reported_ = true;
  outer_correlation_ = t_correlation;
  call_.domain = ApiDomain::Driver;
  call_.cbid = cbid;
  call_.name = name;
  call_.correlation_id = t_correlation = next_correlation_id();
  call_.process_id = cached_pid();
  call_.thread_id = current_tid();
  call_.device_id = static_cast<uint32_t>(current_device());
  call_.context_id = call_.device_id + 1;
  call_.start_ns = now_ns();
  entered_ = tracer();
  if (entered_) entered_->on_api_enter(call_);
}

ApiScope::~ApiScope() {
  --t_depth;
  if (outer_correlation_ != 0) t_correlation = outer_correlation_;
  if (!reported_) return;
  call_.end_ns = now_ns();
  if (entered_ && tracer() == entered_) entered_->on_api_exit(call_);
}

}  // namespace devsim
