// CUPTI callback ids (cbid) of runtime and driver functions by name, for the `cbid` arg Kineto
// puts on every cuda_runtime / cuda_driver event. The tables are generated at build time by
// scripts/gen_cupti_cbids.py from the toolkit's cupti_runtime_cbid.h / cupti_driver_cbid.h.
#pragma once

#include <cstdint>
#include <string_view>

namespace profagent::exporters {

// 0 when the name is not a runtime (driver) function CUPTI knows. A name with a _ptsz/_ptds
// suffix CUPTI has no own id for gets the id of its base function.
uint32_t runtime_cbid(std::string_view function) noexcept;
uint32_t driver_cbid(std::string_view function) noexcept;

}  // namespace profagent::exporters
