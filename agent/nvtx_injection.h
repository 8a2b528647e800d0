// How the agent sees NVTX ranges: as the process's NVTX injection library, the way Nsight
// Systems does. NVTX 3 is header-only, so there is no symbol to interpose: each library that
// uses it carries its own copy, which at its first NVTX call reads NVTX_INJECTION64_PATH, loads
// that library and calls its InitializeInjectionNvtx2 with the copy's callback tables
// (nvtx3/nvtxDetail/nvtxInit.h). libprofagent.so exports that entry and names itself in the
// variable at load, before any library's first NVTX call (a copy that already made its first
// call without the variable stays silent for good).
#pragma once

#include <string>

namespace profagent::agent {

inline constexpr const char* kNvtxInjectionVariable = "NVTX_INJECTION64_PATH";

// At load, while the process is single-threaded: sets NVTX_INJECTION64_PATH to this library
// when it is unset. A value another tool set is never touched: NVTX then goes to that tool, and
// the agent says once that it records no NVTX range.
void claim_nvtx_injection() noexcept;

// For the trace's configuration: "profagent" when the agent receives NVTX's calls (or will, once
// claimed), else what it found instead ("another tool: <path>").
std::string nvtx_injection_state();

}  // namespace profagent::agent
