// long_window: a job whose one window lasts as long as it runs (tests/reliability/cases_partial.py).
//
// Iteration k (from 0) launches `tick` with grid k+1 inside a user range "iteration" and waits
// for it, then prints "done K START END" (CLOCK_REALTIME ns around the iteration) and flushes,
// so a checker knows what the program had done at any instant. It sleeps ~1 ms between
// iterations (the window grows slowly, the checker's machine stays usable).
//   long_window ITERATIONS     0: until killed
#include <cuda_runtime_api.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

extern "C" {
void profagent_range_push(const char* name) __attribute__((weak));
void profagent_range_pop(void) __attribute__((weak));
}

__global__ void tick(int* out) { out[blockIdx.x % 64] += 1; }

namespace {

long long realtime_ns() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return now.tv_sec * 1000000000LL + now.tv_nsec;
}

}  // namespace

int main(int argc, char** argv) {
  const long long iterations = argc > 1 ? std::atoll(argv[1]) : 0;
  int* data = nullptr;
  if (cudaMalloc(&data, 64 * sizeof(int)) != cudaSuccess) {
    std::printf("cudaMalloc failed\n");
    return 1;
  }
  for (long long k = 0; iterations == 0 || k < iterations; ++k) {
    const long long start = realtime_ns();
    if (profagent_range_push) profagent_range_push("iteration");
    tick<<<unsigned(k + 1), 1>>>(data);
    const cudaError_t status = cudaDeviceSynchronize();
    if (profagent_range_pop) profagent_range_pop();
    if (status != cudaSuccess) {
      std::printf("iteration %lld: %s\n", k, cudaGetErrorName(status));
      return 1;
    }
    std::printf("done %lld %lld %lld\n", k, start, realtime_ns());
    std::fflush(stdout);
    usleep(1000);
  }
  cudaFree(data);
  return 0;
}
