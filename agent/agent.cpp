// The entry of libprofagent.so: the constructor that initialises the agent, the destructor
// fallback of the exit flush, and the public C API of agent/profagent.h.
#include <atomic>
#include <cstring>

#include "agent/child_environment.h"
#include "agent/injection.h"
#include "agent/lifecycle.h"
#include "agent/log.h"
#include "agent/nvtx_injection.h"
#include "agent/profagent.h"
#include "agent/python_startup.h"
#include "agent/session_glue.h"
#include "collector/api.h"

namespace {

// Runs after the libraries we depend on, before main. Never touches CUDA (processes that never
// use it, such as launchers and DataLoader workers, must not pay CUDA or CUPTI start-up):
// the device backend starts at the first CUDA call.
// Also names the agent in CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH, and gives a CPython
// interpreter its start-up hook, here, while the process has one thread.
__attribute__((constructor)) void profagent_start() {
  profagent::agent::ensure_init();
  profagent::agent::claim_cuda_injection();
  profagent::agent::claim_nvtx_injection();
  profagent::agent::remember_own_variables();
  profagent::agent::arrange_python_hook();
}

// Fallback for exits that skip atexit handlers registered by us but still run ELF
// destructors (dlclose of a process-wide handle, odd runtimes). flush_all is idempotent.
__attribute__((destructor)) void profagent_stop() { profagent::agent::flush_all("destructor"); }

// ---- user ranges ------------------------------------------------------------------------
// The per-thread stack of open ranges is the collector's (collector/user_ranges.cpp), shared
// with NVTX's ranges (hooks/nvtx).
void push_user_range(const char* name) noexcept {
  using namespace profagent;
  const bool recorded = agent::state() == agent::AgentState::Ready && collector::range_records();
  collector::RangeInfo info;
  if (recorded) info.name = collector::intern(name != nullptr ? name : "");
  collector::push_range(kNoName, recorded ? &info : nullptr);
}

}  // namespace

extern "C" {

PROFAGENT_API void profagent_range_push(const char* name) noexcept {
  profagent::agent::say_held_warnings();  // the program uses the agent (agent/log.h)
  push_user_range(name);
  // range:REGEX marks a step once the range is open (it belongs to the step it starts).
  if (profagent::collector::step_markers_armed()) profagent::collector::range_pushed(name);
}

PROFAGENT_API void profagent_range_pop(void) noexcept { profagent::collector::pop_range(profagent::kNoName); }

PROFAGENT_API int profagent_recording(void) noexcept {
  return profagent::collector::g_record_state.load(std::memory_order_relaxed);
}

PROFAGENT_API void profagent_step(void) noexcept {
  profagent::agent::say_held_warnings();
  profagent::agent::count_step();
}

}  // extern "C"
