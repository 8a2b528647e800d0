#include "agent/injection.h"

#include <stdlib.h>

#include <cstdlib>
#include <string>

#include "agent/config.h"
#include "agent/lifecycle.h"
#include "agent/log.h"
#include "agent/profagent.h"
#include "collector/api.h"
#include "collector/process_info.h"
#include "hooks/hook.h"

extern "C" PROFAGENT_API int InitializeInjection(void) noexcept;

namespace profagent::agent {
namespace {

bool device_tracing_wanted(const Config& config) noexcept {
  return config.activity_cuda && config.cupti != CuptiMode::Off;
}

}  // namespace

void claim_cuda_injection() noexcept {
  if (state() != AgentState::Ready || !device_tracing_wanted(config())) return;
  if (const char* set = std::getenv(kCudaInjectionVariable); set != nullptr && *set != '\0') return;
  const std::string path = collector::own_library_absolute_path();
  if (path.empty()) {
    log(LogLevel::Info, "cannot name this library in CUDA_INJECTION64_PATH: only interposed calls are recorded");
    return;
  }
  setenv(kCudaInjectionVariable, path.c_str(), 0);
}

}  // namespace profagent::agent

// Called by the driver inside cuInit, under its locks: no CUDA call may be made from here (the
// device backend only calls CUPTI, which injected tools may; the device facts the trace needs
// are read at the first freeze, from an agent thread or the exit path). When the agent was
// loaded by the driver alone (no LD_PRELOAD), its constructor already ran at dlopen; this is
// then its first sight of CUDA, as a hook's first call is otherwise.
extern "C" PROFAGENT_API int InitializeInjection(void) noexcept {
  try {
    if (!profagent::agent::ensure_init()) return 1;  // disabled: let the program run untouched
    profagent::collector::AgentBusy busy;  // CUPTI calling CUDA while the backend starts is ours
    profagent::hooks::first_cuda_use();    // exit handler, device poller (as at a hook's first call)
    profagent::collector::cuda_in_use();   // CUPTI activities and API callbacks
  } catch (...) {
    static profagent::collector::SwallowedSite site{"starting from CUDA's tool injection failed: calls no hook sees are not recorded"};
    profagent::collector::note_swallowed(site);
  }
  return 1;  // what the driver expects of a tool that initialised (its value is not checked)
}
