// Small hand-built Traces for the exporter tests: what the collector would freeze, with
// round numbers so expected sums are easy to state.
#pragma once

#include <string>

#include "collector/trace.h"

namespace profagent::exporters::test {

inline constexpr uint32_t kPid = 4242;
inline constexpr uint32_t kWorker = 4250;
// An agent-clock origin far from 0 and a Unix offset, as on a real machine.
inline constexpr uint64_t kT0 = 5'000'000'000;
inline constexpr int64_t kUnixOffset = 1'763'700'000'000'000'000 - static_cast<int64_t>(kT0);

inline HostRecord host(EventKind kind, std::string name, uint64_t start_us, uint64_t end_us,
                       uint64_t id, uint32_t tid = kPid, int64_t parent = kNoIndex) {
  HostRecord h;
  h.kind = kind;
  h.name = std::move(name);
  h.start_ns = kT0 + start_us * 1000;
  h.end_ns = kT0 + end_us * 1000;
  h.id = id;
  h.pid = kPid;
  h.tid = tid;
  h.external_id = id;
  h.parent = parent;
  return h;
}

inline DeviceRecord device(DeviceKind kind, std::string name, uint64_t start_us, uint64_t end_us,
                           uint32_t stream, uint32_t correlation, int64_t host_index) {
  DeviceRecord d;
  d.kind = kind;
  d.name = std::move(name);
  d.start_ns = kT0 + start_us * 1000;
  d.end_ns = kT0 + end_us * 1000;
  d.stream = stream;
  d.correlation = correlation;
  d.host = host_index;
  return d;
}

// Main thread: op "aten::mm" [0,100]us containing cudaLaunchKernel [10,20] (corr 1) and
//   cudaMemcpyAsync [30,40] (corr 2); op "aten::relu" [110,150] with a driver launch
//   (cuLaunchKernel [120,125], corr 3) whose kernel is attributed to the op itself;
//   cudaDeviceSynchronize [160,400].
// Worker thread: cudaLaunchKernel [50,55] (corr 4), failed cudaMalloc [60,61].
// Device 0: gemm [25,125] on stream 7 (corr 1), memcpy [130,140] stream 7 (corr 2),
//   relu kernel [150,170] stream 7 (corr 3), gemm [180,230] on stream 0 (corr 4),
//   Stream Sync record [160,400] on stream 7.
inline Trace sample_trace() {
  Trace t;
  t.window = 1;
  t.start_ns = kT0;
  t.end_ns = kT0 + 500'000;
  t.unix_offset_ns = kUnixOffset;
  t.process.pid = kPid;
  t.process.host_name = "node7";
  t.process.exe_name = "train";
  t.process.rank = 3;
  t.process.world_size = 8;
  t.process.thread_names = {{kPid, "train"}, {kWorker, "worker"}};
  t.devices.push_back(DeviceInfo{0, "Simulated GPU", 16ull << 30, 7, 5, 1024, 1024, 65536,
                                 65536, 32, 49152, 65536, 65536, 40});
  t.host.push_back(host(EventKind::Operator, "aten::mm", 0, 100, 10));                 // 0
  t.host.push_back(host(EventKind::Launch, "cudaLaunchKernel", 10, 20, 11, kPid, 0));  // 1
  t.host.push_back(host(EventKind::Memcpy, "cudaMemcpyAsync", 30, 40, 12, kPid, 0));   // 2
  t.host.push_back(host(EventKind::Operator, "aten::relu", 110, 150, 13));             // 3
  t.host.push_back(host(EventKind::Sync, "cudaDeviceSynchronize", 160, 400, 14));      // 4
  t.host.push_back(host(EventKind::Launch, "cudaLaunchKernel", 50, 55, 15, kWorker));  // 5
  t.host.push_back(host(EventKind::Alloc, "cudaMalloc", 60, 61, 16, kWorker));         // 6
  t.host.push_back(host(EventKind::Launch, "cuLaunchKernel", 120, 125, 0, kPid, 3));   // 7
  t.host[7].flags = kFlagDriverApi | kFlagAsync;
  t.host[7].correlation = 3;
  t.host[7].external_id = 13;
  t.host[1].external_id = t.host[2].external_id = 10;
  t.host[1].correlation = 1;
  t.host[1].kernel_name = "gemm";
  t.host[2].correlation = 2;
  t.host[2].arg0 = 4096;
  t.host[5].correlation = 4;
  t.host[6].flags = kFlagFailed;
  t.host[6].result = 2;

  DeviceRecord gemm = device(DeviceKind::Kernel, "gemm", 25, 125, 7, 1, 1);
  gemm.grid[0] = 128, gemm.grid[1] = gemm.grid[2] = 1;
  gemm.block[0] = 256, gemm.block[1] = gemm.block[2] = 1;
  gemm.registers_per_thread = 32;
  gemm.external_id = 10;
  DeviceRecord copy = device(DeviceKind::Memcpy, "Memcpy HtoD (Pageable -> Device)", 130, 140, 7, 2, 2);
  copy.bytes = 4096;
  copy.external_id = 10;
  DeviceRecord relu = device(DeviceKind::Kernel, "relu_kernel", 150, 170, 7, 3, 7);
  relu.external_id = 13;
  DeviceRecord gemm2 = device(DeviceKind::Kernel, "gemm", 180, 230, 0, 4, 5);
  gemm2.external_id = 15;
  DeviceRecord sync = device(DeviceKind::Sync, "", 160, 400, 7, 5, 4);
  sync.sync_type = 3;
  t.device = {gemm, copy, relu, sync, gemm2};
  t.device_backend = "cupti";
  t.cupti_version = "13.0";
  t.cuda_runtime_version = 13000;
  t.cuda_driver_version = 13000;
  t.config = {{"PROFAGENT_OUTPUT_DIR", "out"}, {"PROFAGENT_SORT_BY", "cuda_time_total"}};
  return t;
}

}  // namespace profagent::exporters::test
