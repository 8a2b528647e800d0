// The one body of every runtime entry point devsim exports but does not model. The stubs
// themselves are generated at build time (scripts/gen_cudart_unmodelled.py) for the names
// NVIDIA's libcudart.so.13 exports and devsim's runtime objects do not define.
#pragma once

#include <atomic>
#include <cstdint>

#include "cudart_common.h"

namespace devsim::rt {

// Reports the call like any other (callback id cbid, CUPTI parameter struct params or
// nullptr), says once per name on stderr that it is not modelled (said: that name's flag),
// records cudaErrorNotSupported as the last error and returns it; a pending sticky error or an
// injected fault is returned instead, as for every call.
cudaError_t not_modelled(uint32_t cbid, const char* name, const void* params, std::atomic<bool>& said);

}  // namespace devsim::rt
