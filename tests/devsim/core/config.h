// Knobs of the simulated device, read once from DEVSIM_* variables (tests/devsim/README.md).
// One immutable struct; a malformed value prints one warning and keeps the default.
#pragma once

#include <cstdint>
#include <regex>
#include <string>
#include <vector>

namespace devsim {

struct KernelOverride {
  std::regex pattern;  // searched in the mangled and the demangled name
  uint64_t ns;
};

struct FaultRule {
  std::string api;     // exact public name: "cudaMalloc", "cuLaunchKernel", ...
  int error;           // cudaError_t or CUresult number returned instead of doing the call
  uint64_t nth;        // 0: every call; n: only the n-th call (1-based)
};

struct Config {
  int device_count = 1;
  uint64_t memory_bytes = 16ull << 30;     // per device
  int sm_count = 80;
  uint64_t launch_latency_ns = 4000;       // enqueue -> earliest device start
  uint64_t kernel_min_ns = 2000;           // floor for any kernel
  uint64_t kernel_wave_ns = 4000;          // one full wave of resident threads
  double bw_htod_gbps = 24.0;              // pinned; GB/s == bytes/ns
  double bw_dtoh_gbps = 24.0;
  double bw_dtod_gbps = 600.0;
  double pageable_factor = 0.5;            // pageable bandwidth = pinned * factor
  double bw_peer_gbps = 50.0;              // device -> other device with peer access enabled
  uint64_t memset_min_ns = 1000;
  uint64_t copy_min_ns = 1000;
  int max_concurrent = 32;                 // kernels running at once per device
  double host_cost_scale = 1.0;            // 0: API calls cost no modelled host time
  std::vector<KernelOverride> kernel_ns;
  std::vector<KernelOverride> kernel_regs;  // DEVSIM_KERNEL_REGS: registers per thread
  std::vector<FaultRule> faults;
};

const Config& config();

}  // namespace devsim
