// Kernel occupancy as Kineto reports it on every kernel event ("blocks per SM", "warps per SM",
// "est. achieved occupancy %"), computed from the device's properties and the kernel's launch
// attributes with the public CUDA occupancy rules: how many blocks of this kernel one SM can
// hold at once, limited by its warp slots, its registers (allocated per warp in fixed
// granules), its shared memory (allocated per block in fixed granules, from the SM's
// shared-memory carveout) and the architecture's block limit — what
// cudaOccupancyMaxActiveBlocksPerMultiprocessor answers for the default cache configuration.
//
// Like Kineto, the kernel is taken as using no block barriers and the default (non opt-in)
// per-block shared memory limit; the estimate then caps the active blocks by the blocks the
// grid actually gives each SM.
#pragma once

#include <cstdint>

#include "collector/trace.h"

namespace profagent::exporters {

struct Occupancy {
  bool known = false;            // false: unsupported architecture or missing properties
  int active_blocks_per_sm = 0;  // the minimum of the limits below
  int limit_warps = 0;
  int limit_registers = 0;
  int limit_shared_memory = 0;
  int limit_blocks = 0;
  int allocated_registers_per_block = 0;
  uint64_t allocated_shared_memory_per_block = 0;
  float blocks_per_sm = 0;       // grid blocks / SMs (Kineto's float)
  float warps_per_sm = 0;        // blocks_per_sm * threads per block / 32
  float achieved = 0;            // estimated achieved occupancy, 0..1
  int achieved_percent() const;  // rounded, as Kineto writes it
};

// Limits for one block size; blocks_per_sm, warps_per_sm and achieved need the grid too.
Occupancy max_active_blocks(const DeviceInfo& device, int threads_per_block, int registers_per_thread,
                            uint64_t shared_memory_per_block);

// Everything for one kernel record on its device.
Occupancy kernel_occupancy(const DeviceInfo& device, const DeviceRecord& kernel);

}  // namespace profagent::exporters
