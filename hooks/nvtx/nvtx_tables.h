// Attaching the agent to one NVTX copy (hooks/nvtx/nvtx_tables.cpp).
#pragma once

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

namespace profagent::hooks::nvtx {

// Fills the copy's core, domain (core2) and CUDA naming slots with the agent's handlers.
// False when the copy offers no core table (the copy then stays silent).
bool attach(NvtxGetExportTableFunc_t get_export_table) noexcept;

}  // namespace profagent::hooks::nvtx
