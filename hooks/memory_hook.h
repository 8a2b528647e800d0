// Allocation hooks: PROFAGENT_HOOK plus the allocation bookkeeping of PROFAGENT_PROFILE_MEMORY.
//
// With memory profiling off an allocation hook is exactly a PROFAGENT_HOOK (one more relaxed
// load). With it on, every call of the program (not the runtime reaching another hooked
// function, not the agent's own) is booked in the collector's ledger — also while nothing is
// recorded, so totals stay exact across idle steps — and, while recording, also recorded as
// the usual host event, whose id the allocation record carries (its operator, its row).
#pragma once

#include <cuda_runtime_api.h>

#include "hooks/cudart_hooks.h"

namespace profagent::hooks {

// What one allocation call was: its host event payload and what it did to memory.
struct MemoryCall {
  Payload payload;
  collector::MemoryOp op;
};

// The device an allocation went to: the calling thread's current device, asked of the same
// runtime (its own call, not the program's: nothing records it).
int32_t current_device(RealSymbol& get_device) noexcept;

// Books `call` (device and API name filled in here); `event_id` is its host event's, or 0.
void book_memory(Site& site, RealSymbol& get_device, MemoryCall call, uint64_t event_id) noexcept;

template <typename Fn, typename Describe, typename... Args>
__attribute__((noinline)) cudaError_t intercept_memory(CudartSite& site, RealSymbol& get_device,
                                                       Describe& describe, Args... args) {
  auto* real = reinterpret_cast<Fn*>(resolve(site.real));
  if (real == nullptr) {
    report_unresolved(site);
    return unresolved_result<CudaRuntime, cudaError_t>();
  }
  collector::HookForwarding forwarding;  // the CUPTI callback leaves this call alone
  const FirstUse first_use = note_first_use<CudaRuntime>();
  collector::RuntimeGuard guard;
  if (!guard.outermost_of_program()) return real(args...);
  const bool recording = collector::recording();
  const uint64_t id = recording ? collector::new_event_id() : 0;
  const collector::InCall in_call;  // until the event is committed
  const uint64_t start = recording ? collector::now() : 0;
  const uint64_t call_ns = recording ? collector::memory_call_starts() : 0;
  const cudaError_t result = recording ? call_with_external_id(id, real, args...) : real(args...);
  MemoryCall call = describe(result);
  call.op.call_ns = call_ns;
  book_memory(site, get_device, call, id);
  // The allocation record carries `id`: with stacks on, its call site is this event's stack.
  if (recording && collector::stacks_on()) record_call<CudaRuntime, true>(site, id, start, result, call.payload);
  else if (recording) record_call<CudaRuntime, false>(site, id, start, result, call.payload);
  if (collector::step_markers_armed()) collector::hooked_call_ended(site.real.name, nullptr);
  return result;
}

// The payload and op of the calls (hooks/cuda_memory.cpp uses them in its hook lines).
inline uint64_t pointer_word(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer); }

// A failed allocation is an out-of-memory only when the call says so; any other error (an
// invalid value, memory already registered) changes nothing and is booked as the refused call
// it is, with its error.
inline collector::MemoryOpType allocation_outcome(cudaError_t result) {
  if (result == cudaSuccess) return collector::MemoryOpType::Alloc;
  return result == cudaErrorMemoryAllocation ? collector::MemoryOpType::FailedAlloc : collector::MemoryOpType::Refused;
}

inline MemoryCall allocation(cudaError_t result, MemoryKind kind, const void* pointer, size_t bytes) {
  const uint64_t address = result == cudaSuccess ? pointer_word(pointer) : 0;
  collector::MemoryOp op;
  op.type = allocation_outcome(result);
  op.error = int32_t(result);
  op.kind = kind;
  op.address = address;
  op.bytes = bytes;
  return {{EventKind::Alloc, 0, bytes, address}, op};
}

inline MemoryCall release(cudaError_t result, const void* pointer) {
  collector::MemoryOp op;
  op.type = result == cudaSuccess || pointer == nullptr ? collector::MemoryOpType::Free : collector::MemoryOpType::FailedFree;
  op.address = pointer_word(pointer);
  return {{EventKind::Free, 0, pointer_word(pointer), 0}, op};
}

}  // namespace profagent::hooks

// One version of PROFAGENT_MEMORY_HOOK: as PROFAGENT_HOOK_ONE (hooks/hook.h), but `call` (a
// MemoryCall, evaluated after the real call with its `result`) describes the call; `payload` is
// what the hook records when memory is not profiled; get_device_<tag> is cudaGetDevice of the
// runtime of that version.
#define PROFAGENT_MEMORY_HOOK_ONE(Library, version, tag, kind, symbol_version, name, params, args, payload, call) \
  PROFAGENT_DECLARE_SITE(Library, version, tag, name)                                                           \
  PROFAGENT_HOOK_FUNCTION(kind, tag, symbol_version, name, params) {                                            \
    if (!::profagent::collector::memory_tracking()) {                                                           \
      if (auto* real = ::profagent::hooks::forward_target<decltype(name)>(site_##name##_##tag)) {               \
        return real args;                                                                                       \
      }                                                                                                         \
      return ::profagent::hooks::intercept_hook<decltype(name)>(                                                \
          site_##name##_##tag, [&]() noexcept -> ::profagent::hooks::Payload { return payload; }                \
          PROFAGENT_TRAILING_ARGS args);                                                                        \
    }                                                                                                           \
    ::profagent::collector::note_hook_entry(__builtin_dwarf_cfa());                                             \
    auto describe = [&](cudaError_t result) noexcept -> ::profagent::hooks::MemoryCall { return call; };        \
    return ::profagent::hooks::intercept_memory<decltype(name)>(                                                \
        site_##name##_##tag, get_device_##tag, describe PROFAGENT_TRAILING_ARGS args);                          \
  }

// An allocation function, every runtime major.
#define PROFAGENT_MEMORY_HOOK_NAMED(name, params, args, payload, call) \
  PROFAGENT_LIBRARY_cudart(PROFAGENT_MEMORY_HOOK_ONE, name, params, args, payload, call)

// An allocation function and its per-thread default stream variants (hooks/cudart_hooks.h).
#define PROFAGENT_MEMORY_HOOK(name, params, args, payload, call)   \
  PROFAGENT_MEMORY_HOOK_NAMED(name, params, args, payload, call) \
  PROFAGENT_STREAM_VARIANTS_##name(PROFAGENT_MEMORY_HOOK_NAMED, params, args, payload, call)
