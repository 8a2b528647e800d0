#include "device.h"

#include "config.h"

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

}  // namespace devsim
