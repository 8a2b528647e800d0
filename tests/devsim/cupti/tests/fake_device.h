// A stand-in for libdevsim.so in the unit tests: it records the installed tracer so a test can
// drive the Tracer callbacks as the device model would.
#pragma once

#include "../../core/devsim_trace.h"

namespace fake_device {

devsim::Tracer* installed();
// A call as the runtime would report it on enter (end_ns = 0) and exit.
devsim::ApiCall runtime_call(uint32_t correlation_id, uint32_t cbid, const char* name);
devsim::OpRecord kernel_op(uint32_t correlation_id, const char* name);
devsim::OpRecord memcpy_op(uint32_t correlation_id, uint64_t bytes);

}  // namespace fake_device
