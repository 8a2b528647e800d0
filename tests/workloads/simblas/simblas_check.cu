// simblas_check: proves that simblas' driver-level launches work where the program runs. On a
// GPU it checks the numbers; on devsim (which does not run kernels) it checks what the device
// model guarantees: the launches succeed, take device time on the caller's stream, and bad
// arguments are refused before anything is launched.
#include "simblas.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

void check(cudaError_t status, const char* call, int line) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "simblas_check.cu:%d: %s failed: %s\n", line, call, cudaGetErrorString(status));
  std::exit(EXIT_FAILURE);
}

void check(simblasStatus_t status, const char* call, int line) {
  if (status == SIMBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "simblas_check.cu:%d: %s failed: %s (CUresult %d)\n", line, call,
               simblasGetStatusString(status), simblasGetLastDriverError());
  std::exit(EXIT_FAILURE);
}

#define CHECK(call) check((call), #call, __LINE__)

void fail(const char* what) {
  std::fprintf(stderr, "FAILED: %s\n", what);
  std::exit(EXIT_FAILURE);
}

constexpr int kM = 64, kN = 48, kK = 32, kSaxpyN = 1000;

float* upload(const std::vector<float>& host) {
  float* device = nullptr;
  CHECK(cudaMalloc(&device, host.size() * sizeof(float)));
  CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  return device;
}

std::vector<float> download(const float* device, size_t n) {
  std::vector<float> host(n);
  CHECK(cudaMemcpy(host.data(), device, n * sizeof(float), cudaMemcpyDeviceToHost));
  return host;
}

// Column-major reference C = A * B.
float reference(const std::vector<float>& a, const std::vector<float>& b, int row, int col) {
  float sum = 0;
  for (int i = 0; i < kK; ++i) sum += a[row + i * kM] * b[i + col * kK];
  return sum;
}

void verify_gemm(const std::vector<float>& a, const std::vector<float>& b, const float* d_c) {
  std::vector<float> c = download(d_c, kM * kN);
  for (int col = 0; col < kN; ++col)
    for (int row = 0; row < kM; ++row)
      if (std::fabs(c[row + col * kM] - reference(a, b, row, col)) > 1e-3f) fail("sgemm result");
}

void expect_refused() {
  float* none = nullptr;
  if (simblasSgemm(0, 1, 1, 1.0f, none, 1, none, 1, 0.0f, none, 1, 0) != SIMBLAS_STATUS_INVALID_VALUE)
    fail("sgemm with m = 0 was not refused");
  if (simblasSgemm(4, 4, 4, 1.0f, none, 2, none, 4, 0.0f, none, 4, 0) != SIMBLAS_STATUS_INVALID_VALUE)
    fail("sgemm with lda < m was not refused");
  if (simblasSaxpy(-1, 1.0f, none, none, 0) != SIMBLAS_STATUS_INVALID_VALUE) fail("saxpy with n < 0 was not refused");
}

}  // namespace

int main() {
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  bool simulated = std::strstr(prop.name, "devsim") != nullptr;
  std::vector<float> a(kM * kK), b(kK * kN), x(kSaxpyN, 1.0f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3.0f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) - 2.0f;
  float *d_a = upload(a), *d_b = upload(b), *d_c = upload(std::vector<float>(kM * kN, 0.0f));
  float *d_x = upload(x), *d_y = upload(x);

  cudaStream_t stream;
  cudaEvent_t start, stop;
  CHECK(cudaStreamCreate(&stream));
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start, stream));
  CHECK(simblasSgemm(kM, kN, kK, 1.0f, d_a, kM, d_b, kK, 0.0f, d_c, kM, stream));
  CHECK(simblasSaxpy(kSaxpyN, 2.0f, d_x, d_y, stream));
  CHECK(cudaEventRecord(stop, stream));
  CHECK(cudaStreamSynchronize(stream));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  std::printf("simblas: sgemm %dx%dx%d + saxpy %d through cuLaunchKernel: %.4f ms on the device\n",
              kM, kN, kK, kSaxpyN, ms);
  if (!(ms > 0.0f)) fail("the driver launches took no device time");
  expect_refused();
  std::printf("simblas: invalid arguments refused\n");

  if (simulated) {
    std::printf("simblas: results not checked (simulated device)\n");
  } else {
    verify_gemm(a, b, d_c);
    if (download(d_y, kSaxpyN)[kSaxpyN - 1] != 3.0f) fail("saxpy result");
    std::printf("simblas: results verified\n");
  }
  for (float* p : {d_a, d_b, d_c, d_x, d_y}) CHECK(cudaFree(p));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaStreamDestroy(stream));
  std::printf("simblas_check: PASSED\n");
  return 0;
}
