// multi_stream: overlapping copies and compute with several streams, like the introductory
// simpleStreams sample. The same work — copy a chunk in, transform it, copy it out — runs once on
// a single stream and once split over N streams; events on the legacy default stream (which
// waits for all blocking streams) time both, and the ratio is the overlap gained.
#include "sample_check.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void scale_and_shift(float* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * 2.0f + 1.0f;
}

namespace {

constexpr int kElements = 8 * 1024 * 1024;
constexpr int kThreadsPerBlock = 256;
constexpr int kRepeats = 3;  // best of several runs, so one host hiccup does not decide

struct Buffers {
  float* host_in = nullptr;   // pinned: required for async copies to overlap
  float* host_out = nullptr;  // pinned
  float* device = nullptr;
};

// One chunk's pipeline on one stream: in, transform, out.
void enqueue_chunk(const Buffers& b, int offset, int count, cudaStream_t stream) {
  size_t bytes = count * sizeof(float);
  CHECK_CUDA(cudaMemcpyAsync(b.device + offset, b.host_in + offset, bytes, cudaMemcpyHostToDevice, stream));
  int blocks = (count + kThreadsPerBlock - 1) / kThreadsPerBlock;
  scale_and_shift<<<blocks, kThreadsPerBlock, 0, stream>>>(b.device + offset, count);
  CHECK_LAUNCH();
  CHECK_CUDA(cudaMemcpyAsync(b.host_out + offset, b.device + offset, bytes, cudaMemcpyDeviceToHost, stream));
}

// Splits the work over `streams` (one stream = the serial baseline) and returns its event time.
float timed_run(const Buffers& b, const std::vector<cudaStream_t>& streams) {
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  int chunk = kElements / static_cast<int>(streams.size());
  CHECK_CUDA(cudaEventRecord(start, 0));
  for (size_t s = 0; s < streams.size(); ++s) enqueue_chunk(b, static_cast<int>(s) * chunk, chunk, streams[s]);
  CHECK_CUDA(cudaEventRecord(stop, 0));
  CHECK_CUDA(cudaEventSynchronize(stop));
  float ms = 0.0f;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  return ms;
}

float best_of(const Buffers& b, const std::vector<cudaStream_t>& streams) {
  float best = timed_run(b, streams);
  for (int r = 1; r < kRepeats; ++r) {
    float ms = timed_run(b, streams);
    if (ms < best) best = ms;
  }
  return best;
}

void verify(const Buffers& b, bool simulated) {
  for (int i = 0; i < kElements; ++i) {
    float expected = simulated ? b.host_in[i] : b.host_in[i] * 2.0f + 1.0f;
    if (b.host_out[i] != expected) samples::fail("output after the copy round trip");
  }
}

}  // namespace

int main(int argc, char** argv) {
  int stream_count = argc > 1 ? std::atoi(argv[1]) : 4;
  if (stream_count < 2 || kElements % stream_count != 0) samples::fail("stream count must divide the work, >= 2");
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("Device: %s, %d copy engine(s), concurrent kernels: %s\n", prop.name,
              prop.asyncEngineCount, prop.concurrentKernels ? "yes" : "no");

  Buffers b;
  size_t bytes = kElements * sizeof(float);
  CHECK_CUDA(cudaMallocHost(&b.host_in, bytes));
  CHECK_CUDA(cudaMallocHost(&b.host_out, bytes));
  CHECK_CUDA(cudaMalloc(&b.device, bytes));
  for (int i = 0; i < kElements; ++i) b.host_in[i] = static_cast<float>(i % 4096);

  std::vector<cudaStream_t> streams(stream_count);
  for (cudaStream_t& s : streams) CHECK_CUDA(cudaStreamCreate(&s));
  float serial_ms = best_of(b, {streams[0]});
  float overlapped_ms = best_of(b, streams);
  verify(b, samples::device_is_simulated(0));

  std::printf("serial (1 stream):       %8.3f ms\n", serial_ms);
  std::printf("overlapped (%d streams): %8.3f ms\n", stream_count, overlapped_ms);
  std::printf("overlap gained: %.2fx\n", serial_ms / overlapped_ms);
  for (cudaStream_t s : streams) CHECK_CUDA(cudaStreamDestroy(s));
  CHECK_CUDA(cudaFreeHost(b.host_in));
  CHECK_CUDA(cudaFreeHost(b.host_out));
  CHECK_CUDA(cudaFree(b.device));
  std::printf("multi_stream: Test PASSED\n");
  return 0;
}
