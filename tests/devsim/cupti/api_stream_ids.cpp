// cuptiGetStreamId / cuptiGetStreamIdEx: the CUPTI stream id devsim gives a stream handle, the
// id its records carry. Only in the shared library: it asks the device model (timeline.h) to
// resolve the handle, which the unit tests' fake device does not provide.
#include "api_guard.h"

#include "../core/timeline.h"

#include <cupti.h>

using profagent::devsim_cupti::guarded;
using profagent::devsim_cupti::NeedsDriver;
using profagent::devsim_cupti::Session;

namespace {

// The context argument is not checked: devsim has one primary context per device and resolves
// the handle on the calling thread's current device, as the runtime does.
CUptiResult stream_id(CUstream stream, bool per_thread_default, uint32_t* id) {
  if (id == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  const devsim::Stream* s = devsim::stream_from_handle(stream, per_thread_default);
  if (s == nullptr) return CUPTI_ERROR_INVALID_STREAM;
  *id = s->id;
  return CUPTI_SUCCESS;
}

}  // namespace

extern "C" {

CUptiResult CUPTIAPI cuptiGetStreamId(CUcontext, CUstream stream, uint32_t* stream_id_out) {
  return guarded("cuptiGetStreamId", NeedsDriver::Yes,
                 [&](Session&) { return stream_id(stream, false, stream_id_out); });
}

CUptiResult CUPTIAPI cuptiGetStreamIdEx(CUcontext, CUstream stream, uint8_t per_thread_stream,
                                        uint32_t* stream_id_out) {
  return guarded("cuptiGetStreamIdEx", NeedsDriver::Yes,
                 [&](Session&) { return stream_id(stream, per_thread_stream != 0, stream_id_out); });
}

}  // extern "C"
