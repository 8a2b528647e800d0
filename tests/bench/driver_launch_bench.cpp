// The cost the CUPTI callback path adds to a call no hook sees: a driver-API-only program
// launching <count> kernels with cuLaunchKernel, timed around the launch loop. Run it without
// the agent, with the agent recording (every launch becomes a host event) and with the agent
// idle (callbacks subscribed, nothing recorded); DEVSIM_HOST_COST_SCALE=0 removes the
// simulator's modelled CPU time. Prints "ns_per_launch <value>".
#include <cuda.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "inject_cubin.h"

int main(int argc, char** argv) {
  const long count = argc > 1 ? std::atol(argv[1]) : 100000;
  CUdevice device;
  CUcontext context;
  CUmodule module;
  CUfunction scale;
  if (cuInit(0) || cuDeviceGet(&device, 0) || cuDevicePrimaryCtxRetain(&context, device) ||
      cuCtxSetCurrent(context) || cuModuleLoadData(&module, inject_cubin) ||
      cuModuleGetFunction(&scale, module, "scale")) {
    std::fprintf(stderr, "driver_launch_bench: set-up failed\n");
    return 2;
  }
  CUdeviceptr data = 0;
  float factor = 1.0f;
  int n = 32;
  void* args[] = {&data, &factor, &n};
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < count; ++i) cuLaunchKernel(scale, 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr);
  const auto end = std::chrono::steady_clock::now();
  cuCtxSynchronize();
  std::printf("ns_per_launch %.1f\n", std::chrono::duration<double, std::nano>(end - start).count() / double(count));
  return 0;
}
