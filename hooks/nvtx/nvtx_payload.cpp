#include "hooks/nvtx/nvtx_payload.h"

#include <cmath>
#include <cstdio>

namespace profagent::hooks::nvtx {
namespace {

int number(char* out, size_t room, double value) noexcept {  // JSON has no NaN nor infinity
  return std::isfinite(value) ? std::snprintf(out, room, "%.17g", value) : std::snprintf(out, room, "\"%g\"", value);
}

}  // namespace

uint32_t payload_text(const nvtxEventAttributes_t& a, char* out, size_t room) noexcept {
  int n = 0;
  switch (a.payloadType) {
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64: n = std::snprintf(out, room, "%llu", (unsigned long long)a.payload.ullValue); break;
    case NVTX_PAYLOAD_TYPE_INT64: n = std::snprintf(out, room, "%lld", (long long)a.payload.llValue); break;
    case NVTX_PAYLOAD_TYPE_DOUBLE: n = number(out, room, a.payload.dValue); break;
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32: n = std::snprintf(out, room, "%u", a.payload.uiValue); break;
    case NVTX_PAYLOAD_TYPE_INT32: n = std::snprintf(out, room, "%d", a.payload.iValue); break;
    case NVTX_PAYLOAD_TYPE_FLOAT: n = number(out, room, double(a.payload.fValue)); break;
    default: return 0;
  }
  return n > 0 && size_t(n) < room ? uint32_t(n) : 0;
}

}  // namespace profagent::hooks::nvtx
