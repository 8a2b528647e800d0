// Of the kind of CUDA's simpleCudaGraphs (its stream-capture half): a step captured from two
// streams — the second joins the capture by waiting for an event recorded on the first (a
// fork) and rejoins it before the end — then replayed from the graph. Checks the bytes each
// replay moves, and that the forked stream left the capture with the origin.
#include <cstdio>
#include <cstring>
#include <vector>

#include "workload_check.h"

__global__ void scale(float* data, int n, float factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

namespace {

bool run() {
  constexpr int kN = 1 << 16;
  constexpr int kReplays = 5;
  constexpr size_t kBytes = kN * sizeof(float);
  float *host_in = nullptr, *host_out = nullptr, *left = nullptr, *right = nullptr;
  CHECK(cudaMallocHost(&host_in, kBytes));
  CHECK(cudaMallocHost(&host_out, 2 * kBytes));
  CHECK(cudaMalloc(&left, kBytes));
  CHECK(cudaMalloc(&right, kBytes));
  cudaStream_t origin, forked;
  CHECK(cudaStreamCreateWithFlags(&origin, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&forked, cudaStreamNonBlocking));
  cudaEvent_t fork_point, join_point;
  CHECK(cudaEventCreateWithFlags(&fork_point, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&join_point, cudaEventDisableTiming));

  cudaGraph_t graph;
  CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal));
  CHECK(cudaEventRecord(fork_point, origin));
  CHECK(cudaStreamWaitEvent(forked, fork_point, 0));  // `forked` joins the capture
  CHECK(cudaMemcpyAsync(left, host_in, kBytes, cudaMemcpyHostToDevice, origin));
  CHECK(cudaMemcpyAsync(right, host_in, kBytes, cudaMemcpyHostToDevice, forked));
  scale<<<kN / 256, 256, 0, origin>>>(left, kN, 2.0f);
  scale<<<kN / 256, 256, 0, forked>>>(right, kN, 3.0f);
  CHECK(cudaMemsetAsync(right, 0, sizeof(float), forked));
  CHECK(cudaMemcpyAsync(host_out + kN, right, kBytes, cudaMemcpyDeviceToHost, forked));
  CHECK(cudaEventRecord(join_point, forked));
  CHECK(cudaStreamWaitEvent(origin, join_point, 0));  // and rejoins the origin
  CHECK(cudaMemcpyAsync(host_out, left, kBytes, cudaMemcpyDeviceToHost, origin));
  CHECK(cudaStreamEndCapture(origin, &graph));

  cudaStreamCaptureStatus status;
  CHECK(cudaStreamIsCapturing(forked, &status));
  EXPECT(status == cudaStreamCaptureStatusNone, "the forked stream is still capturing after the capture ended");
  size_t nodes = 0;
  CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));

  bool ok = true;
  for (int replay = 0; replay < kReplays; ++replay) {
    for (int i = 0; i < kN; ++i) host_in[i] = float(replay * kN + i);
    CHECK(cudaGraphLaunch(exec, origin));
    CHECK(cudaStreamSynchronize(origin));
    // Kernels do not run on the simulated device, so the copies carry the input through; the
    // set zeroes the first element of the forked half.
    ok = ok && std::memcmp(host_out + 1, host_in + 1, kBytes - sizeof(float)) == 0 && host_out[0] == host_in[0] &&
         host_out[kN] == 0.0f && std::memcmp(host_out + kN + 1, host_in + 1, kBytes - sizeof(float)) == 0;
  }
  // After the capture the forked stream runs its own work again.
  CHECK(cudaMemsetAsync(left, 0, kBytes, forked));
  CHECK(cudaStreamSynchronize(forked));
  std::printf("captured from 2 streams: %zu nodes, replayed %d times, bytes %s\n", nodes, kReplays,
              ok ? "intact" : "WRONG");
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaEventDestroy(fork_point);
  cudaEventDestroy(join_point);
  cudaStreamDestroy(origin);
  cudaStreamDestroy(forked);
  cudaFree(left);
  cudaFree(right);
  cudaFreeHost(host_in);
  cudaFreeHost(host_out);
  return ok;
}

}  // namespace

int main() {
  const bool ok = run();
  std::printf("capture_fork: %s\n", ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
}
