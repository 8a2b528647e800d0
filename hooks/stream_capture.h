// Which streams are being captured into a CUDA graph right now: work issued
// to them is not executed but recorded into a graph, so their launches are tagged
// kFlagCaptured. Captures are rare and short; a tiny fixed table with one relaxed load on the
// fast path ("is anything captured at all?") keeps launches cheap.
#pragma once

#include <cuda_runtime_api.h>

namespace profagent::hooks::capture {

bool is_capturing(cudaStream_t stream) noexcept;
void begin(cudaStream_t stream, cudaError_t result) noexcept;  // only a successful begin counts
void end(cudaStream_t stream) noexcept;                         // a failed end also ends it

}  // namespace profagent::hooks::capture
