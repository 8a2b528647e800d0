// The entry of libprofagent.so: the constructor that initialises the agent, the destructor
// fallback of the exit flush, and the public C API of agent/profagent.h.
#include <pthread.h>

#include <atomic>
#include <cstring>

#include "agent/child_environment.h"
#include "agent/injection.h"
#include "agent/lifecycle.h"
#include "agent/log.h"
#include "agent/profagent.h"
#include "agent/python_startup.h"
#include "agent/session_glue.h"
#include "collector/api.h"

namespace {

// Runs after the libraries we depend on, before main. Never touches CUDA (processes that never
// use it, such as launchers and DataLoader workers, must not pay CUDA or CUPTI start-up):
// the device backend starts at the first CUDA call.
// Also names the agent in CUDA_INJECTION64_PATH, and gives a CPython interpreter its start-up
// hook through PYTHONPATH, here, while the process has one thread.
__attribute__((constructor)) void profagent_start() {
  profagent::agent::ensure_init();
  profagent::agent::claim_cuda_injection();
  profagent::agent::remember_own_variables();
  profagent::agent::arrange_python_hook();
}

// Fallback for exits that skip atexit handlers registered by us but still run ELF
// destructors (dlclose of a process-wide handle, odd runtimes). flush_all is idempotent.
__attribute__((destructor)) void profagent_stop() { profagent::agent::flush_all("destructor"); }

// ---- user ranges ------------------------------------------------------------------------
// A per-thread stack of open ranges. The TLS word is only a pointer (initial-exec TLS holds a
// few trivial words, never thread_local objects with late-running destructors); the stack
// itself is heap memory freed by a pthread key destructor — a convenience: nothing depends
// on it running.
struct OpenRange {
  uint64_t start;
  uint64_t id;
  profagent::NameId name;
  uint32_t stack;  // where the range was pushed (PROFAGENT_WITH_STACK), else 0
  bool recorded;  // false: opened while not recording; pop must not record or pop an id
};

struct RangeStack {
  static constexpr uint32_t kDepth = 64;  // deeper ranges are counted, not recorded
  OpenRange ranges[kDepth];
  uint32_t depth = 0;
};

__thread RangeStack* tls_ranges __attribute__((tls_model("initial-exec"))) = nullptr;
pthread_key_t g_range_key;
pthread_once_t g_range_key_once = PTHREAD_ONCE_INIT;

void free_range_stack(void* stack) { delete static_cast<RangeStack*>(stack); }
void create_range_key() { pthread_key_create(&g_range_key, free_range_stack); }

RangeStack* range_stack() noexcept {
  if (tls_ranges != nullptr) return tls_ranges;
  auto* stack = new (std::nothrow) RangeStack;
  if (stack == nullptr) return nullptr;
  pthread_once(&g_range_key_once, create_range_key);
  pthread_setspecific(g_range_key, stack);
  return tls_ranges = stack;
}

void record_range(const OpenRange& range) noexcept {
  profagent::HostEvent event{};
  event.start = range.start;
  event.end = profagent::collector::now();
  event.id = range.id;
  event.name = range.name;
  event.kind = uint8_t(profagent::EventKind::Range);
  profagent::collector::record(event);
  profagent::collector::record_stack(range.id, range.stack, event.end);
}

void push_range(const char* name) noexcept {
  RangeStack* stack = range_stack();
  if (stack == nullptr) return;
  const uint32_t depth = stack->depth++;
  if (depth >= RangeStack::kDepth) return;
  OpenRange& range = stack->ranges[depth];
  range.recorded = profagent::agent::state() == profagent::agent::AgentState::Ready &&
                   profagent::collector::operator_should_record();
  if (!range.recorded) return;
  range.name = profagent::collector::intern(name != nullptr ? name : "");
  range.id = profagent::collector::new_event_id();
  range.stack = profagent::collector::stacks_on() ? profagent::collector::capture_stack() : 0;
  range.start = profagent::collector::now();
  // Device work issued inside the range — also by libraries that call the driver directly,
  // which no hook sees — is attributed to it through the external correlation id.
  profagent::collector::push_external_id(range.id);
}

}  // namespace

extern "C" {

PROFAGENT_API void profagent_range_push(const char* name) noexcept {
  profagent::agent::say_held_warnings();  // the program uses the agent (agent/log.h)
  push_range(name);
  // range:REGEX marks a step once the range is open (it belongs to the step it starts).
  if (profagent::collector::step_markers_armed()) profagent::collector::range_pushed(name);
}

PROFAGENT_API void profagent_range_pop(void) noexcept {
  RangeStack* stack = tls_ranges;
  if (stack == nullptr || stack->depth == 0) return;  // unbalanced pop: ignored
  const uint32_t depth = --stack->depth;
  if (depth >= RangeStack::kDepth || !stack->ranges[depth].recorded) return;
  profagent::collector::pop_external_id();
  record_range(stack->ranges[depth]);
}

PROFAGENT_API void profagent_step(void) noexcept {
  profagent::agent::say_held_warnings();
  profagent::agent::count_step();
}

}  // extern "C"
