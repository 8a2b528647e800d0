// Step markers: matching hooked calls against PROFAGENT_STEP_ON (collector/step_markers.h).
#include "collector/step_markers.h"

#include <cstring>
#include <regex>
#include <string_view>

#include "collector/names.h"

namespace profagent::collector {

std::atomic<uint8_t> g_step_markers{0};

namespace {

struct Markers {
  StepMarkerSpec spec;
  std::vector<std::regex> kernels;
  std::vector<std::regex> ranges;
  StepHandler on_step = nullptr;
  ProfilerApiHandler on_profiler_api = nullptr;
};
const Markers* g_markers = nullptr;  // leaked; written once before g_step_markers is set

// Per kernel handle: did its demangled name match? Open addressing over atomics, so the
// launch path takes no lock; a full table just means the regex runs again.
constexpr size_t kCacheSlots = 4096;
constexpr size_t kProbes = 16;
enum Verdict : uint8_t { kUnknown = 0, kNo = 1, kYes = 2 };
struct CacheSlot {
  std::atomic<const void*> key{nullptr};
  std::atomic<uint8_t> verdict{kUnknown};
};
CacheSlot g_kernel_cache[kCacheSlots];

size_t slot_of(const void* key) {
  return (reinterpret_cast<uintptr_t>(key) >> 4) * 0x9E3779B97F4A7C15ull >> 52;
}

bool any_match(const std::vector<std::regex>& patterns, const std::string& text) {
  for (const std::regex& pattern : patterns) {
    if (std::regex_search(text, pattern)) return true;
  }
  return false;
}

bool kernel_name_matches(const void* kernel) {
  try {
    const auto names = kernel_names_snapshot();  // only on a cache miss: once per kernel
    const auto it = names.find(kernel);
    return it != names.end() && any_match(g_markers->kernels, demangle(it->second));
  } catch (...) {
    return false;
  }
}

bool kernel_marks_step(const void* kernel) noexcept {
  const size_t home = slot_of(kernel);
  for (size_t probe = 0; probe < kProbes; ++probe) {
    CacheSlot& slot = g_kernel_cache[(home + probe) % kCacheSlots];
    const void* key = slot.key.load(std::memory_order_acquire);
    if (key == kernel) {
      const uint8_t verdict = slot.verdict.load(std::memory_order_acquire);
      if (verdict != kUnknown) return verdict == kYes;
      break;  // another thread is deciding: decide too
    }
    if (key == nullptr) {
      const void* expected = nullptr;
      if (!slot.key.compare_exchange_strong(expected, kernel) && expected != kernel) continue;
      const bool yes = kernel_name_matches(kernel);
      slot.verdict.store(yes ? kYes : kNo, std::memory_order_release);
      return yes;
    }
  }
  return kernel_name_matches(kernel);
}

bool is_launch(const char* symbol) {
  return std::strncmp(symbol, "cudaLaunch", 10) == 0 || std::strncmp(symbol, "__cudaLaunch", 12) == 0;
}

}  // namespace

bool api_name_matches(const std::vector<std::string>& apis, const char* symbol) noexcept {
  std::string_view name(symbol);
  for (std::string_view suffix : {"_ptsz", "_ptds"}) {
    if (name.size() > suffix.size() && name.ends_with(suffix)) name.remove_suffix(suffix.size());
  }
  for (const std::string& api : apis) {
    if (name == api) return true;
  }
  return false;
}

bool configure_step_markers(const StepMarkerSpec& spec, StepHandler on_step,
                            ProfilerApiHandler on_profiler_api, std::string* error) {
  auto* markers = new Markers;  // leaked: hooks read it until the process is gone
  markers->spec = spec;
  markers->on_step = on_step;
  markers->on_profiler_api = on_profiler_api;
  std::string pattern;
  try {
    for (const std::string& p : spec.kernels) pattern = p, markers->kernels.emplace_back(p);
    for (const std::string& p : spec.ranges) pattern = p, markers->ranges.emplace_back(p);
  } catch (const std::regex_error& e) {
    if (error) *error = "'" + pattern + "' is not a regular expression (" + e.what() + ")";
    delete markers;
    return false;
  }
  uint8_t bits = 0;
  if (!spec.apis.empty()) bits |= kMarkApi;
  if (!spec.kernels.empty()) bits |= kMarkKernel;
  if (!spec.ranges.empty()) bits |= kMarkRange;
  if (spec.profiler_api) bits |= kMarkProfilerApi;
  g_markers = markers;
  g_step_markers.store(bits, std::memory_order_release);
  if (bits != 0) g_hook_work.fetch_or(kHookMarking, std::memory_order_relaxed);
  return true;
}

void hooked_call_ended(const char* symbol, const void* kernel) noexcept {
  const uint8_t bits = g_step_markers.load(std::memory_order_acquire);
  const Markers* m = g_markers;
  if (bits == 0 || m == nullptr || tls_agent_busy != 0) return;
  if ((bits & kMarkProfilerApi) && std::strncmp(symbol, "cudaProfilerSt", 14) == 0) {
    if (m->on_profiler_api) m->on_profiler_api(std::strcmp(symbol, "cudaProfilerStart") == 0);
  }
  bool step = (bits & kMarkApi) && api_name_matches(m->spec.apis, symbol);
  if (!step && (bits & kMarkKernel) && kernel != nullptr && is_launch(symbol)) {
    step = kernel_marks_step(kernel);
  }
  if (step && m->on_step) m->on_step();
}

void range_pushed(const char* name) noexcept {
  const uint8_t bits = g_step_markers.load(std::memory_order_acquire);
  const Markers* m = g_markers;
  if (!(bits & kMarkRange) || m == nullptr || tls_agent_busy != 0) return;
  bool step = false;
  try {
    step = any_match(m->ranges, name != nullptr ? name : "");
  } catch (...) {
  }
  if (step && m->on_step) m->on_step();
}

}  // namespace profagent::collector
