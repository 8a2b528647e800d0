#include "device.h"

#include <atomic>

#include "config.h"
#include "api_scope.h"
#include "timeline.h"

namespace devsim {
namespace {
__thread int t_current_device = 0;
}

int device_count() { return config().device_count; }
bool valid_device(int device) { return device >= 0 && device < device_count(); }
int current_device() { return t_current_device; }
void set_current_device(int device) { t_current_device = device; }
uint32_t context_id(int device) { return static_cast<uint32_t>(device) + 1; }
const char* device_name() { return "devsim simulated GPU"; }

namespace {
std::atomic<int> g_modules{0};
std::atomic<bool> g_torn_down{false};
}  // namespace

void note_module_registered() { g_modules.fetch_add(1); }
void note_module_unregistered() {
  if (g_modules.fetch_sub(1) != 1) return;
  synchronize_all_devices();
  if (Tracer* t = tracer()) t->on_runtime_teardown();
  g_torn_down.store(true);
}
bool runtime_torn_down() { return g_torn_down.load(); }

}  // namespace devsim
