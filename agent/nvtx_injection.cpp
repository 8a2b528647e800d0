#include "agent/nvtx_injection.h"

#include <stdlib.h>

#include <cstdlib>
#include <cstring>

#include "agent/child_environment.h"
#include "agent/lifecycle.h"
#include "agent/log.h"
#include "agent/profagent.h"
#include "collector/api.h"
#include "collector/process_info.h"
#include "hooks/nvtx/nvtx_payload.h"
#include "hooks/nvtx/nvtx_tables.h"

extern "C" PROFAGENT_API int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table);
extern "C" PROFAGENT_API int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t* module);

namespace profagent::agent {
namespace {

// The variable's value when it names something else than this library; nullptr when it is
// unset, empty or ours (the value this library or the launcher writes, or the same real path).
const char* other_tool() noexcept {
  const char* set = std::getenv(kNvtxInjectionVariable);
  if (set == nullptr || *set == '\0') return nullptr;
  return collector::names_own_library(set) ? nullptr : set;
}

}  // namespace

void claim_nvtx_injection() noexcept {
  if (state() != AgentState::Ready) return;
  if (const char* other = other_tool()) {
    hold_warning(std::string(kNvtxInjectionVariable) + " names another tool (" + other +
                 "): NVTX ranges go to it and are not recorded");
    return;
  }
  if (const char* set = std::getenv(kNvtxInjectionVariable); set != nullptr && *set != '\0') return;  // ours
  const std::string path = collector::own_library_absolute_path();
  if (path.empty()) {
    log(LogLevel::Info, "cannot name this library in NVTX_INJECTION64_PATH: NVTX ranges are not recorded");
    return;
  }
  setenv(kNvtxInjectionVariable, path.c_str(), 0);
}

std::string nvtx_injection_state() {
  if (const char* other = other_tool()) return std::string("another tool: ") + other;
  return "profagent";
}

}  // namespace profagent::agent

// Called by each NVTX copy in the process at its first NVTX call, on the calling thread, while
// the copy's other callers wait: quick, and never an NVTX call from here. Returns 0 (the copy
// stays silent) when the agent is off, or was loaded by dlopen into a process that it does not
// profile.
extern "C" PROFAGENT_API int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  try {
    if (!profagent::agent::ensure_init()) return 0;
    return profagent::hooks::nvtx::attach(get_export_table) ? 1 : 0;
  } catch (...) {
    static profagent::collector::SwallowedSite site{"attaching to an NVTX copy failed: its ranges are not recorded"};
    profagent::collector::note_swallowed(site);
  }
  return 0;
}

// Called by each NVTX copy once per extension module it uses (looked up in the same library as
// InitializeInjectionNvtx2): the payload extension gets schema and enum registration, so that
// payloads described by a schema (NCCL's: communicator, size, reduction) are decoded into args.
// Other modules (counters, memory) stay NVTX's no-ops (0).
extern "C" PROFAGENT_API int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t* module) {
  try {
    if (!profagent::agent::ensure_init()) return 0;
    return profagent::hooks::nvtx::attach_payload_extension(module) ? 1 : 0;
  } catch (...) {
    static profagent::collector::SwallowedSite site{"attaching to an NVTX extension failed: its payloads are not decoded"};
    profagent::collector::note_swallowed(site);
  }
  return 0;
}
