// Config -> collector::SessionOptions, and the platform facts (devices, versions) the session
// asks for at freeze. Those facts come from the real runtime through the same resolver the
// hooks use: libprofagent.so never links libcudart.
#include "agent/session_glue.h"

#include "agent/nvtx_injection.h"
#include "agent/windows.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstring>

#include "collector/api.h"
#include "collector/log.h"
#include "collector/memory_ledger.h"
#include "collector/session.h"
#include "collector/shapes.h"
#include "hooks/cudart.h"

namespace profagent::agent {
namespace {

// The agent's own queries take whichever runtime is loaded (13 first, then 12); every runtime
// the process holds describes the same devices.
constexpr hooks::RealSymbol any_runtime(const char* name) { return hooks::RealSymbol{name, &hooks::kCudart13, &hooks::kCudart12}; }
constinit hooks::RealSymbol g_device_count = any_runtime("cudaGetDeviceCount");
constinit hooks::RealSymbol g_device_attribute = any_runtime("cudaDeviceGetAttribute");
constinit hooks::RealSymbol g_properties_v2 = any_runtime("cudaGetDeviceProperties_v2");  // CUDA 12 runtimes only
constinit hooks::RealSymbol g_properties = any_runtime("cudaGetDeviceProperties");
constinit hooks::RealSymbol g_runtime_version = any_runtime("cudaRuntimeGetVersion");
constinit hooks::RealSymbol g_driver_version = any_runtime("cudaDriverGetVersion");
// Dropped with every other cached address when the process unloads an object.
PROFAGENT_REGISTER_REAL_SYMBOL(glue_device_count, g_device_count);
PROFAGENT_REGISTER_REAL_SYMBOL(glue_device_attribute, g_device_attribute);
PROFAGENT_REGISTER_REAL_SYMBOL(glue_properties_v2, g_properties_v2);
PROFAGENT_REGISTER_REAL_SYMBOL(glue_properties, g_properties);
PROFAGENT_REGISTER_REAL_SYMBOL(glue_runtime_version, g_runtime_version);
PROFAGENT_REGISTER_REAL_SYMBOL(glue_driver_version, g_driver_version);

template <typename Fn>
Fn* real(hooks::RealSymbol& symbol) {
  return reinterpret_cast<Fn*>(hooks::resolve(symbol));
}

using AttributeFn = cudaError_t(int*, cudaDeviceAttr, int);
using PropertiesFn = cudaError_t(void*, int);

// Device facts are read per field, never through a whole cudaDeviceProp: its layout changes
// between majors (CUDA 13 removed clockRate and others, moving every later field), and a
// process may hold a CUDA 12 runtime, whose struct read with the CUDA 13 declaration gives
// "numSms: 1" instead of the real count. cudaDeviceGetAttribute's signature and the numbers of the
// attributes below are the same in CUDA 12 and 13 (attribute numbers are never reused); the
// checks pin the numbers this header gives against those.
static_assert(cudaDevAttrMaxThreadsPerBlock == 1 && cudaDevAttrMaxSharedMemoryPerBlock == 8 &&
                  cudaDevAttrWarpSize == 10 && cudaDevAttrMaxRegistersPerBlock == 12 &&
                  cudaDevAttrMultiProcessorCount == 16 && cudaDevAttrMaxThreadsPerMultiProcessor == 39 &&
                  cudaDevAttrComputeCapabilityMajor == 75 && cudaDevAttrComputeCapabilityMinor == 76 &&
                  cudaDevAttrMaxSharedMemoryPerMultiprocessor == 81 &&
                  cudaDevAttrMaxRegistersPerMultiprocessor == 82 && cudaDevAttrMaxSharedMemoryPerBlockOptin == 97,
              "cudaDeviceAttr numbers as in CUDA 12");

// No attribute holds the name or the memory size. Both open every cudaDeviceProp layout since
// CUDA 10 at the same offsets (name at 0, uuid 256, luid 272, totalGlobalMem 288): CUDA 12's
// (cudaGetDeviceProperties_v2, what CUDA 12 headers map cudaGetDeviceProperties to) and CUDA
// 13's (cudaGetDeviceProperties) alike, so only these are read, from a buffer larger than any
// layout. A CUDA 12 runtime's unsuffixed cudaGetDeviceProperties is its legacy entry point,
// whose layout NVIDIA does not document: the _v2 name is taken first when it exists.
// Neither call, nor cudaDeviceGetAttribute, creates a context (cudaMemGetInfo would, which a
// program that never touched a device would notice).
constexpr size_t kTotalGlobalMemOffset = 288;
static_assert(offsetof(cudaDeviceProp, name) == 0 && offsetof(cudaDeviceProp, totalGlobalMem) == kTotalGlobalMemOffset,
              "the layout-independent prefix of cudaDeviceProp");
struct alignas(8) PropertiesBuffer {
  unsigned char bytes[4096] = {};
};
static_assert(sizeof(cudaDeviceProp) <= sizeof(PropertiesBuffer), "room for any major's layout");

PropertiesFn* properties_call() {
  if (auto* v2 = real<PropertiesFn>(g_properties_v2)) return v2;
  return real<PropertiesFn>(g_properties);
}

void read_name_and_memory(DeviceInfo& d, int id) {
  PropertiesFn* properties = properties_call();
  PropertiesBuffer buffer;
  if (properties == nullptr || properties(buffer.bytes, id) != cudaSuccess) return;
  const auto* name = reinterpret_cast<const char*>(buffer.bytes);
  d.name.assign(name, strnlen(name, sizeof(cudaDeviceProp::name)));
  std::memcpy(&d.total_global_mem, buffer.bytes + kTotalGlobalMemOffset, sizeof(size_t));
}

DeviceInfo device_info(int id, AttributeFn* attribute) {
  DeviceInfo d;
  d.id = uint32_t(id);
  read_name_and_memory(d, id);
  // A failure leaves the figure 0 (the trace's deviceProperties, occupancy): said once per process.
  auto get = [&](cudaDeviceAttr attr) {
    int value = 0;
    const cudaError_t result = attribute(&value, attr, id);
    if (result == cudaSuccess) return value;
    static std::atomic<bool> said{false};
    if (!said.exchange(true)) {
      collector::log_format(collector::LogLevel::Warn,
                            "device %d: cudaDeviceGetAttribute(%d) returned %d; the trace's deviceProperties "
                            "lack the figures it could not read",
                            id, int(attr), int(result));
    }
    return 0;
  };
  d.compute_major = get(cudaDevAttrComputeCapabilityMajor);
  d.compute_minor = get(cudaDevAttrComputeCapabilityMinor);
  d.max_threads_per_block = get(cudaDevAttrMaxThreadsPerBlock);
  d.max_threads_per_multiprocessor = get(cudaDevAttrMaxThreadsPerMultiProcessor);
  d.regs_per_block = get(cudaDevAttrMaxRegistersPerBlock);
  d.regs_per_multiprocessor = get(cudaDevAttrMaxRegistersPerMultiprocessor);
  d.warp_size = get(cudaDevAttrWarpSize);
  d.shared_mem_per_block = uint64_t(get(cudaDevAttrMaxSharedMemoryPerBlock));
  d.shared_mem_per_multiprocessor = uint64_t(get(cudaDevAttrMaxSharedMemoryPerMultiprocessor));
  d.shared_mem_per_block_optin = uint64_t(get(cudaDevAttrMaxSharedMemoryPerBlockOptin));
  d.reserved_shared_mem_per_block = uint64_t(get(cudaDevAttrReservedSharedMemoryPerBlock));
  d.num_sms = get(cudaDevAttrMultiProcessorCount);
  return d;
}

// Called by the session at freeze, under AgentBusy, only if CUDA was used. Every failure
// just leaves a field empty.
collector::PlatformInfo platform_info() {
  collector::PlatformInfo info;
  if (auto* version = real<decltype(cudaRuntimeGetVersion)>(g_runtime_version)) version(&info.cuda_runtime_version);
  if (auto* version = real<decltype(cudaDriverGetVersion)>(g_driver_version)) version(&info.cuda_driver_version);
  auto* count_devices = real<decltype(cudaGetDeviceCount)>(g_device_count);
  auto* attribute = real<AttributeFn>(g_device_attribute);
  int count = 0;
  if (count_devices == nullptr || attribute == nullptr || count_devices(&count) != cudaSuccess) return info;
  for (int id = 0; id < count; ++id) info.devices.push_back(device_info(id, attribute));
  return info;
}

collector::CuptiMode cupti_mode(CuptiMode mode) {
  return mode == CuptiMode::On ? collector::CuptiMode::On
         : mode == CuptiMode::Off ? collector::CuptiMode::Off
                                  : collector::CuptiMode::Auto;
}

// PROFAGENT_PROFILE_MEMORY: allocation records of one window get another quarter of the host
// event budget (about 1.2 million records with the default PROFAGENT_BUFFER_MB); the totals
// are kept exact beyond it.
void start_memory_bookkeeping(size_t buffer_bytes) {
  collector::configure_memory_records(buffer_bytes / 4 / sizeof(MemoryRecord));
  collector::g_memory_tracking.store(true);
}

// What Trace::config records: the configuration (the agent's, leaked: it lives as long as the
// process) and whom NVTX_INJECTION64_PATH named as the process started, before the agent named
// itself there. Set once, by start_collector.
const Config* g_recorded_config = nullptr;
const std::string* g_nvtx_injection_state = nullptr;  // leaked

// Built for each window, not at start-up: ~38 k instructions that a process that records
// nothing (a shell, a launcher) would pay for nothing.
collector::ConfigPairs recorded_config() {
  collector::ConfigPairs pairs = g_recorded_config->to_pairs();
  pairs.emplace_back(kNvtxInjectionVariable, *g_nvtx_injection_state);
  return pairs;
}

collector::SessionOptions session_options(const Config& config) {
  collector::SessionOptions options;
  options.activity_cpu = config.activity_cpu;
  options.activity_cuda = config.activity_cuda;
  options.cupti.mode = cupti_mode(config.cupti);
  options.cupti.library_path = config.cupti_lib;
  options.buffer_bytes = size_t(config.buffer_mb) << 20;
  g_recorded_config = &config;
  g_nvtx_injection_state = new std::string(nvtx_injection_state());
  options.config_pairs = recorded_config;
  options.platform_info = platform_info;
  options.window_wait_ms = config.window_wait_ms;
  options.limits = {.max_events = config.max_events, .min_duration_ns = config.min_duration_us * 1000};
  return options;
}

}  // namespace

bool start_collector(const Config& config) noexcept {
  try {
    const collector::SessionOptions options = session_options(config);
    // Operator shapes are kept beside the host events, in a quarter of their budget (64 MiB
    // for the default PROFAGENT_BUFFER_MB): a larger buffer makes room for both.
    collector::configure_shape_store(options.buffer_bytes / 4);
    if (config.profile_memory) start_memory_bookkeeping(options.buffer_bytes);
    if (!collector::start(options)) return false;
    // The schedule and the step markers decide what is recorded (agent/windows.h).
    return start_windows(config);
  } catch (...) {
    static collector::SwallowedSite site{"starting the collector failed"};
    collector::note_swallowed(site);  // the caller then says that profiling is off
    return false;
  }
}

void count_step() noexcept { step_ended(); }

bool freeze_final_window(Trace& trace) noexcept { return freeze_last_window(trace); }

}  // namespace profagent::agent
