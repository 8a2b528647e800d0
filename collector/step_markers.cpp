// Step markers: matching hooked calls against PROFAGENT_STEP_ON (collector/step_markers.h).
#include "collector/step_markers.h"

#include <cstring>
#include <new>
#include <string_view>

#include "collector/api.h"
#include "collector/name_patterns.h"
#include "collector/names.h"
#include "collector/trace.h"  // without_stream_suffix

namespace profagent::collector {

std::atomic<uint8_t> g_step_markers{0};

namespace {

struct Markers {
  StepMarkerSpec spec;
  NamePatterns kernels;
  NamePatterns ranges;
  VerdictCache kernel_verdicts;  // per kernel handle
  VerdictCache range_verdicts;   // per interned range name
  StepHandler on_step = nullptr;
  ProfilerApiHandler on_profiler_api = nullptr;
};
Markers* g_markers = nullptr;  // leaked; written once before g_step_markers is set

// The text a kernel pattern sees: the demangled name, bounded. A mangled name beyond the
// bound is not demangled (the demangler's work grows with it) and is matched as it is.
bool kernel_name_matches(const NamePatterns& patterns, const void* kernel) {
  try {
    std::string name;
    if (!kernel_name_of(kernel, name)) return false;
    if (name.size() > kMatchedNameBytes) return patterns.search(name);
    return patterns.search(demangle(name));
  } catch (...) {
    static SwallowedSite site{"a kernel's name could not be matched against PROFAGENT_STEP_ON: that "
                              "launch ends no step"};
    note_swallowed(site);
    return false;
  }
}

// Decided once per kernel (the first launch, on the launching thread: RE2 is linear in the
// bounded name), then a lock-free lookup.
bool kernel_marks_step(Markers& m, const void* kernel) noexcept {
  const auto key = reinterpret_cast<uintptr_t>(kernel);
  const VerdictCache::Verdict cached = m.kernel_verdicts.find(key);
  if (cached != VerdictCache::Verdict::Unknown) return cached == VerdictCache::Verdict::Yes;
  const bool yes = kernel_name_matches(m.kernels, kernel);
  m.kernel_verdicts.remember(key, yes);
  return yes;
}

bool range_marks_step(Markers& m, const char* name) noexcept {
  const std::string_view text(name != nullptr ? name : "");
  const std::string_view bounded = text.substr(0, kMatchedNameBytes);
  const NameId id = intern(bounded);  // what push_range interned too, for names in bounds
  const VerdictCache::Verdict cached = m.range_verdicts.find(uintptr_t(id) + 1);
  if (cached != VerdictCache::Verdict::Unknown) return cached == VerdictCache::Verdict::Yes;
  const bool yes = m.ranges.search(bounded);
  if (id != kNoName || bounded.empty()) m.range_verdicts.remember(uintptr_t(id) + 1, yes);
  return yes;
}

bool is_launch(const char* symbol) {
  return std::strncmp(symbol, "cudaLaunch", 10) == 0 || std::strncmp(symbol, "__cudaLaunch", 12) == 0;
}

// One line for all patterns left out: how many, and the first with its reason.
std::string describe_rejected(bool loaded, size_t rejected, size_t total, const std::string& first) {
  if (rejected == 0) return {};
  if (!loaded) return "kernel:/range: markers ignored: " + first;
  return std::to_string(rejected) + " of " + std::to_string(total) +
         " kernel:/range: patterns are not valid RE2 expressions and are ignored, first " + first;
}

}  // namespace

bool api_name_matches(const std::vector<std::string>& apis, const char* symbol) noexcept {
  const std::string_view name = without_stream_suffix(symbol);
  for (const std::string& api : apis) {
    if (name == api) return true;
  }
  return false;
}

bool configure_step_markers(const StepMarkerSpec& spec, StepHandler on_step,
                            ProfilerApiHandler on_profiler_api, std::string* problem) {
  if (problem != nullptr) problem->clear();
  // Nothing to mark (the default): no Markers at all. Its two verdict caches are 128 KiB that
  // every process would otherwise zero, page by page, at start-up.
  if (spec.apis.empty() && spec.kernels.empty() && spec.ranges.empty() && !spec.profiler_api) return true;
  auto* markers = new (std::nothrow) Markers;  // leaked: hooks read it until the process is gone
  if (markers == nullptr) return false;
  markers->spec = spec;
  markers->on_step = on_step;
  markers->on_profiler_api = on_profiler_api;
  size_t rejected_kernels = 0, rejected_ranges = 0;
  std::string first_kernel, first_range;
  const bool loaded =
      markers->kernels.compile(spec.kernels, spec.regex_library, rejected_kernels, first_kernel) &&
      markers->ranges.compile(spec.ranges, spec.regex_library, rejected_ranges, first_range);
  if (!loaded) rejected_ranges = spec.ranges.size();
  if (problem != nullptr) {
    *problem = describe_rejected(loaded, rejected_kernels + rejected_ranges,
                                 spec.kernels.size() + spec.ranges.size(),
                                 rejected_kernels != 0 ? first_kernel : first_range);
  }
  uint8_t bits = 0;
  if (!spec.apis.empty()) bits |= kMarkApi;
  if (!markers->kernels.empty()) bits |= kMarkKernel;
  if (!markers->ranges.empty()) bits |= kMarkRange;
  if (spec.profiler_api) bits |= kMarkProfilerApi;
  g_markers = markers;
  g_step_markers.store(bits, std::memory_order_release);
  if (bits != 0) g_hook_work.fetch_or(kHookMarking, std::memory_order_relaxed);
  return true;
}

void hooked_call_ended(const char* symbol, const void* kernel) noexcept {
  const uint8_t bits = g_step_markers.load(std::memory_order_acquire);
  Markers* m = g_markers;
  if (bits == 0 || m == nullptr || tls_agent_busy != 0) return;
  if ((bits & kMarkProfilerApi) && std::strncmp(symbol, "cudaProfilerSt", 14) == 0) {
    if (m->on_profiler_api) m->on_profiler_api(std::strcmp(symbol, "cudaProfilerStart") == 0);
  }
  bool step = (bits & kMarkApi) && api_name_matches(m->spec.apis, symbol);
  if (!step && (bits & kMarkKernel) && kernel != nullptr && is_launch(symbol)) {
    step = kernel_marks_step(*m, kernel);
  }
  if (step && m->on_step) m->on_step();
}

void range_pushed(const char* name) noexcept {
  const uint8_t bits = g_step_markers.load(std::memory_order_acquire);
  Markers* m = g_markers;
  if (!(bits & kMarkRange) || m == nullptr || tls_agent_busy != 0) return;
  if (range_marks_step(*m, name) && m->on_step) m->on_step();
}

}  // namespace profagent::collector
