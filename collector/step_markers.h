// Step markers (PROFAGENT_STEP_ON): which hooked calls end a training step.
//
// The agent configures them once at init; hooks report calls through collector/api.h
// (hooked_call_ended, range_pushed) only while g_step_markers is non-zero, so a run without
// markers pays one relaxed load per hooked call. A marker fires AFTER the marking call
// returned: the call belongs to the step it ends.
//   api:NAME     each call of the hooked symbol NAME (its _ptsz/_ptds variants too)
//   kernel:REGEX each launch of a kernel whose demangled name matches (std::regex_search,
//                ECMAScript); the verdict is cached per kernel handle
//   range:REGEX  each profagent_range_push whose name matches
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
};

using StepHandler = void (*)() noexcept;
using ProfilerApiHandler = void (*)(bool start) noexcept;

// Once, before the agent is READY. False (and `error` says which pattern) when a regular
// expression does not compile; nothing is configured then.
bool configure_step_markers(const StepMarkerSpec& spec, StepHandler on_step,
                            ProfilerApiHandler on_profiler_api, std::string* error);

// True when `symbol` (a hooked API name, variants included) is one of `apis`: exposed for
// unit tests.
bool api_name_matches(const std::vector<std::string>& apis, const char* symbol) noexcept;

}  // namespace profagent::collector
