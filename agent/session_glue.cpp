// Config -> collector::SessionOptions, and the platform facts (devices, versions) the session
// asks for at freeze. Those facts come from the real runtime through the same resolver the
// hooks use: libprofagent.so never links libcudart.
#include "agent/session_glue.h"

#include "agent/windows.h"

#include <cuda_runtime_api.h>

#include "collector/session.h"
#include "hooks/resolve.h"

namespace profagent::agent {
namespace {

hooks::RealSymbol g_device_count{"cudaGetDeviceCount"};
hooks::RealSymbol g_device_properties{"cudaGetDeviceProperties"};
hooks::RealSymbol g_runtime_version{"cudaRuntimeGetVersion"};
hooks::RealSymbol g_driver_version{"cudaDriverGetVersion"};

template <typename Fn>
Fn* real(hooks::RealSymbol& symbol) {
  return reinterpret_cast<Fn*>(hooks::resolve(symbol));
}

DeviceInfo device_info(int id, const cudaDeviceProp& p) {
  DeviceInfo d;
  d.id = uint32_t(id);
  d.name = p.name;
  d.total_global_mem = p.totalGlobalMem;
  d.compute_major = p.major;
  d.compute_minor = p.minor;
  d.max_threads_per_block = p.maxThreadsPerBlock;
  d.max_threads_per_multiprocessor = p.maxThreadsPerMultiProcessor;
  d.regs_per_block = p.regsPerBlock;
  d.regs_per_multiprocessor = p.regsPerMultiprocessor;
  d.warp_size = p.warpSize;
  d.shared_mem_per_block = p.sharedMemPerBlock;
  d.shared_mem_per_multiprocessor = p.sharedMemPerMultiprocessor;
  d.shared_mem_per_block_optin = p.sharedMemPerBlockOptin;
  d.num_sms = p.multiProcessorCount;
  return d;
}

// Called by the session at freeze, under AgentBusy, only if CUDA was used. Every failure
// just leaves a field empty.
collector::PlatformInfo platform_info() {
  collector::PlatformInfo info;
  if (auto* version = real<decltype(cudaRuntimeGetVersion)>(g_runtime_version)) version(&info.cuda_runtime_version);
  if (auto* version = real<decltype(cudaDriverGetVersion)>(g_driver_version)) version(&info.cuda_driver_version);
  auto* count_devices = real<decltype(cudaGetDeviceCount)>(g_device_count);
  auto* properties = real<decltype(cudaGetDeviceProperties)>(g_device_properties);
  int count = 0;
  if (count_devices == nullptr || properties == nullptr || count_devices(&count) != cudaSuccess) return info;
  for (int id = 0; id < count; ++id) {
    cudaDeviceProp prop{};
    if (properties(&prop, id) == cudaSuccess) info.devices.push_back(device_info(id, prop));
  }
  return info;
}

collector::CuptiMode cupti_mode(CuptiMode mode) {
  return mode == CuptiMode::On ? collector::CuptiMode::On
         : mode == CuptiMode::Off ? collector::CuptiMode::Off
                                  : collector::CuptiMode::Auto;
}

collector::SessionOptions session_options(const Config& config) {
  collector::SessionOptions options;
  options.activity_cpu = config.activity_cpu;
  options.activity_cuda = config.activity_cuda;
  options.cupti.mode = cupti_mode(config.cupti);
  options.cupti.library_path = config.cupti_lib;
  options.buffer_bytes = size_t(config.buffer_mb) << 20;
  options.record_shapes = config.record_shapes;
  options.config = config.to_pairs();
  options.platform_info = platform_info;
  return options;
}

}  // namespace

bool start_collector(const Config& config) noexcept {
  try {
    if (!collector::start(session_options(config))) return false;
    // The schedule and the step markers decide what is recorded (agent/windows.h).
    return start_windows(config);
  } catch (...) {
    return false;
  }
}

void count_step() noexcept { step_ended(); }

bool freeze_final_window(Trace& trace) noexcept { return freeze_last_window(trace); }

}  // namespace profagent::agent
