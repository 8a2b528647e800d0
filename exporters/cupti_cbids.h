// CUPTI callback ids (cbid) of runtime and driver functions by name, for the `cbid` arg Kineto
// puts on every cuda_runtime / cuda_driver event. The tables are generated at build time by
// scripts/gen_cupti_cbids.py from the toolkit's cupti_runtime_cbid.h / cupti_driver_cbid.h.
#pragma once

#include <cstdint>
#include <string_view>

namespace profagent::exporters {

// 0 when the name is not a runtime (driver) function CUPTI knows. A name with a _ptsz/_ptds
// suffix CUPTI has no own id for gets the id of its base function.
uint32_t runtime_cbid(std::string_view function) noexcept;
uint32_t driver_cbid(std::string_view function) noexcept;

// The name traces and tables give a call: the API it implements. nvcc's `<<<...>>>` reaches the
// runtime through the private entry `__cudaLaunchKernel` since CUDA 13, and per-thread default
// stream builds call `_ptsz` twins of the launch, copy and set functions; HolisticTraceAnalysis
// finds launches only by the public names (`cudaLaunchKernel`, `cudaLaunchKernelExC`,
// `cuLaunchKernel`, `cudaMemcpyAsync`, `cudaMemsetAsync`), so its launch statistics and critical
// path saw none in such programs. The trace keeps the entry point in the event's args
// (`entry point`), and `cbid` is the entry point's. Other names are returned unchanged.
std::string_view api_name(std::string_view entry) noexcept;

// Driver API functions are cu*, runtime ones cuda* (and nvcc's __cuda* launch entries).
bool is_driver_function(std::string_view name) noexcept;

}  // namespace profagent::exporters
