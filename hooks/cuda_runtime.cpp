// The interposed CUDA runtime symbols: one PROFAGENT_HOOK line each, signatures from
// cuda_runtime_api.h. Each line also hooks the function's per-thread default stream variants
// (`_ptsz`, `_ptds`: hooks/cudart_hooks.h), and every hook is exported once per runtime major
// (hooks/cudart.h).
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include "hooks/cudart_hooks.h"
#include "hooks/graph_work.h"
#include "hooks/stream_capture.h"

namespace {
using profagent::EventKind;
using profagent::hooks::Payload;
namespace capture = profagent::hooks::capture;
namespace graph_work = profagent::hooks::graph_work;

uint64_t word(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer); }

Payload launch(const void* function, cudaStream_t stream) {
  const uint8_t flags = profagent::kFlagAsync | (capture::is_capturing(stream) ? profagent::kFlagCaptured : 0);
  return {EventKind::Launch, flags, word(function), word(stream)};
}
Payload launch_ex(const cudaLaunchConfig_t* config, const void* function) {
  return launch(function, config != nullptr ? config->stream : nullptr);
}
Payload graph_launch(cudaGraphExec_t graph, cudaStream_t stream) {
  // Launched into a capture, a graph becomes a node of the graph being built.
  const uint8_t flags = profagent::kFlagAsync | (capture::is_capturing(stream) ? profagent::kFlagCaptured : 0) |
                        (graph_work::without_device_work(graph) ? profagent::kFlagGraphWithoutWork : 0);
  return {EventKind::GraphLaunch, flags, word(graph), word(stream)};
}
Payload copy(size_t bytes, cudaMemcpyKind kind, cudaStream_t stream = nullptr, bool async = false) {
  const uint8_t flags = (uint8_t(kind) & profagent::kMemcpyKindMask) | (async ? profagent::kFlagAsync : 0) |
                        (async && capture::is_capturing(stream) ? profagent::kFlagCaptured : 0);
  return {EventKind::Memcpy, flags, bytes, word(stream)};
}
Payload copy_async(size_t bytes, cudaMemcpyKind kind, cudaStream_t stream) { return copy(bytes, kind, stream, true); }
Payload set(size_t bytes, cudaStream_t stream = nullptr, bool async = false) {
  const uint8_t flags = (async ? profagent::kFlagAsync : 0) |
                        (async && capture::is_capturing(stream) ? profagent::kFlagCaptured : 0);
  return {EventKind::Memset, flags, bytes, word(stream)};
}
Payload set_async(size_t bytes, cudaStream_t stream) { return set(bytes, stream, true); }
Payload wait_for(const void* handle = nullptr) { return {EventKind::Sync, 0, 0, word(handle)}; }
// Inside a capture (or forking one) a stream's wait is an edge of the graph, not a wait.
Payload stream_wait(cudaStream_t stream, cudaEvent_t event) {
  Payload p = wait_for(event);
  if (capture::is_capturing(stream) || capture::is_capture_event(event)) p.flags |= profagent::kFlagCaptured;
  return p;
}
Payload runtime(uint64_t arg0 = 0, uint64_t arg1 = 0) { return {EventKind::Runtime, 0, arg0, arg1}; }

constexpr cudaMemcpyKind kPeer = cudaMemcpyDeviceToDevice;
}  // namespace

// ---- launches ------------------------------------------------------------------------------
PROFAGENT_HOOK(cudaLaunchKernel, (const void* f, dim3 g, dim3 b, void** a, size_t m, cudaStream_t s), (f, g, b, a, m, s), launch(f, s))
PROFAGENT_HOOK(cudaLaunchKernelExC, (const cudaLaunchConfig_t* c, const void* f, void** a), (c, f, a), launch_ex(c, f))
PROFAGENT_HOOK(__cudaLaunchKernel, (cudaKernel_t k, dim3 g, dim3 b, void** a, size_t m, cudaStream_t s), (k, g, b, a, m, s), launch(k, s))
PROFAGENT_HOOK(cudaLaunchCooperativeKernel, (const void* f, dim3 g, dim3 b, void** a, size_t m, cudaStream_t s), (f, g, b, a, m, s), launch(f, s))
PROFAGENT_HOOK(cudaGraphLaunch, (cudaGraphExec_t e, cudaStream_t s), (e, s), graph_launch(e, s))

// Instantiation learns whether the graph does device work (hooks/graph_work.h), with the
// graph queries of the caller's runtime major (the version tag); a destroyed handle is forgotten.
#define PROFAGENT_GRAPH_INSTANTIATE_ONE(Library, version, tag, kind, symbol_version, name, params, args, exec, graph) \
  PROFAGENT_HOOK_THEN_ONE(Library, version, tag, kind, symbol_version, name, params, args, runtime(),               \
                          graph_work::instantiated(result, exec, graph, tag))
#define PROFAGENT_GRAPH_INSTANTIATE_NAMED(name, params, args, exec, graph) \
  PROFAGENT_LIBRARY_cudart(PROFAGENT_GRAPH_INSTANTIATE_ONE, name, params, args, exec, graph)
