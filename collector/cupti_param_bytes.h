// The byte count of a copy, set or allocation, read from the parameter struct CUPTI hands its
// API callback (CUpti_CallbackData::functionParams, laid out as generated_cuda_meta.h and
// generated_cuda_runtime_api_meta.h declare). The hooks record it from their arguments; a
// callback-recorded call gets it from here, so its `bytes` means the same.
#pragma once

#include <cstdint>
#include <string_view>

namespace profagent::collector {

struct ByteCountField {
  int16_t offset = -1;  // -1: the call has no single byte count (2-D copies, launches, ...)
  uint8_t element_bytes = 1;  // cuMemsetD16/D32 count elements
};

// By the API function's plain name (cuMemcpyHtoDAsync_v2, cudaMemsetAsync, ...; the _ptsz and
// _ptds twins have their base's layout).
ByteCountField byte_count_field(std::string_view name) noexcept;

}  // namespace profagent::collector
