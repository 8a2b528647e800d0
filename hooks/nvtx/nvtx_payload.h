// NVTX payloads, rendered as JSON for the trace's args: the core's single values (an integer or
// a floating-point number in the event attributes) and the payload extension's structured
// payloads, decoded by the schemas the program registered (nvtxPayloadSchemaRegister: NCCL
// describes each collective's communicator, size and reduction this way).
#pragma once

#include <cstddef>
#include <cstdint>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

namespace profagent::hooks::nvtx {

inline constexpr size_t kPayloadTextBytes = 384;  // longer payloads are cut (a valid JSON prefix is not kept)

// The payload of an event of `domain` (its NameId; 0 the default domain) as JSON text in `out`
// (`room` bytes): a number, an object of the registered schema's fields (enum values by name),
// an array of them for several payloads; {"schema": id} for a schema never registered. Returns
// its size, 0 when it has none or it does not fit.
uint32_t payload_text(uint32_t domain, const nvtxEventAttributes_t& a, char* out, size_t room) noexcept;

// Fills the payload extension's slots of one NVTX copy (InitializeInjectionNvtxExtension):
// schema and enum registration. False for another extension module or an unknown version.
bool attach_payload_extension(nvtxExtModuleInfo_t* module) noexcept;

}  // namespace profagent::hooks::nvtx