#define PROFAGENT_GRAPH_INSTANTIATE(name, params, args, exec, graph)   \
  PROFAGENT_GRAPH_INSTANTIATE_NAMED(name, params, args, exec, graph) \
  PROFAGENT_STREAM_VARIANTS_##name(PROFAGENT_GRAPH_INSTANTIATE_NAMED, params, args, exec, graph)
PROFAGENT_GRAPH_INSTANTIATE(cudaGraphInstantiate, (cudaGraphExec_t* e, cudaGraph_t g, unsigned long long f), (e, g, f), e, g)
PROFAGENT_GRAPH_INSTANTIATE(cudaGraphInstantiateWithFlags, (cudaGraphExec_t* e, cudaGraph_t g, unsigned long long f), (e, g, f), e, g)
PROFAGENT_GRAPH_INSTANTIATE(cudaGraphInstantiateWithParams, (cudaGraphExec_t* e, cudaGraph_t g, cudaGraphInstantiateParams* p), (e, g, p), e, g)
PROFAGENT_HOOK_THEN(cudaGraphExecDestroy, (cudaGraphExec_t e), (e), runtime(word(e)), graph_work::destroyed(e))

// ---- copies ----------------------------------------------------------------------------------
PROFAGENT_HOOK(cudaMemcpy, (void* d, const void* s, size_t n, cudaMemcpyKind k), (d, s, n, k), copy(n, k))
PROFAGENT_HOOK(cudaMemcpyAsync, (void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t st), (d, s, n, k, st), copy_async(n, k, st))
PROFAGENT_HOOK(cudaMemcpy2D, (void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, cudaMemcpyKind k), (d, dp, s, sp, w, h, k), copy(w * h, k))
PROFAGENT_HOOK(cudaMemcpy2DAsync, (void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, cudaMemcpyKind k, cudaStream_t st), (d, dp, s, sp, w, h, k, st), copy_async(w * h, k, st))
PROFAGENT_HOOK(cudaMemcpyToSymbol, (const void* y, const void* s, size_t n, size_t o, cudaMemcpyKind k), (y, s, n, o, k), copy(n, k))
PROFAGENT_HOOK(cudaMemcpyFromSymbol, (void* d, const void* y, size_t n, size_t o, cudaMemcpyKind k), (d, y, n, o, k), copy(n, k))
PROFAGENT_HOOK(cudaMemcpyToSymbolAsync, (const void* y, const void* s, size_t n, size_t o, cudaMemcpyKind k, cudaStream_t st), (y, s, n, o, k, st), copy_async(n, k, st))
PROFAGENT_HOOK(cudaMemcpyFromSymbolAsync, (void* d, const void* y, size_t n, size_t o, cudaMemcpyKind k, cudaStream_t st), (d, y, n, o, k, st), copy_async(n, k, st))
PROFAGENT_HOOK(cudaMemcpyPeer, (void* d, int dd, const void* s, int sd, size_t n), (d, dd, s, sd, n), copy(n, kPeer))
PROFAGENT_HOOK(cudaMemcpyPeerAsync, (void* d, int dd, const void* s, int sd, size_t n, cudaStream_t st), (d, dd, s, sd, n, st), copy_async(n, kPeer, st))

// ---- sets ------------------------------------------------------------------------------------
PROFAGENT_HOOK(cudaMemset, (void* d, int v, size_t n), (d, v, n), set(n))
PROFAGENT_HOOK(cudaMemsetAsync, (void* d, int v, size_t n, cudaStream_t st), (d, v, n, st), set_async(n, st))
PROFAGENT_HOOK(cudaMemset2D, (void* d, size_t p, int v, size_t w, size_t h), (d, p, v, w, h), set(w * h))
PROFAGENT_HOOK(cudaMemset2DAsync, (void* d, size_t p, int v, size_t w, size_t h, cudaStream_t st), (d, p, v, w, h, st), set_async(w * h, st))

// ---- allocations: hooks/cuda_memory.cpp (they also keep the allocation bookkeeping) ---------

// ---- synchronisation and events --------------------------------------------------------------
PROFAGENT_HOOK(cudaDeviceSynchronize, (), (), wait_for())
PROFAGENT_HOOK(cudaStreamSynchronize, (cudaStream_t st), (st), wait_for(st))
PROFAGENT_HOOK(cudaEventSynchronize, (cudaEvent_t e), (e), wait_for(e))
PROFAGENT_HOOK_THEN(cudaStreamWaitEvent, (cudaStream_t st, cudaEvent_t e, unsigned int f), (st, e, f), stream_wait(st, e), capture::wait_event(st, e, result))
PROFAGENT_HOOK_THEN(cudaEventRecord, (cudaEvent_t e, cudaStream_t st), (e, st), runtime(word(e), word(st)), capture::record_event(e, st, result))
PROFAGENT_HOOK(cudaProfilerStart, (), (), runtime())
PROFAGENT_HOOK(cudaProfilerStop, (), (), runtime())

// ---- graph capture: launches inside a capture are tagged kFlagCaptured, not counted as work --
PROFAGENT_HOOK_THEN(cudaStreamBeginCapture, (cudaStream_t st, cudaStreamCaptureMode m), (st, m), runtime(word(st)), capture::begin(st, result))
PROFAGENT_HOOK_THEN(cudaStreamEndCapture, (cudaStream_t st, cudaGraph_t* g), (st, g), runtime(word(st)), capture::end(st))
