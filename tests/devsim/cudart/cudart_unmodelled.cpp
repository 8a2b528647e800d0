// The shared body of the generated "not modelled" stubs, and the few internal entry points of
// NVIDIA's runtime whose signatures no header declares (so no stub can be generated for them).
#include "cudart_unmodelled.h"

#include <cstdio>

using namespace devsim;

namespace devsim::rt {

cudaError_t not_modelled(uint32_t cbid, const char* name, const void* params, std::atomic<bool>& said) {
  DEVSIM_RT_CALL_NAMED_P(cbid, name, Light, params);
  if (!said.exchange(true)) {
    std::fprintf(stderr, "devsim: %s is not modelled; it returns cudaErrorNotSupported\n", name);
  }
  DEVSIM_RT_RETURN(cudaErrorNotSupported);
}

}  // namespace devsim::rt

// No header declares these; the argument counts are those NVIDIA's library reads on entry
// (four and five argument registers). Their return values are not used by callers.
extern "C" {

// Maps a device variable onto host memory for unified addressing. No device code runs in
// devsim, so there is nothing to map: the registration is accepted.
void __cudaRegisterHostVar(void**, const char*, char*, size_t) {
  ::devsim::ApiScope scope(ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID___cudaRegisterHostVar_v13000,
                           "__cudaRegisterHostVar", HostCost::Light);
}

// Hands over a table for unified function and data addressing; accepted for the same reason.
void __cudaRegisterUnifiedTable(void*, void*, void*, void*, void*) {
  ::devsim::ApiScope scope(ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID___cudaRegisterUnifiedTable_v13000,
                           "__cudaRegisterUnifiedTable", HostCost::Light);
}

// NVIDIA's returns 0 (null) without looking at its arguments; so does this one.
void* __cudaGetProcAddress() {
  ::devsim::ApiScope scope(ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID___cudaGetProcAddress_v13000,
                           "__cudaGetProcAddress", HostCost::Light);
  return nullptr;
}

}  // extern "C"
