// Building and enqueuing device work: kernels, copies, sets and host functions, with the
// modelled durations and the host-side semantics of each (sync variants wait, pageable async
// copies are staged synchronously like real CUDA).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels.h"
#include "timeline.h"

namespace devsim {

struct LaunchParams {
  const KernelInfo* kernel = nullptr;
  Dim3 grid, block;
  size_t dynamic_shared = 0;
  uint8_t launch_type = 0;  // CUpti_ActivityLaunchType
};

Status validate_launch(const LaunchParams& l);
// The next kernel this thread launches directly (not into a capture or graph) is gated: its
// times come from `gate` (timeline.h). For the simulated NCCL, which launches its collective
// kernels through the ordinary runtime entry so that every tool sees an ordinary launch.
void set_next_launch_gate(KernelGate gate);
Status launch_kernel(Stream* s, const LaunchParams& l, uint32_t correlation_id);

// cudaMemcpyKind numbering: 0 HtoH, 1 HtoD, 2 DtoH, 3 DtoD, 4 Default (inferred from pointers).
struct CopyParams {
  void* dst = nullptr;
  const void* src = nullptr;
  size_t width = 0, height = 1, dpitch = 0, spitch = 0;
  int declared_kind = 4;
  bool async = false;
};

Status copy(Stream* s, const CopyParams& c, uint32_t correlation_id);
// cudaMemcpyPeer(Async): device memory of src_device to device memory of dst_device. With peer
// access enabled between them the bytes move at the peer bandwidth, otherwise they are staged
// through host memory (a device-to-host then a host-to-device transfer).
Status peer_copy(Stream* s, const CopyParams& c, int src_device, int dst_device, uint32_t correlation_id);
Status set(Stream* s, void* dst, size_t pitch, int value, size_t width, size_t height, bool async,
           uint32_t correlation_id);
// The payload of one kernel, copy or set, validated as the direct call validates it, without
// enqueuing it (graph nodes are built from these and replayed later).
Status kernel_payload(const LaunchParams& l, OpPayload* out);
Status copy_payload(const CopyParams& c, OpPayload* out);
Status set_payload(void* dst, size_t pitch, int value, size_t width, size_t height, bool async, OpPayload* out);

Status host_function(Stream* s, HostFn fn, StreamCallbackFn cb, void* stream_handle, void* user,
                     uint32_t correlation_id);

}  // namespace devsim
