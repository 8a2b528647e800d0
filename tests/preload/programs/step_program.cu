// step_program: a training loop whose step structure is known by construction, for the step
// window tests (tests/preload/windows_tests.cmake). Step k launches step_kernel with a grid of
// k+1 blocks (the witness: a checker reads the grid back from the trace and knows the step)
// and issues a user range "work_<k>"; then the step ends with the marker MODE names:
//   call      profagent_step()
//   api       cudaDeviceSynchronize() (the only call of it)       api:cudaDeviceSynchronize
//   kernel    a launch of end_kernel                              kernel:^end_kernel
//   range     a user range "iteration_end"                        range:^iteration_end$
//   time      a 30 ms pause (a timer thread marks the steps)      time:MS
//   profiler  cudaProfilerStart before steps 2 and 6, cudaProfilerStop after steps 3 and 6
//   none      nothing
//   step_program MODE [steps=10]
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" {
void profagent_step(void) __attribute__((weak));
void profagent_range_push(const char* name) __attribute__((weak));
void profagent_range_pop(void) __attribute__((weak));
}

__global__ void step_kernel(int* out) { out[blockIdx.x] = int(blockIdx.x); }
__global__ void end_kernel(int* out) { out[0] = 0; }

namespace {

int g_failures = 0;
void check(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  ++g_failures;
  std::printf("%s: %s\n", call, cudaGetErrorName(status));
}

void range(const char* name) {
  if (profagent_range_push) profagent_range_push(name);
  if (profagent_range_pop) profagent_range_pop();
}

void pause_ms(long ms) {
  timespec t{ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, nullptr);
}

void end_step(const char* mode, int step, int* buffer) {
  if (!std::strcmp(mode, "call") && profagent_step) profagent_step();
  if (!std::strcmp(mode, "api")) check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  if (!std::strcmp(mode, "kernel")) {
    end_kernel<<<1, 1>>>(buffer);
    check(cudaGetLastError(), "end_kernel");
  }
  if (!std::strcmp(mode, "range")) range("iteration_end");
  if (!std::strcmp(mode, "time")) pause_ms(30);
  if (!std::strcmp(mode, "profiler") && (step == 3 || step == 6)) check(cudaProfilerStop(), "cudaProfilerStop");
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "call";
  const int steps = argc > 2 ? std::atoi(argv[2]) : 10;
  // A device query first, as real programs make (the agent forwards it without an event).
  int devices = 0;
  check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  int* buffer = nullptr;
  check(cudaMalloc(&buffer, 1024 * sizeof(int)), "cudaMalloc");
  for (int step = 0; step < steps; ++step) {
    if (!std::strcmp(mode, "profiler") && (step == 2 || step == 6)) check(cudaProfilerStart(), "cudaProfilerStart");
    char name[32];
    std::snprintf(name, sizeof(name), "work_%d", step);
    range(name);
    step_kernel<<<step + 1, 1>>>(buffer);
    check(cudaGetLastError(), "step_kernel");
    check(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
    end_step(mode, step, buffer);
  }
  check(cudaFree(buffer), "cudaFree");
  std::printf("steps %d failures %d\n", steps, g_failures);
  return g_failures == 0 ? 0 : 1;
}
