// Devices, the calling thread's current device, and the fixed properties the front ends report.
#pragma once

#include <cstdint>

namespace devsim {

constexpr int kMaxDevices = 16;

int device_count();                  // DEVSIM_DEVICE_COUNT
bool valid_device(int device);
int current_device();                // per thread, 0 until set
void set_current_device(int device);
uint32_t context_id(int device);     // contextUid of the device's primary context
const char* device_name();           // "devsim simulated GPU"

// nvcc's modules: registered at start-up, unregistered by the atexit handler nvcc adds after
// each registration. NVIDIA's runtime tears itself down when the last one goes; a CUPTI client
// that flushes after that crashes the process (seen on an H100 with CUPTI 13.0), so devsim's
// CUPTI does the same (cupti/api_activity.cpp) and a profiler's exit flush must come earlier.
// The runtime's teardown at the last unregistration, as NVIDIA's destroys its contexts: queued
// work finishes, CUPTI hands every buffer to its client (Tracer::on_runtime_teardown), and from
// then on runtime_torn_down() (devsim_trace.h) is true.
void note_module_registered();
void note_module_unregistered();

// Fixed architecture figures (a Turing-like part, compute capability 7.5, as the tests build
// for sm_75); SM count and memory come from the knobs.
struct Arch {
  static constexpr int major = 7, minor = 5;
  static constexpr int warp_size = 32;
  static constexpr int max_threads_per_block = 1024;
  static constexpr int max_threads_per_sm = 1024;
  static constexpr int max_blocks_per_sm = 16;
  static constexpr int regs_per_sm = 65536;
  static constexpr int regs_per_block = 65536;
  static constexpr int shared_per_sm = 65536;
  static constexpr int shared_per_block = 49152;
  static constexpr int shared_per_block_optin = 65536;
  static constexpr int clock_khz = 1590000;
  static constexpr int memory_clock_khz = 5001000;
  static constexpr int memory_bus_width = 256;
  static constexpr int l2_bytes = 4 << 20;
};

}  // namespace devsim
