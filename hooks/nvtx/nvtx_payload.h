// NVTX payloads, rendered as JSON for the trace's args: the core's single values (an integer or
// a floating-point number in the event attributes) and the payload extension's structured
// payloads, decoded by the schemas the program registered (nvtxPayloadSchemaRegister: NCCL
// describes each collective's communicator, size and reduction this way).
#pragma once

#include <cstddef>
#include <cstdint>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

namespace profagent::hooks::nvtx {

inline constexpr size_t kPayloadTextBytes = 384;  // longer payloads are cut (a valid JSON prefix is not kept)

// The event's payload as JSON text in `out` (`room` bytes); returns its size, 0 when it has
// none or it could not be decoded.
uint32_t payload_text(const nvtxEventAttributes_t& a, char* out, size_t room) noexcept;

}  // namespace profagent::hooks::nvtx
