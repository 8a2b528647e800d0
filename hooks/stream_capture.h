// Which streams are being captured into a CUDA graph right now: work issued
// to them is not executed but recorded into a graph, so their launches are tagged
// kFlagCaptured (and the window's join does not wait for device records of them). As in CUDA,
// a stream joins a capture by waiting for an event recorded on a capturing stream (a fork),
// and leaves it when the stream that began the capture ends it. Captures are rare and short;
// a tiny fixed table with one relaxed load on the fast path ("is anything captured at all?")
// keeps launches cheap.
#pragma once

#include <cuda_runtime_api.h>

namespace profagent::hooks::capture {

bool is_capturing(cudaStream_t stream) noexcept;
void begin(cudaStream_t stream, cudaError_t result) noexcept;  // only a successful begin counts
void end(cudaStream_t stream) noexcept;                         // a failed end also ends it
void record_event(cudaEvent_t event, cudaStream_t stream, cudaError_t result) noexcept;
void wait_event(cudaStream_t stream, cudaEvent_t event, cudaError_t result) noexcept;
// The event was last recorded on a stream being captured (waiting for it joins that capture).
bool is_capture_event(cudaEvent_t event) noexcept;

}  // namespace profagent::hooks::capture
