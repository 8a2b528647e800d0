// What NVTX's calls become: ranges, marks and names recorded through the collector API.
// The handlers behind the callback tables (hooks/nvtx/nvtx_tables.cpp) call these; each is
// noexcept and does nothing but count balance while nothing is recorded.
#pragma once

#include <cstdint>
#include <string_view>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "collector/api.h"

namespace profagent::hooks::nvtx {

// A domain as the program sees it (nvtxDomainHandle_t points to one; the default domain is
// nullptr). Leaked: NVTX handles stay valid for the process's life.
struct Domain {
  NameId name = kNoName;
  char text[64] = {};  // for range:REGEX markers (`domain::name`), cut at 63 bytes
};

// A registered string (nvtxStringHandle_t points to one).
struct RegisteredString {
  NameId name = kNoName;
  std::string_view text;  // the leaked copy, for range:REGEX markers
};

int push(const Domain* domain, const nvtxEventAttributes_t* attributes) noexcept;
int push_text(std::string_view text) noexcept;  // nvtxRangePushA/W: default domain, no attributes
int pop(const Domain* domain) noexcept;
void mark(const Domain* domain, const nvtxEventAttributes_t* attributes) noexcept;
void mark_text(std::string_view text) noexcept;
uint64_t start(const Domain* domain, const nvtxEventAttributes_t* attributes) noexcept;
uint64_t start_text(std::string_view text) noexcept;
void end(uint64_t range) noexcept;

// Start/end ranges never ended (kept, and left out of the trace, up to a bound), said once.
uint64_t unended_ranges_dropped() noexcept;

}  // namespace profagent::hooks::nvtx
