// vector_add: C = A + B on the device, like the introductory vectorAdd sample: allocate, copy
// the inputs host-to-device, launch, check the launch, copy the result back, verify.
//
// On a real GPU the sum is verified. A simulated device (its name says so) times kernels but
// does not run them, so there the program verifies what the device model does guarantee: the
// copies move the bytes both ways, the launch succeeds and the kernel takes measurable time.
#include "sample_check.h"

#include <cmath>
#include <cstdio>
#include <vector>

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

namespace {

constexpr int kElements = 50000;
constexpr int kThreadsPerBlock = 256;

std::vector<float> make_input(int n, float scale) {
  std::vector<float> values(n);
  for (int i = 0; i < n; ++i) values[i] = scale * static_cast<float>((i * 7919) % 1000) / 1000.0f;
  return values;
}

// Copies `host` to the device and back into a fresh buffer; the two must be equal byte for byte.
void verify_round_trip(const float* device, const std::vector<float>& host) {
  std::vector<float> back(host.size(), -1.0f);
  CHECK_CUDA(cudaMemcpy(back.data(), device, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < host.size(); ++i)
    if (back[i] != host[i]) samples::fail("device copy of the input differs from the host input");
}

void verify_sum(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c) {
  for (size_t i = 0; i < c.size(); ++i)
    if (std::fabs(a[i] + b[i] - c[i]) > 1e-5f) samples::fail("result verification");
}

float timed_launch(const float* a, const float* b, float* c) {
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  int blocks = (kElements + kThreadsPerBlock - 1) / kThreadsPerBlock;
  std::printf("CUDA kernel launch with %d blocks of %d threads\n", blocks, kThreadsPerBlock);
  CHECK_CUDA(cudaEventRecord(start));
  vector_add<<<blocks, kThreadsPerBlock>>>(a, b, c, kElements);
  CHECK_LAUNCH();
  CHECK_CUDA(cudaEventRecord(stop));
  CHECK_CUDA(cudaEventSynchronize(stop));
  float ms = 0.0f;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  return ms;
}

}  // namespace

int main() {
  const size_t bytes = kElements * sizeof(float);
  std::printf("[Vector addition of %d elements]\n", kElements);
  std::vector<float> a = make_input(kElements, 1.0f), b = make_input(kElements, 2.0f);
  std::vector<float> c(kElements, 0.0f);
  float *d_a = nullptr, *d_b = nullptr, *d_c = nullptr;
  CHECK_CUDA(cudaMalloc(&d_a, bytes));
  CHECK_CUDA(cudaMalloc(&d_b, bytes));
  CHECK_CUDA(cudaMalloc(&d_c, bytes));
  CHECK_CUDA(cudaMemcpy(d_a, a.data(), bytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_b, b.data(), bytes, cudaMemcpyHostToDevice));

  float ms = timed_launch(d_a, d_b, d_c);
  CHECK_CUDA(cudaMemcpy(c.data(), d_c, bytes, cudaMemcpyDeviceToHost));
  std::printf("Kernel time (events): %.4f ms\n", ms);
  if (!(ms > 0.0f)) samples::fail("kernel took no measurable time");

  verify_round_trip(d_a, a);
  verify_round_trip(d_b, b);
  std::printf("Copies verified: host -> device -> host round trip of both inputs is exact\n");
  if (samples::device_is_simulated(0)) {
    std::printf("Kernel results are not checked: the device is simulated and does not run kernels\n");
  } else {
    verify_sum(a, b, c);
    std::printf("Kernel results verified: C = A + B\n");
  }
  CHECK_CUDA(cudaFree(d_a));
  CHECK_CUDA(cudaFree(d_b));
  CHECK_CUDA(cudaFree(d_c));
  std::printf("Test PASSED\n");
  return 0;
}
