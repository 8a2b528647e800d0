#include "collector/cupti_callbacks.h"

#include <atomic>
#include <cstring>
#include <string>
#include <string_view>

#include "collector/api.h"
#include "collector/cupti_param_bytes.h"

namespace profagent::collector {
namespace {

// What a callback id is, learned from its function name at its first call (names are interned
// then, never on later calls). Per domain, indexed by callback id.
struct CallKind {
  std::atomic<uint32_t> name{kNoName};  // kNoName: not classified yet
  std::atomic<uint8_t> kind{0};
  std::atomic<uint8_t> flags{0};
  std::atomic<bool> skip{false};
  std::atomic<int16_t> bytes_offset{-1};  // where functionParams holds the byte count
  std::atomic<uint8_t> element_bytes{1};
};
constexpr uint32_t kRuntimeIds = CUPTI_RUNTIME_TRACE_CBID_SIZE;
constexpr uint32_t kDriverIds = CUPTI_DRIVER_TRACE_CBID_SIZE;
CallKind g_runtime_kinds[kRuntimeIds];
CallKind g_driver_kinds[kDriverIds];

CallKind* kind_slot(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) noexcept {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < kRuntimeIds) return &g_runtime_kinds[cbid];
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < kDriverIds) return &g_driver_kinds[cbid];
  return nullptr;
}

bool has(std::string_view name, std::string_view part) { return name.find(part) != std::string_view::npos; }

// CUPTI may spell a runtime function with its ABI version ("cudaMemcpy_v3020"); the record
// is named as the hooks name it, by the plain function name. Driver suffixes (_v2) are part
// of the exported name and stay.
std::string_view plain_name(std::string_view name) {
  const size_t at = name.rfind("_v");
  if (at == std::string_view::npos || name.size() - at < 6) return name;
  for (size_t i = at + 2; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return name;
  }
  return name.substr(0, at);
}

uint8_t memcpy_direction(std::string_view name) {
  if (has(name, "HtoD")) return 1;  // cudaMemcpyHostToDevice
  if (has(name, "DtoH")) return 2;
  if (has(name, "DtoD")) return 3;
  return 4;  // cudaMemcpyDefault: the runtime's calls carry their direction in the arguments
}

// The event kind of an API function, as the hooks classify theirs.
void classify(CallKind& slot, CUpti_CallbackDomain domain, std::string_view name) noexcept {
  EventKind kind = EventKind::Runtime;
  uint8_t flags = domain == CUPTI_CB_DOMAIN_DRIVER_API ? kFlagDriverApi : 0;
  if (has(name, "LaunchKernel") || has(name, "LaunchCooperativeKernel")) {
    kind = EventKind::Launch, flags |= kFlagAsync;
  } else if (has(name, "GraphLaunch")) {
    kind = EventKind::GraphLaunch, flags |= kFlagAsync;
  } else if (has(name, "Memcpy")) {
    kind = EventKind::Memcpy, flags |= memcpy_direction(name);
  } else if (has(name, "Memset")) {
    kind = EventKind::Memset;
  } else if (has(name, "Malloc") || has(name, "MemAlloc")) {
    kind = EventKind::Alloc;
  } else if (has(name, "Free")) {
    kind = EventKind::Free;
  } else if (has(name, "Synchronize") || has(name, "StreamWaitEvent")) {
    kind = EventKind::Sync;
  }
  if ((kind == EventKind::Memcpy || kind == EventKind::Memset) && has(name, "Async")) flags |= kFlagAsync;
  const ByteCountField bytes = byte_count_field(plain_name(name));
  slot.bytes_offset.store(bytes.offset, std::memory_order_relaxed);
  slot.element_bytes.store(bytes.element_bytes, std::memory_order_relaxed);
  slot.kind.store(uint8_t(kind), std::memory_order_relaxed);
  slot.flags.store(flags, std::memory_order_relaxed);
  // nvcc's registration and launch-configuration calls are the runtime's plumbing, not the
  // program's API calls (the hooks do not record them either); its launch (__cudaLaunchKernel,
  // what `<<<>>>` compiles to in CUDA 13) is recorded, as the hooks record it. The calls left
  // out of traces (collector/api.h) are left out here as the hooks leave them out.
  const bool plumbing = name.starts_with("__cuda") && kind != EventKind::Launch;
  const bool left_out = domain == CUPTI_CB_DOMAIN_RUNTIME_API && left_out_of_traces(plain_name(name));
  slot.skip.store(plumbing || left_out, std::memory_order_relaxed);
  slot.name.store(intern(plain_name(name)), std::memory_order_release);
}

CallKind* classified(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& data) noexcept {
  CallKind* slot = kind_slot(domain, cbid);
  if (slot == nullptr) return nullptr;
  if (slot->name.load(std::memory_order_acquire) == kNoName) {
    classify(*slot, domain, data.functionName != nullptr ? data.functionName : "");
  }
  return slot->skip.load(std::memory_order_relaxed) ? nullptr : slot;
}

// Not ours to record: a hook has the call, the agent made it, or it is part of a recorded one
// (tls_callback_depth: calls this callback is recording, enter seen and exit not yet).
bool seen_elsewhere() noexcept {
  return tls_agent_busy != 0 || tls_runtime_depth != 0 || tls_hook_forwarding != 0 || tls_callback_depth != 0;
}

