// Step markers (PROFAGENT_STEP_ON): which hooked calls end a training step.
//
// The agent configures them once at init; hooks report calls through collector/api.h
// (hooked_call_ended, range_pushed) only while g_step_markers is non-zero, so a run without
// markers pays one relaxed load per hooked call. A marker fires AFTER the marking call
// returned: the call belongs to the step it ends.
//   api:NAME     each call of the hooked symbol NAME (its _ptsz/_ptds variants too), or of the
//                runtime/driver function NAME seen by the CUPTI callback (collector/cupti_callbacks.h)
//   kernel:REGEX each launch of a kernel whose demangled name matches (RE2 syntax, an
//                unanchored search: collector/name_patterns.h); decided at its first launch
//                and cached per kernel handle, so later launches cost a table lookup
//   range:REGEX  each profagent_range_push whose name matches (cached per interned name)
// A name is matched on its first kMatchedNameBytes (16 KiB); a mangled name longer than that
// is matched as it is, not demangled.
//   profiler-api cudaProfilerStart / cudaProfilerStop delimit the recorded windows
#pragma once

#include <string>
#include <vector>

#include "collector/api.h"

namespace profagent::collector {

struct StepMarkerSpec {
  std::vector<std::string> apis;   // api:NAME
  std::vector<std::string> kernels;  // kernel:REGEX (any of them)
  std::vector<std::string> ranges;   // range:REGEX (any of them)
  bool profiler_api = false;
  std::string regex_library;  // libprofagent_re2.so to use (empty: found next to the agent)
};

using StepHandler = void (*)() noexcept;
using ProfilerApiHandler = void (*)(bool start) noexcept;

// Once, before the agent is READY. Patterns that do not compile (or all of them, when RE2
// cannot be loaded) are left out; the other markers work. `problem` is then one line saying
// how many and which first, with the pattern shortened (never echoed whole). False only when
// nothing could be configured (out of memory).
bool configure_step_markers(const StepMarkerSpec& spec, StepHandler on_step,
                            ProfilerApiHandler on_profiler_api, std::string* problem);

// True when `symbol` (a hooked API name, variants included) is one of `apis`: exposed for
// unit tests.
bool api_name_matches(const std::vector<std::string>& apis, const char* symbol) noexcept;

}  // namespace profagent::collector
