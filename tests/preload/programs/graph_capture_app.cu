// graph_capture_app: CUDA graphs replayed after their capture, annotated with the nvtx3 headers
// only, as torch.cuda.graphs users and torch.compile(mode="reduce-overhead") programs do.
//
//   graph_capture_app [replays=6]
//
// A captured graph: inside the range "capture", a range "layer_kernel" holds a kernel and a
// range "layer_copy" a device-to-device copy and a set, all issued on a capturing stream;
// instantiated, then replayed `replays` times inside a range "replay". A graph built with
// explicit nodes inside the range "explicit_build" (a kernel node, a set node after it),
// replayed `replays / 2` times inside "replay" too. Under the agent each replayed record should
// carry the External id of the range open when its node was made, never the "replay" range's.
// Prints `expect {...}` with what it did, for the checker, and "graph_capture_app: PASSED".
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>

__global__ void layer_kernel(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * 2.0f + 1.0f;
}

namespace {

constexpr int kN = 1 << 14;
constexpr size_t kBytes = kN * sizeof(float);
int g_failures = 0;

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  ++g_failures;
  std::printf("%s failed: %s\n", what, cudaGetErrorName(status));
}

cudaGraph_t captured_graph(float* a, float* b, cudaStream_t stream) {
  cudaGraph_t graph = nullptr;
  nvtxRangePushA("capture");
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  nvtxRangePushA("layer_kernel");
  layer_kernel<<<kN / 256, 256, 0, stream>>>(a, kN);
  check(cudaGetLastError(), "layer_kernel");
  nvtxRangePop();
  nvtxRangePushA("layer_copy");
  check(cudaMemcpyAsync(b, a, kBytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
  check(cudaMemsetAsync(a, 0, kBytes, stream), "cudaMemsetAsync");
  nvtxRangePop();
  check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  nvtxRangePop();
  return graph;
}

cudaGraph_t explicit_graph(float* a) {
  cudaGraph_t graph = nullptr;
  check(cudaGraphCreate(&graph, 0), "cudaGraphCreate");
  nvtxRangePushA("explicit_build");
  int n = kN;
  void* args[] = {&a, &n};
  cudaKernelNodeParams kernel{};
  kernel.func = reinterpret_cast<void*>(layer_kernel);
  kernel.gridDim = dim3(kN / 256);
  kernel.blockDim = dim3(256);
  kernel.kernelParams = args;
  cudaGraphNode_t kernel_node = nullptr, set_node = nullptr;
  check(cudaGraphAddKernelNode(&kernel_node, graph, nullptr, 0, &kernel), "cudaGraphAddKernelNode");
  cudaMemsetParams set{};
  set.dst = a, set.value = 0, set.elementSize = 4, set.width = kN, set.height = 1;
  check(cudaGraphAddMemsetNode(&set_node, graph, &kernel_node, 1, &set), "cudaGraphAddMemsetNode");
  nvtxRangePop();
  return graph;
}

void replay(cudaGraphExec_t exec, int times, cudaStream_t stream) {
  nvtxRangePushA("replay");
  for (int i = 0; i < times; ++i) check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  nvtxRangePop();
}

}  // namespace

int main(int argc, char** argv) {
  const int replays = argc > 1 ? std::atoi(argv[1]) : 6;
  float *a = nullptr, *b = nullptr;
  check(cudaMalloc(&a, kBytes), "cudaMalloc");
  check(cudaMalloc(&b, kBytes), "cudaMalloc");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");

  cudaGraph_t captured = captured_graph(a, b, stream);
  cudaGraph_t built = explicit_graph(a);
  size_t captured_nodes = 0, built_nodes = 0;
  check(cudaGraphGetNodes(captured, nullptr, &captured_nodes), "cudaGraphGetNodes");
  check(cudaGraphGetNodes(built, nullptr, &built_nodes), "cudaGraphGetNodes");
  cudaGraphExec_t captured_exec = nullptr, built_exec = nullptr;
  check(cudaGraphInstantiate(&captured_exec, captured, 0), "cudaGraphInstantiate");
  check(cudaGraphInstantiate(&built_exec, built, 0), "cudaGraphInstantiate");
  // As torch.cuda.CUDAGraph does: the graph goes once instantiated, the exec stays.
  check(cudaGraphDestroy(captured), "cudaGraphDestroy");

  replay(captured_exec, replays, stream);
  replay(built_exec, replays / 2, stream);

  check(cudaGraphExecDestroy(captured_exec), "cudaGraphExecDestroy");
  check(cudaGraphExecDestroy(built_exec), "cudaGraphExecDestroy");
  check(cudaGraphDestroy(built), "cudaGraphDestroy");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  check(cudaFree(a), "cudaFree");
  check(cudaFree(b), "cudaFree");
  std::printf("expect {\"captured_nodes\": %zu, \"captured_replays\": %d, \"built_nodes\": %zu, \"built_replays\": %d}\n",
              captured_nodes, replays, built_nodes, replays / 2);
  if (g_failures != 0) return 1;
  std::printf("graph_capture_app: PASSED\n");
  return 0;
}
