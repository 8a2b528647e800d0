#include "hooks/diopi/install.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "collector/api.h"
#include "hooks/diopi/got_patch.h"
#include "hooks/diopi/wrapper_support.h"
#include "hooks/resolve.h"

namespace profagent::hooks::diopi {
namespace {

std::atomic<bool> g_started{false};
std::atomic<uint64_t> g_scanned_generation{0};
Reporter g_report = nullptr;        // written once in start(), before g_started
std::atomic<bool> g_shapes_reported{false};

static_assert(kRealTargetVariants <= kMaxWrapperCopies);

PatchTarget lookup_wrapper(const char* symbol) noexcept {
  size_t low = 0, high = kWrapperCount;  // kWrappers is sorted by name
  while (low < high) {
    const size_t mid = (low + high) / 2;
    const int order = std::strcmp(kWrappers[mid].name, symbol);
    if (order == 0) return {kWrappers[mid].wrappers, kWrappers[mid].reals, kRealTargetVariants};
    if (order < 0) low = mid + 1; else high = mid;
  }
  return {};
}

void report(ReportLevel level, const char* message) noexcept {
  if (g_report != nullptr) g_report(level, message);
}

// Shapes are read through the framework's own runtime functions, looked up once they are
// needed (a framework may be loaded long after start-up). Absent: one note, no shapes.
void find_runtime_functions() noexcept {
  if (!g_record_shapes.load(std::memory_order_relaxed) ||
      g_get_tensor_shape.load(std::memory_order_relaxed) != nullptr) return;
  auto* shape = reinterpret_cast<GetTensorShapeFn>(find_definition("diopiGetTensorShape"));
  auto* dtype = reinterpret_cast<GetTensorDtypeFn>(find_definition("diopiGetTensorDtype"));
  g_get_tensor_dtype.store(dtype, std::memory_order_release);
  g_get_tensor_shape.store(shape, std::memory_order_release);
  if (shape == nullptr && !g_shapes_reported.exchange(true)) {
    report(ReportLevel::Warn, "DIOPI: no loaded object defines diopiGetTensorShape; operator "
                              "input shapes are left out");
  }
}

void scan() noexcept {
  const PatchStats stats = patch_new_objects(lookup_wrapper);
  if (stats.slots_patched == 0 && stats.slots_conflict == 0) return;
  char line[256];
  std::snprintf(line, sizeof line,
                "DIOPI: %u operator slots wrapped (%u weak references left null, %u bound to a "
                "fifth definition of one operator left unwrapped, %u not writable) in %u new objects",
                stats.slots_patched, stats.slots_null, stats.slots_conflict, stats.slots_failed,
                stats.objects_scanned);
  report(stats.slots_conflict + stats.slots_failed > 0 ? ReportLevel::Warn : ReportLevel::Info, line);
  if (stats.slots_patched > 0) find_runtime_functions();
}

}  // namespace

void start(const InstallOptions& options) noexcept {
  g_report = options.report;
  g_record_shapes.store(options.record_shapes, std::memory_order_relaxed);
  g_scanned_generation.store(loader_generation(), std::memory_order_relaxed);
  g_started.store(true, std::memory_order_release);
  scan();
}

// The generation is published only once the scan that listed it is done: a thread whose
// dlopen loaded an object returns early only when every object of its generation is patched,
// never while another thread is still patching them (it scans alongside instead).
void rescan() noexcept {
  if (!g_started.load(std::memory_order_acquire) || collector::tls_agent_busy != 0) return;
  const uint64_t generation = loader_generation();
  if (g_scanned_generation.load(std::memory_order_acquire) == generation) return;
  scan();
  uint64_t published = g_scanned_generation.load(std::memory_order_relaxed);
  while (published < generation &&
         !g_scanned_generation.compare_exchange_weak(published, generation, std::memory_order_acq_rel)) {
  }
}

void forget_unloaded() noexcept {
  if (!g_started.load(std::memory_order_acquire)) return;
  forget_unloaded_objects();
  g_scanned_generation.store(0, std::memory_order_relaxed);  // the next rescan looks again
}

}  // namespace profagent::hooks::diopi
