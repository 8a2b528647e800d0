// The parts of collector/api.h not implemented next to their subsystem: recording state,
// re-entrancy words and external correlation. (now_slow(): clock.cpp; new_event_id_slow(),
// begin_record_slow(): thread_buffer.cpp; intern(), note_kernel_name(): names.cpp; cuda_in_use(): session.cpp.)
#include "collector/api.h"

#include "collector/device_backend.h"

namespace profagent::collector {

std::atomic<uint8_t> g_record_state{uint8_t(RecordState::Off)};
std::atomic<bool> g_device_tracing{false};
std::atomic<uint8_t> g_hook_work{kHookFirstUse};  // constant-initialised: hooks may run first

// Laid out as declared in api.h (see the note there on the TLS budget).
__thread uint32_t tls_agent_busy __attribute__((tls_model("initial-exec"))) = 0;
__thread uint8_t tls_callback_depth __attribute__((tls_model("initial-exec"))) = 0;
__thread uint8_t tls_hook_forwarding __attribute__((tls_model("initial-exec"))) = 0;
__thread uint16_t tls_runtime_depth __attribute__((tls_model("initial-exec"))) = 0;
__thread uintptr_t tls_runtime_sp __attribute__((tls_model("initial-exec"))) = 0;
__thread uintptr_t tls_hook_entry __attribute__((tls_model("initial-exec"))) = 0;

bool left_out_of_traces(std::string_view api) noexcept {
  for (std::string_view left_out : {"cudaGetDevice", "cudaSetDevice", "cudaGetLastError", "cudaEventCreate",
                                    "cudaEventCreateWithFlags", "cudaEventDestroy"}) {
    if (api == left_out) return true;
  }
  return false;
}

void push_external_id_slow(uint64_t id) noexcept {
  if (DeviceBackend* backend = g_active_device_backend.load(std::memory_order_acquire)) {
    backend->push_external_id(id);
  }
}

void pop_external_id_slow() noexcept {
  if (DeviceBackend* backend = g_active_device_backend.load(std::memory_order_acquire)) {
    backend->pop_external_id();
  }
}

}  // namespace profagent::collector
