#include "exporters/occupancy.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <array>

namespace profagent::exporters {
namespace {

constexpr int kNoLimit = INT_MAX;
constexpr int kRegisterGranule = 256;  // registers are allocated per warp in 256s (sm_50 .. sm_120)
constexpr uint64_t kKiB = 1024;

int divide_up(int x, int y) { return (x + y - 1) / y; }
int round_up(int x, int y) { return y * divide_up(x, y); }

bool supported(const DeviceInfo& d) {
  return d.compute_major >= 5 && d.compute_major <= 12 && d.warp_size > 0 &&
         d.max_threads_per_multiprocessor > 0 && d.regs_per_multiprocessor > 0;
}

// Architecture figures from NVIDIA's occupancy rules (CUDA programming guide, "Compute
// Capabilities", and the toolkit's occupancy calculator).
int max_registers_per_thread(const DeviceInfo& d) { return d.compute_major <= 6 ? 255 : 256; }

int register_sub_partitions(int major, int minor) { return major == 6 && minor == 0 ? 2 : 4; }

int max_blocks_per_sm(const DeviceInfo& d) {
  const int major = d.compute_major, minor = d.compute_minor;
  switch (major) {
    case 7: return minor == 5 ? 16 : 32;
    case 8: return minor == 0 ? 32 : minor == 9 ? 24 : 16;
    case 10: return minor == 1 ? 24 : 32;
    case 11: return minor == 0 ? 24 : 32;
    case 12: return 24;
    default: return 32;  // 5.x, 6.x, 9.x
  }
}

uint64_t shared_memory_granule(const DeviceInfo& d) { return d.compute_major >= 8 ? 128 : 256; }

// The shared-memory sizes an SM's L1/shared split can be set to (Volta and later), in KiB,
// ascending; a 0 ends a shorter list.
using Steps = std::array<int, 10>;
constexpr Steps kTuringSteps = {32, 64};
constexpr Steps kVoltaSteps = {0, 8, 16, 32, 64, 96};
constexpr Steps kA100Steps = {0, 8, 16, 32, 64, 100, 132, 164};
constexpr Steps kAmpereSteps = {0, 8, 16, 32, 64, 100};  // 8.6, 8.9, 12.x
constexpr Steps kHopperSteps = {0, 8, 16, 32, 64, 100, 132, 164, 196, 228};  // 9.x, 10.x, 11.x

const Steps& carveout_steps_kib(const DeviceInfo& d) {
  const int major = d.compute_major, minor = d.compute_minor;
  if (major == 7) return minor == 5 ? kTuringSteps : kVoltaSteps;
  if (major == 8 && (minor == 0 || minor == 7)) return kA100Steps;
  if (major == 8 || major == 12) return kAmpereSteps;
  return kHopperSteps;
}

// The smallest carveout holding `bytes`; false if none does.
bool carveout_for(const DeviceInfo& d, uint64_t bytes, uint64_t* carveout) {
  const Steps& steps = carveout_steps_kib(d);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (i > 0 && steps[i] == 0) break;
    if (bytes <= uint64_t(steps[i]) * kKiB) return *carveout = uint64_t(steps[i]) * kKiB, true;
  }
  return false;
}

// Driver-reserved shared memory per block (1 KiB from sm_80 on when the property is missing).
uint64_t reserved_shared_memory(const DeviceInfo& d) {
  if (d.reserved_shared_mem_per_block != 0 || d.compute_major < 8) return d.reserved_shared_mem_per_block;
  return kKiB;
}

int warps_limit(const DeviceInfo& d, int threads) {
  if (d.max_threads_per_block > 0 && threads > d.max_threads_per_block) return 0;
  return (d.max_threads_per_multiprocessor / d.warp_size) / divide_up(threads, d.warp_size);
}

int registers_limit(const DeviceInfo& d, int minor, int threads, int registers, Occupancy& out) {
  const int sub_partitions = register_sub_partitions(d.compute_major, minor);
  const int warps = divide_up(threads, d.warp_size);
  const int per_warp = round_up(registers * d.warp_size, kRegisterGranule);
  out.allocated_registers_per_block = per_warp * warps;
  const int assumed = per_warp * round_up(warps, sub_partitions);  // warps fill sub-partitions evenly
  if (d.regs_per_block < assumed || d.regs_per_block < out.allocated_registers_per_block ||
      registers > max_registers_per_thread(d)) {
    return 0;
  }
  if (per_warp == 0) return kNoLimit;
  const int warps_per_sub_partition = (d.regs_per_multiprocessor / sub_partitions) / per_warp;
  return warps_per_sub_partition * sub_partitions / warps;
}

int shared_memory_limit(const DeviceInfo& d, uint64_t shared, Occupancy& out) {
  const uint64_t reserved = reserved_shared_memory(d);
  const uint64_t granule = shared_memory_granule(d);
  const uint64_t allocated = (shared + reserved + granule - 1) / granule * granule;
  out.allocated_shared_memory_per_block = allocated;
  if (allocated > d.shared_mem_per_block + (d.compute_major >= 8 ? reserved : 0)) return 0;
  uint64_t per_sm = d.shared_mem_per_multiprocessor;
  if (d.compute_major >= 7) {
    if (!carveout_for(d, per_sm, &per_sm)) return -1;  // properties outside the known steps
    if (allocated > per_sm && !carveout_for(d, allocated, &per_sm)) return -1;
  }
  return allocated == 0 ? kNoLimit : int(std::min<uint64_t>(per_sm / allocated, kNoLimit));
}

}  // namespace

int Occupancy::achieved_percent() const { return int(std::lround(double(achieved) * 100.0)); }

Occupancy max_active_blocks(const DeviceInfo& d, int threads, int registers, uint64_t shared) {
  Occupancy out;
  if (!supported(d) || threads <= 0) return out;
  out.limit_registers = registers_limit(d, d.compute_minor, threads, registers, out);
  if (d.compute_major == 6 && d.compute_minor == 0 && out.limit_registers != 0 &&
      registers_limit(d, 1, threads, registers, out) == 0) {
    out.limit_registers = 0;  // GP100 must also fit the four-partition layout
  }
  out.limit_warps = warps_limit(d, threads);
  out.limit_blocks = max_blocks_per_sm(d);
  out.limit_shared_memory = shared_memory_limit(d, shared, out);
  if (out.limit_shared_memory < 0) return Occupancy{};
  out.active_blocks_per_sm = std::min({out.limit_registers, out.limit_warps, out.limit_blocks,
                                       out.limit_shared_memory});
  out.known = true;
  return out;
}

Occupancy kernel_occupancy(const DeviceInfo& d, const DeviceRecord& k) {
  const int threads = k.block[0] * k.block[1] * k.block[2];
  Occupancy out = max_active_blocks(d, threads, int(k.registers_per_thread), k.shared_memory);
  if (d.num_sms > 0) {
    out.blocks_per_sm = float(k.grid[0] * k.grid[1] * k.grid[2]) / float(d.num_sms);
    out.warps_per_sm = out.blocks_per_sm * float(threads) / 32.0f;
  }
  if (out.known && d.num_sms > 0) {
    const float effective = std::min(float(out.active_blocks_per_sm), out.blocks_per_sm);
    out.achieved = effective * float(threads) / float(d.max_threads_per_multiprocessor);
  }
  return out;
}

}  // namespace profagent::exporters
