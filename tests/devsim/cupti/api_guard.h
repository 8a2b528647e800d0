// The frame of every exported CUPTI function: injected faults first (DEVSIM_CUPTI_FAIL), then
// the availability fault for functions that need the driver, then the body. No exception
// crosses the C boundary; the thread's last error is kept for cuptiGetLastError.
#pragma once

#include "session.h"

namespace profagent::devsim_cupti {

enum class NeedsDriver : bool { No = false, Yes = true };

CUptiResult remember_result(CUptiResult result);
CUptiResult take_last_error();

template <typename Body>
CUptiResult guarded(const char* function_name, NeedsDriver needs_driver, Body&& body) noexcept {
  try {
    Session& session = Session::instance();
    if (CUptiResult injected = session.faults().injected(function_name); injected != CUPTI_SUCCESS) {
      return remember_result(injected);
    }
    if (needs_driver == NeedsDriver::Yes) {
      if (CUptiResult missing = session.faults().availability_error(); missing != CUPTI_SUCCESS) {
        return remember_result(missing);
      }
    }
    return remember_result(body(session));
  } catch (...) {
    return remember_result(CUPTI_ERROR_UNKNOWN);
  }
}

}  // namespace profagent::devsim_cupti
