// queued_steps: a training loop whose steps only queue device work and return; the host
// synchronises once, after the last step. A step window cut at a step boundary therefore holds
// launches whose kernels have not run yet (tests/reliability/cases_windows_wait.py).
//
// Step k queues, on one non-blocking stream: work_a and work_b (grid k+1), an async copy of
// (k+1) * 4096 bytes from pinned memory, then the marker kernel step_end (grid k+1). The grid
// and the byte count tell a checker which step a device record came from. MODE says how a
// step ends:
//   kernel    the step_end launch                                kernel:^step_end
//   range     a user range "step_end" after the step's work,
//             the work itself inside a range "train_step"        range:^step_end$
//   profiler  no marker: cudaProfilerStart before step 2, cudaProfilerStop after step 4
//             (asyncAPI-like: the sync comes after Stop)         profiler-api
//   queued_steps MODE STEPS
// Prints the copies' checksum (the bytes really move) and an "expect" line for the checker.
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" {
void profagent_range_push(const char* name) __attribute__((weak));
void profagent_range_pop(void) __attribute__((weak));
}

__global__ void work_a(int* out) { out[blockIdx.x] += 1; }
__global__ void work_b(int* out) { out[blockIdx.x] *= 2; }
__global__ void step_end(int* out) { out[0] = 0; }

namespace {

constexpr int kCopyUnit = 4096;
int g_failures = 0;

void check(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  ++g_failures;
  std::printf("%s: %s\n", call, cudaGetErrorName(status));
}

void push(const char* name) {
  if (profagent_range_push) profagent_range_push(name);
}
void pop() {
  if (profagent_range_pop) profagent_range_pop();
}

// Queues one step's work; returns without waiting for any of it.
void queue_step(int step, cudaStream_t stream, int* device, const unsigned char* pinned, unsigned char* target) {
  const dim3 grid(step + 1);
  work_a<<<grid, 1, 0, stream>>>(device);
  check(cudaGetLastError(), "work_a");
  work_b<<<grid, 1, 0, stream>>>(device);
  check(cudaGetLastError(), "work_b");
  check(cudaMemcpyAsync(target, pinned, size_t(step + 1) * kCopyUnit, cudaMemcpyHostToDevice, stream),
        "cudaMemcpyAsync");
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "kernel";
  const int steps = argc > 2 ? std::atoi(argv[2]) : 12;
  const bool ranges = !std::strcmp(mode, "range");
  const bool profiler = !std::strcmp(mode, "profiler");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  int* device = nullptr;
  unsigned char* target = nullptr;
  unsigned char* pinned = nullptr;
  const size_t copy_bytes = size_t(steps) * kCopyUnit;
  check(cudaMalloc(&device, 1024 * sizeof(int)), "cudaMalloc");
  check(cudaMalloc(&target, copy_bytes), "cudaMalloc");
  check(cudaMallocHost(&pinned, copy_bytes), "cudaMallocHost");
  for (size_t i = 0; i < copy_bytes; ++i) pinned[i] = (unsigned char)(i * 7 + 3);

  for (int step = 0; step < steps; ++step) {
    if (profiler && step == 2) check(cudaProfilerStart(), "cudaProfilerStart");
    if (ranges) push("train_step");
    queue_step(step, stream, device, pinned, target);
    step_end<<<dim3(step + 1), 1, 0, stream>>>(device);
    check(cudaGetLastError(), "step_end");
    if (ranges) pop();
    if (ranges) push("step_end"), pop();
    if (profiler && step == 4) check(cudaProfilerStop(), "cudaProfilerStop");
  }
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");  // the only host sync

  unsigned char* back = static_cast<unsigned char*>(std::malloc(copy_bytes));
  check(cudaMemcpy(back, target, copy_bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  unsigned long checksum = 0;
  for (size_t i = 0; i < copy_bytes; ++i) checksum = checksum * 31 + back[i];
  std::free(back);
  check(cudaFreeHost(pinned), "cudaFreeHost");
  check(cudaFree(target), "cudaFree");
  check(cudaFree(device), "cudaFree");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  std::printf("steps %d checksum %lu failures %d\n", steps, checksum, g_failures);
  std::printf("expect {\"steps\": %d, \"copy_unit\": %d}\n", steps, kCopyUnit);
  return g_failures == 0 ? 0 : 1;
}
