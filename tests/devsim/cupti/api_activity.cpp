// Exported activity API of the simulated libcupti.so.13 (cupti_activity.h).
#include "api_guard.h"
#include "external_correlation.h"
#include "faults.h"
#include "records.h"

#include <cupti.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>


using profagent::devsim_cupti::first_record_offset;
using profagent::devsim_cupti::guarded;
using profagent::devsim_cupti::NeedsDriver;
using profagent::devsim_cupti::record_size;
using profagent::devsim_cupti::Session;

namespace {

// Values stored for cuptiActivitySet/GetAttribute, CUPTI's documented defaults.
struct Attributes {
  size_t device_buffer_size = 3200000;
  size_t device_buffer_size_cdp = 8388608;
  size_t device_buffer_pool_limit = 250;
  size_t semaphore_pool_size = 65536;
  size_t semaphore_pool_limit = 65536;
  uint8_t zeroed_out_buffer = 0;
  size_t device_buffer_pre_allocate = 3;
  size_t semaphore_pre_allocate = 3;
  uint8_t host_pinned = 0;
  uint8_t per_thread_buffer = 1;  // the CUDA 13 default
  size_t device_graphs_buffer_size = 3200000;
};
Attributes g_attributes;

// What NVIDIA's CUPTI does when flushed after the runtime tore itself down (devsim's core/device.h):
// the process dies of SIGSEGV. Said first, so a test's output shows why.
[[noreturn]] void crash_after_teardown(const char* function) {
  char line[200];
  const int n = snprintf(line, sizeof line,
                         "devsim: %s after the CUDA runtime's teardown (its last module was unregistered); "
                         "NVIDIA's CUPTI crashes here\n", function);
  if (n > 0) (void)!write(STDERR_FILENO, line, size_t(n) < sizeof line ? size_t(n) : sizeof line - 1);
  signal(SIGSEGV, SIG_DFL);
  raise(SIGSEGV);
  _exit(139);
}

// Pointer to and size of the stored value of an attribute, or nullptr.
void* attribute_slot(CUpti_ActivityAttribute attr, size_t* size) {
  auto slot = [size](auto& value) -> void* { *size = sizeof(value); return &value; };
  switch (attr) {
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE: return slot(g_attributes.device_buffer_size);
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_CDP: return slot(g_attributes.device_buffer_size_cdp);
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT: return slot(g_attributes.device_buffer_pool_limit);
    case CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_POOL_SIZE: return slot(g_attributes.semaphore_pool_size);
    case CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_POOL_LIMIT: return slot(g_attributes.semaphore_pool_limit);
    case CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER: return slot(g_attributes.zeroed_out_buffer);
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE: return slot(g_attributes.device_buffer_pre_allocate);
    case CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_PRE_ALLOCATE_VALUE: return slot(g_attributes.semaphore_pre_allocate);
    case CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED: return slot(g_attributes.host_pinned);
    case CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER: return slot(g_attributes.per_thread_buffer);
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_DEVICE_GRAPHS: return slot(g_attributes.device_graphs_buffer_size);
    default: return nullptr;
  }
}

CUptiResult next_record(uint8_t* buffer, size_t valid_size, CUpti_Activity** record) {
  if (buffer == nullptr || record == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  uint8_t* next = buffer + first_record_offset(buffer);
  if (*record != nullptr) {
    auto* previous = reinterpret_cast<uint8_t*>(*record);
    next = previous + record_size((*record)->kind);
  }
  if (next + sizeof(CUpti_Activity) > buffer + valid_size) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  const size_t size = record_size(reinterpret_cast<CUpti_Activity*>(next)->kind);
  if (size == 0 || next + size > buffer + valid_size) return CUPTI_ERROR_INVALID_KIND;
  *record = reinterpret_cast<CUpti_Activity*>(next);
  return CUPTI_SUCCESS;
}

}  // namespace

extern "C" {

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  return guarded("cuptiActivityEnable", NeedsDriver::Yes, [&](Session& s) { return s.enable_kind(kind); });
}

CUptiResult CUPTIAPI cuptiActivityEnableAndDump(CUpti_ActivityKind kind) {
  return guarded("cuptiActivityEnableAndDump", NeedsDriver::Yes, [&](Session& s) { return s.enable_kind(kind); });
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
  return guarded("cuptiActivityDisable", NeedsDriver::Yes, [&](Session& s) { return s.disable_kind(kind); });
}

// devsim has one context per device and applies per-context switches to all of them.
CUptiResult CUPTIAPI cuptiActivityEnableContext(CUcontext, CUpti_ActivityKind kind) {
  return guarded("cuptiActivityEnableContext", NeedsDriver::Yes, [&](Session& s) { return s.enable_kind(kind); });
}

CUptiResult CUPTIAPI cuptiActivityDisableContext(CUcontext, CUpti_ActivityKind kind) {
  return guarded("cuptiActivityDisableContext", NeedsDriver::Yes, [&](Session& s) { return s.disable_kind(kind); });
}

CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) {
  return guarded("cuptiActivityEnableRuntimeApi", NeedsDriver::Yes, [&](Session& s) {
    return s.enable_api_records(devsim::ApiDomain::Runtime, cbid, enable != 0);
  });
}

CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) {
  return guarded("cuptiActivityEnableDriverApi", NeedsDriver::Yes, [&](Session& s) {
    return s.enable_api_records(devsim::ApiDomain::Driver, cbid, enable != 0);
  });
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                    CUpti_BuffersCallbackCompleteFunc completed) {
  return guarded("cuptiActivityRegisterCallbacks", NeedsDriver::No, [&](Session& s) {
    if (requested == nullptr || completed == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    s.buffers().set_callbacks(requested, completed);
    return CUPTI_SUCCESS;
  });
}

// Called once per record: a walk over the client's own buffer, as NVIDIA's is, with no session
// state. The guard (its per-call lookup of injected faults) is paid only when a test injects
// some; an error is still remembered for cuptiGetLastError.
CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid_size, CUpti_Activity** record) {
  static const bool none_injected = profagent::devsim_cupti::faults().failing_functions.empty();  // read once
  if (none_injected) {
    const CUptiResult result = next_record(buffer, valid_size, record);
    return result == CUPTI_SUCCESS ? result : profagent::devsim_cupti::remember_result(result);
  }
  return guarded("cuptiActivityGetNextRecord", NeedsDriver::No,
                 [&](Session&) { return next_record(buffer, valid_size, record); });
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag) {
  return guarded("cuptiActivityFlushAll", NeedsDriver::Yes, [&](Session& s) {
    if (s.runtime_torn_down()) crash_after_teardown("cuptiActivityFlushAll");
    if (!s.buffers().has_callbacks()) return CUPTI_ERROR_INVALID_OPERATION;
    s.buffers().flush((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0);
    return CUPTI_SUCCESS;
  });
}

// Deprecated in CUDA 13: context and stream are ignored, as cupti_activity.h says.
CUptiResult CUPTIAPI cuptiActivityFlush(CUcontext, uint32_t, uint32_t flag) {
  return cuptiActivityFlushAll(flag);
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  return guarded("cuptiActivityGetNumDroppedRecords", NeedsDriver::No, [&](Session& s) {
    if (dropped == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    *dropped = s.buffers().take_dropped();
    return CUPTI_SUCCESS;
  });
}

CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id) {
  using namespace profagent::devsim_cupti;
  return guarded("cuptiActivityPushExternalCorrelationId", NeedsDriver::Yes, [&](Session&) {
    if (!valid_external_kind(kind)) return CUPTI_ERROR_INVALID_PARAMETER;
    push_external_id(kind, id);
    return CUPTI_SUCCESS;
  });
}

CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t* last_id) {
  using namespace profagent::devsim_cupti;
  return guarded("cuptiActivityPopExternalCorrelationId", NeedsDriver::Yes, [&](Session&) {
    if (!valid_external_kind(kind)) return CUPTI_ERROR_INVALID_PARAMETER;
    return pop_external_id(kind, last_id) ? CUPTI_SUCCESS : CUPTI_ERROR_QUEUE_EMPTY;
  });
}

CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc callback) {
  return guarded("cuptiActivityRegisterTimestampCallback", NeedsDriver::No, [&](Session& s) {
    if (callback == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    s.clock().use_client_clock(callback);
    return CUPTI_SUCCESS;
  });
}

CUptiResult CUPTIAPI cuptiActivityEnableLatencyTimestamps(uint8_t enable) {
  return guarded("cuptiActivityEnableLatencyTimestamps", NeedsDriver::Yes, [&](Session& s) {
    s.set_latency_timestamps(enable != 0);
    return CUPTI_SUCCESS;
  });
}

CUptiResult CUPTIAPI cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t* value_size, void* value) {
  return guarded("cuptiActivitySetAttribute", NeedsDriver::Yes, [&](Session&) {
    size_t size = 0;
    void* slot = attribute_slot(attr, &size);
    if (slot == nullptr || value_size == nullptr || value == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    if (*value_size < size) return CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT;
    std::memcpy(slot, value, size);
    return CUPTI_SUCCESS;
  });
}

CUptiResult CUPTIAPI cuptiActivityGetAttribute(CUpti_ActivityAttribute attr, size_t* value_size, void* value) {
  return guarded("cuptiActivityGetAttribute", NeedsDriver::Yes, [&](Session&) {
    size_t size = 0;
    void* slot = attribute_slot(attr, &size);
    if (slot == nullptr || value_size == nullptr || value == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    if (*value_size < size) return CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT;
    std::memcpy(value, slot, size);
    *value_size = size;
    return CUPTI_SUCCESS;
  });
}

CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) {
  return guarded("cuptiSetThreadIdType", NeedsDriver::No, [&](Session& s) {
    if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT && type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) {
      return CUPTI_ERROR_INVALID_PARAMETER;
    }
    s.set_system_thread_ids(type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    return CUPTI_SUCCESS;
  });
}

CUptiResult CUPTIAPI cuptiGetThreadIdType(CUpti_ActivityThreadIdType* type) {
  return guarded("cuptiGetThreadIdType", NeedsDriver::No, [&](Session& s) {
    if (type == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    *type = s.system_thread_ids() ? CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM : CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
    return CUPTI_SUCCESS;
  });
}

}  // extern "C"
