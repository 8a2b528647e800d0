// trigger_app: a training-like loop that runs until told to stop, for `profagent trigger`
// (tests/reliability/cases_trigger.py).
//
//   trigger_app PERIOD_MS STOP_FILE   each step launches `trigger_step_kernel` twice inside a
//                                     range `step_work`, sleeps PERIOD_MS, and marks the step
//                                     with profagent_step(); ends (status 0) once STOP_FILE
//                                     exists, or after 6000 steps
// Prints "expect {...}" with the launches per step.
#include <cuda_runtime_api.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "fake_module.h"

extern "C" void profagent_step(void) __attribute__((weak));

namespace {

char g_stub;
constexpr int kLaunchesPerStep = 2;

int run(long period_ms, const char* stop_file) {
  register_fake_kernels(&g_stub, {"trigger_step_kernel"});
  long step = 0;
  for (; step < 6000 && access(stop_file, F_OK) != 0; ++step) {
    if (profagent_range_push) profagent_range_push("step_work");
    for (int i = 0; i < kLaunchesPerStep; ++i) {
      if (cudaLaunchKernel(&g_stub, dim3(1), dim3(1), nullptr, 0, nullptr) != cudaSuccess) return 2;
    }
    if (profagent_range_pop) profagent_range_pop();
    const timespec pause{.tv_sec = period_ms / 1000, .tv_nsec = (period_ms % 1000) * 1'000'000};
    nanosleep(&pause, nullptr);
    if (profagent_step) profagent_step();
  }
  if (cudaDeviceSynchronize() != cudaSuccess) return 3;
  std::printf("expect {\"per_step\": %d}\n", kLaunchesPerStep);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: trigger_app PERIOD_MS STOP_FILE\n");
    return 64;
  }
  return run(std::atol(argv[1]), argv[2]);
}
