// Options of the CUPTI device backend, free of CUDA headers so collector/session.h (which the
// agent includes) does not need them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace profagent::collector {

enum class CuptiMode : uint8_t {
  Auto,  // trace devices unless another tool is injected (CUDA_INJECTION64_PATH)
  On,    // trace devices
  Off,   // host-only
};

struct CuptiOptions {
  CuptiMode mode = CuptiMode::Auto;  // PROFAGENT_CUPTI
  std::string library_path;          // PROFAGENT_CUPTI_LIB; empty: search (cupti_api.h)
  size_t buffer_count = 32;          // x 4 MiB activity buffers, reserved at start
};

}  // namespace profagent::collector
