// The interposed CUDA runtime allocation functions (hooks/memory_hook.h): one
// PROFAGENT_MEMORY_HOOK line each (which also hooks the function's per-thread default stream
// variants), signatures from cuda_runtime_api.h.
#include <cuda_runtime_api.h>

#include "hooks/memory_hook.h"

namespace profagent::hooks {

int32_t current_device(RealSymbol& get_device) noexcept {
  auto* real = reinterpret_cast<decltype(cudaGetDevice)*>(resolve(get_device));
  int device = 0;
  if (real == nullptr) return 0;
  collector::AgentBusy busy;
  return real(&device) == cudaSuccess ? int32_t(device) : 0;
}

void book_memory(Site& site, RealSymbol& get_device, MemoryCall call, uint64_t event_id) noexcept {
  collector::MemoryOp& op = call.op;
  const bool allocates = op.type == collector::MemoryOpType::Alloc || op.type == collector::MemoryOpType::FailedAlloc ||
                         op.type == collector::MemoryOpType::Refused;
  if (allocates) op.device = is_host_memory(op.kind) ? kHostDevice : current_device(get_device);
  op.api = site_name(site);
  collector::note_memory(op, event_id);
}

}  // namespace profagent::hooks

namespace {
using profagent::EventKind;
using profagent::MemoryKind;
using profagent::hooks::allocation;
using profagent::hooks::MemoryCall;
using profagent::hooks::Payload;
using profagent::hooks::pointer_word;
using profagent::hooks::release;

// cudaGetDevice of each runtime major, for the device of an allocation.
profagent::hooks::RealSymbol get_device_13{"cudaGetDevice", &profagent::hooks::kCudart13};
profagent::hooks::RealSymbol get_device_12{"cudaGetDevice", &profagent::hooks::kCudart12};
PROFAGENT_REGISTER_REAL_SYMBOL(get_device_13, get_device_13);
PROFAGENT_REGISTER_REAL_SYMBOL(get_device_12, get_device_12);

// What the hooks record when memory is not profiled (the pointer is read after the call).
Payload alloc_event(size_t bytes, void* const* pointer) {
  return {EventKind::Alloc, 0, bytes, pointer != nullptr ? pointer_word(*pointer) : 0};
}
Payload free_event(const void* pointer) { return {EventKind::Free, 0, pointer_word(pointer), 0}; }
Payload runtime_event(const void* pointer, size_t bytes = 0) { return {EventKind::Runtime, 0, pointer_word(pointer), bytes}; }

const void* out(void* const* pointer) { return pointer != nullptr ? *pointer : nullptr; }
size_t pitched_bytes(const size_t* pitch, size_t width, size_t height) {
  return (pitch != nullptr ? *pitch : width) * height;
}
size_t extent_bytes(const cudaPitchedPtr* p, cudaExtent e) {
  return (p != nullptr && p->pitch != 0 ? p->pitch : e.width) * e.height * e.depth;
}
const void* pitched_pointer(const cudaPitchedPtr* p) { return p != nullptr ? p->ptr : nullptr; }
// cudaHostRegister keeps its host event as before (a runtime call), and books pinned memory;
// a refused registration keeps the pointer it was asked for.
MemoryCall registered(cudaError_t result, const void* pointer, size_t bytes) {
  MemoryCall call = allocation(result, MemoryKind::Registered, pointer, bytes);
  call.payload = runtime_event(pointer, bytes);
  if (call.op.type == profagent::collector::MemoryOpType::Refused) call.op.address = pointer_word(pointer);
  return call;
}
// Registered memory has no device record: an unknown pointer is known to be unknown at once.
MemoryCall unregistered(cudaError_t result, const void* pointer) {
  MemoryCall call = release(result, pointer);
  call.payload = runtime_event(pointer);
  call.op.kind = MemoryKind::Registered;
  return call;
}
constexpr MemoryKind kDevice = MemoryKind::Device;
constexpr MemoryKind kPool = MemoryKind::Pool;
}  // namespace

PROFAGENT_MEMORY_HOOK(cudaMalloc, (void** p, size_t n), (p, n), alloc_event(n, p), allocation(result, kDevice, out(p), n))
PROFAGENT_MEMORY_HOOK(cudaMallocPitch, (void** p, size_t* pitch, size_t w, size_t h), (p, pitch, w, h), alloc_event(pitched_bytes(pitch, w, h), p), allocation(result, kDevice, out(p), pitched_bytes(pitch, w, h)))
PROFAGENT_MEMORY_HOOK(cudaMalloc3D, (cudaPitchedPtr* p, cudaExtent e), (p, e), runtime_event(pitched_pointer(p), extent_bytes(p, e)), allocation(result, kDevice, pitched_pointer(p), extent_bytes(p, e)))
PROFAGENT_MEMORY_HOOK(cudaMallocManaged, (void** p, size_t n, unsigned int f), (p, n, f), alloc_event(n, p), allocation(result, MemoryKind::Managed, out(p), n))
PROFAGENT_MEMORY_HOOK(cudaMallocAsync, (void** p, size_t n, cudaStream_t st), (p, n, st), alloc_event(n, p), allocation(result, kPool, out(p), n))
PROFAGENT_MEMORY_HOOK(cudaMallocFromPoolAsync, (void** p, size_t n, cudaMemPool_t m, cudaStream_t st), (p, n, m, st), alloc_event(n, p), allocation(result, kPool, out(p), n))
PROFAGENT_MEMORY_HOOK(cudaMallocHost, (void** p, size_t n), (p, n), alloc_event(n, p), allocation(result, MemoryKind::Pinned, out(p), n))
PROFAGENT_MEMORY_HOOK(cudaHostAlloc, (void** p, size_t n, unsigned int f), (p, n, f), alloc_event(n, p), allocation(result, MemoryKind::Pinned, out(p), n))
PROFAGENT_MEMORY_HOOK(cudaHostRegister, (void* p, size_t n, unsigned int f), (p, n, f), runtime_event(p, n), registered(result, p, n))
PROFAGENT_MEMORY_HOOK(cudaFree, (void* p), (p), free_event(p), release(result, p))
PROFAGENT_MEMORY_HOOK(cudaFreeAsync, (void* p, cudaStream_t st), (p, st), free_event(p), release(result, p))
PROFAGENT_MEMORY_HOOK(cudaFreeHost, (void* p), (p), free_event(p), release(result, p))
PROFAGENT_MEMORY_HOOK(cudaHostUnregister, (void* p), (p), runtime_event(p), unregistered(result, p))