// correlationData of a runtime call left out of traces: not recorded, but the driver calls the
// runtime makes inside it are its own (cudaGetDevice reaches cuCtxGetDevice_v2, thousands of
// times in a training step), so they are not the program's either.
constexpr uint64_t kHoldsInnerCalls = ~uint64_t{0};

void on_enter(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& data) noexcept {
  *data.correlationData = 0;  // 0: this call is not ours (exit does nothing)
  if (!recording() && !step_markers_armed()) return;
  if (seen_elsewhere()) return;
  if (classified(domain, cbid, data) == nullptr) {
    if (domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
    *data.correlationData = kHoldsInnerCalls;
    ++tls_callback_depth;
    return;
  }
  if (tls_cursor == nullptr) (void)new_event_id();  // registered before the start is read (call_entered)
  call_entered();
  const uint64_t start = now();
  *data.correlationData = start != 0 && start != kHoldsInnerCalls ? start : 1;
  ++tls_callback_depth;
}

// What the hooks put in arg0 for copies, sets and allocations: the byte count (0 unknown).
uint64_t bytes_of(const CallKind& slot, const CUpti_CallbackData& data) noexcept {
  const int16_t offset = slot.bytes_offset.load(std::memory_order_relaxed);
  if (offset < 0 || data.functionParams == nullptr) return 0;
  size_t count = 0;
  std::memcpy(&count, static_cast<const char*>(data.functionParams) + offset, sizeof count);
  return uint64_t(count) * slot.element_bytes.load(std::memory_order_relaxed);
}

void record_call(const CallKind& slot, uint64_t start, const CUpti_CallbackData& data) noexcept {
  const uint64_t end = now();
  const uint64_t id = new_event_id();
  HostEvent* event = begin_record();
  if (event == nullptr) return;  // dropped and counted by the collector
  const int32_t result = data.functionReturnValue ? *static_cast<const int32_t*>(data.functionReturnValue) : 0;
  event->start = start;
  event->end = end;
  event->id = id;
  event->arg0 = data.correlationId;
  event->arg1 = bytes_of(slot, data);
  event->name = slot.name.load(std::memory_order_relaxed);
  event->kind = slot.kind.load(std::memory_order_relaxed);
  event->flags = uint8_t(slot.flags.load(std::memory_order_relaxed) | kFlagCallback | (result != 0 ? kFlagFailed : 0));
  event->result = int16_t(result < INT16_MIN ? INT16_MIN : result > INT16_MAX ? INT16_MAX : result);
  commit_record();
  // Inside the driver: the stack starts with the driver's and CUPTI's frames, then the caller's.
  record_call_stack(id, end);
}

void on_exit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& data) noexcept {
  const uint64_t start = *data.correlationData;
  if (start == 0) return;
  --tls_callback_depth;
  if (start == kHoldsInnerCalls) return;
  const CallKind* slot = kind_slot(domain, cbid);
  if (recording()) record_call(*slot, start, data);
  call_left();
  // The call ends its step after it was recorded (it belongs to the step it ends), as a
  // hooked call does. No kernel handle: kernel:REGEX markers need the hooks' registrations.
  if (step_markers_armed() && data.functionName != nullptr) hooked_call_ended(data.functionName, nullptr);
}

}  // namespace

void CUPTIAPI on_api_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain == CUPTI_CB_DOMAIN_RESOURCE && userdata != nullptr) {
    return on_graph_resource(*static_cast<const CuptiApi*>(userdata), cbid, data);
  }
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* call = static_cast<const CUpti_CallbackData*>(data);
  if (call == nullptr || call->correlationData == nullptr) return;
  if (call->callbackSite == CUPTI_API_ENTER) {
    on_enter(domain, cbid, *call);
  } else {
    on_exit(domain, cbid, *call);
  }
}

bool enable_api_callbacks(const CuptiApi& api, CUpti_SubscriberHandle subscriber, bool enable) noexcept {
  AgentBusy busy;
  for (CUpti_CallbackDomain domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
    if (api.enable_domain(enable ? 1 : 0, subscriber, domain) != CUPTI_SUCCESS) return false;
  }
  return true;
}

bool subscribe_api_callbacks(const CuptiApi& api, CUpti_SubscriberHandle* subscriber, std::string* why) noexcept {
  try {
    if (!api.subscribe || !api.enable_domain) {
      *why = api.path + " has no callback API";
      return false;
    }
    AgentBusy busy;
    const CUptiResult result = api.subscribe(subscriber, &on_api_callback, const_cast<CuptiApi*>(&api));
    if (result != CUPTI_SUCCESS) {
      *why = "cuptiSubscribe returned " + api.error_name(result);
      return false;
    }
    if (enable_api_callbacks(api, *subscriber, true)) return true;
    *why = "cuptiEnableDomain refused the runtime or driver API domain";
    if (api.unsubscribe) api.unsubscribe(*subscriber);
    return false;
  } catch (...) {
    *why = "out of memory";
    return false;
  }
}

}  // namespace profagent::collector
