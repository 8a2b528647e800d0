// One public API call: correlation id, tracer enter/exit, modelled host cost, fault injection.
//
// Every exported runtime and driver function opens exactly one ApiScope. Scopes nest only when
// a public function is reached from inside another one (it should not happen: front ends call
// the model, never each other's exports); nested scopes are not reported. The driver calls the
// real runtime makes internally, which CUPTI does report, are modelled explicitly
// (InternalDriverCall).
#pragma once

#include <cstdint>

#include "devsim_trace.h"

namespace devsim {

// Modelled host busy time of one call, before DEVSIM_HOST_COST_SCALE. Defaults follow
// published launch-overhead measurements (a kernel launch costs a few microseconds of CPU).
enum class HostCost : uint16_t {
  None = 0,
  Query = 500,         // cudaStreamQuery, cudaEventQuery, getters
  Light = 300,         // cudaGetDevice, cudaGetLastError, ...
  Other = 800,         // stream/event create, sync entry, ...
  EventRecord = 1500,
  MemcpyAsync = 2500,
  Launch = 3000,
  Alloc = 5000,        // cudaMalloc and friends
};

uint32_t next_correlation_id();
uint32_t current_tid();
Tracer* tracer();       // installed tracer or nullptr

class ApiScope {
 public:
  // params: the call's generated_cuda_*_meta.h parameter struct (callback functionParams).
  ApiScope(ApiDomain domain, uint32_t cbid, const char* name, HostCost cost,
           const char* symbol_name = nullptr, const void* params = nullptr);
  // A driver call the runtime makes inside one of its own calls. NVIDIA's CUPTI reports these
  // (callbacks and DRIVER records, each with its own correlation id, measured on an H100):
  // cudaGetDevice reaches cuCtxGetDevice_v2, a kernel's first launch loads its library
  // (cuLibraryLoadData, cuLibraryGetKernel). So a profiler must tell them from the program's
  // own driver calls.
  struct InternalDriverCall {};
  ApiScope(InternalDriverCall, uint32_t cbid, const char* name);
  ~ApiScope();
  ApiScope(const ApiScope&) = delete;
  ApiScope& operator=(const ApiScope&) = delete;

  // Non-zero when DEVSIM_FAIL says this call must fail with that code.
  int injected_error() const { return injected_; }
  uint32_t correlation_id() const { return call_.correlation_id; }
  bool reported() const { return reported_; }
  // Records the result reported on exit; returns it for `return scope.finish(err);`.
  int finish(int result) {
    call_.result = result;
    return result;
  }

 private:
  ApiCall call_{};
  Tracer* entered_ = nullptr;  // exit goes only to the tracer that saw the enter
  uint32_t outer_correlation_ = 0;  // an internal driver call gives it back on exit
  int injected_ = 0;
  bool reported_ = false;
};

// Spins for the modelled host cost of a call (scaled). No-op when the scale is 0.
void spend_host_time(HostCost cost);

}  // namespace devsim
