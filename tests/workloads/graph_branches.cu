// Of the kind of CUDA's simpleCudaGraphs and graphMemoryNodes samples: a graph built node by
// node, with a memory node and two parallel branches between a fork and a join, launched
// several times.
//
//   alloc scratch ─▶ upload input ─▶ record "fork" ─┬─▶ copy input to scratch[0,n) ─▶ kernel left  ─▶ record "left"  ─┐
//                                                   └─▶ fill scratch[n,2n) with 0x3f ─▶ kernel right ─▶ record "right" ─┴─▶ record "joined" ─▶ download scratch ─▶ free scratch
//
// The kernels only read the scratch halves (they write buffers of their own), so the bytes
// that come back depend on the copies and the fill alone, on any device. Each launch uploads a
// different input and checks what comes back; the events recorded by the graph's event nodes
// give each branch's device time and the time from fork to join, which is shorter than the
// two branches one after the other when they overlap.
#include <cstdio>
#include <cstring>
#include <vector>

#include "workload_check.h"

__global__ void branch_left(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * 2.0f;
}

__global__ void branch_right(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + 1.0f;
}

namespace {

constexpr int kElements = 1 << 22;  // 16 MiB per half
constexpr size_t kHalfBytes = kElements * sizeof(float);
constexpr int kLaunches = 4;
constexpr unsigned char kFill = 0x3f;

struct Buffers {
  float* input = nullptr;   // pinned host
  float* result = nullptr;  // pinned host, both halves
  float* dev_in = nullptr;
  float* out_left = nullptr;
  float* out_right = nullptr;
};

struct Events {
  cudaEvent_t fork, left, right, joined;
};

bool add_kernel(cudaGraph_t g, cudaGraphNode_t dep, void* func, const float* in, float* out,
                cudaGraphNode_t* node) {
  int n = kElements;
  void* args[3];
  const float* in_arg = in;  // CUDA copies the arguments when the node is added
  float* out_arg = out;
  args[0] = &in_arg, args[1] = &out_arg, args[2] = &n;
  cudaKernelNodeParams p{};
  p.func = func;
  p.gridDim = dim3((kElements + 255) / 256);
  p.blockDim = dim3(256);
  p.kernelParams = args;
  CHECK(cudaGraphAddKernelNode(node, g, &dep, 1, &p));
  return true;
}

bool build(cudaGraph_t g, const Buffers& b, const Events& ev, cudaGraphNode_t* alloc_node) {
  cudaMemAllocNodeParams alloc{};
  alloc.poolProps.allocType = cudaMemAllocationTypePinned;
  alloc.poolProps.location.type = cudaMemLocationTypeDevice;
  alloc.poolProps.location.id = 0;
  alloc.bytesize = 2 * kHalfBytes;
  CHECK(cudaGraphAddMemAllocNode(alloc_node, g, nullptr, 0, &alloc));
  auto* scratch = static_cast<char*>(alloc.dptr);  // fixed now, valid while the graph runs

  cudaGraphNode_t upload, fork, copy_left, fill_right, k_left, k_right, rec_left, rec_right, joined, download, free_node;
  CHECK(cudaGraphAddMemcpyNode1D(&upload, g, alloc_node, 1, b.dev_in, b.input, kHalfBytes, cudaMemcpyHostToDevice));
  CHECK(cudaGraphAddEventRecordNode(&fork, g, &upload, 1, ev.fork));
  CHECK(cudaGraphAddMemcpyNode1D(&copy_left, g, &fork, 1, scratch, b.dev_in, kHalfBytes, cudaMemcpyDeviceToDevice));
  cudaMemsetParams fill{};
  fill.dst = scratch + kHalfBytes;
  fill.value = kFill;
  fill.elementSize = 1;
  fill.width = kHalfBytes;
  fill.height = 1;
  CHECK(cudaGraphAddMemsetNode(&fill_right, g, &fork, 1, &fill));
  if (!add_kernel(g, copy_left, (void*)branch_left, reinterpret_cast<float*>(scratch), b.out_left, &k_left)) return false;
  if (!add_kernel(g, fill_right, (void*)branch_right, reinterpret_cast<float*>(scratch + kHalfBytes), b.out_right,
                  &k_right)) {
    return false;
  }
  CHECK(cudaGraphAddEventRecordNode(&rec_left, g, &k_left, 1, ev.left));
  CHECK(cudaGraphAddEventRecordNode(&rec_right, g, &k_right, 1, ev.right));
  cudaGraphNode_t ends[2] = {rec_left, rec_right};
  CHECK(cudaGraphAddEventRecordNode(&joined, g, ends, 2, ev.joined));
  CHECK(cudaGraphAddMemcpyNode1D(&download, g, &joined, 1, b.result, scratch, 2 * kHalfBytes,
                                 cudaMemcpyDeviceToHost));
  CHECK(cudaGraphAddMemFreeNode(&free_node, g, &download, 1, scratch));
  return true;
}

bool check_result(const Buffers& b, int launch) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(b.result);
  if (std::memcmp(b.result, b.input, kHalfBytes) != 0) {
    std::printf("FAIL launch %d: the left half did not come back as uploaded\n", launch);
    return false;
  }
  for (size_t i = kHalfBytes; i < 2 * kHalfBytes; i += 4093) {
    if (bytes[i] != kFill) {
      std::printf("FAIL launch %d: byte %zu of the right half is 0x%02x, not 0x%02x\n", launch, i, bytes[i], kFill);
      return false;
    }
  }
  return true;
}

bool launch_and_check(cudaGraphExec_t exec, cudaStream_t stream, const Buffers& b, const Events& ev) {
  float sum_left = 0, sum_right = 0, sum_graph = 0;
  for (int launch = 0; launch < kLaunches; ++launch) {
    for (int i = 0; i < kElements; ++i) b.input[i] = float(launch * kElements + i);
    std::memset(b.result, 0, 2 * kHalfBytes);
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaStreamSynchronize(stream));
    if (!check_result(b, launch)) return false;
    float left = 0, right = 0, graph = 0;
    CHECK(cudaEventElapsedTime(&left, ev.fork, ev.left));
    CHECK(cudaEventElapsedTime(&right, ev.fork, ev.right));
    CHECK(cudaEventElapsedTime(&graph, ev.fork, ev.joined));
    sum_left += left, sum_right += right, sum_graph += graph;
  }
  std::printf("%d launches checked: %zu bytes uploaded, copied, filled and downloaded each\n", kLaunches,
              2 * kHalfBytes);
  std::printf("branch overlap: fork to join %.3f ms < left branch %.3f ms + right branch %.3f ms\n",
              sum_graph / kLaunches, sum_left / kLaunches, sum_right / kLaunches);
  if (!(sum_graph < sum_left + sum_right)) {
    std::printf("FAIL the branches ran one after the other\n");
    return false;
  }
  return true;
}

bool run() {
  Buffers b;
  CHECK(cudaMallocHost(&b.input, kHalfBytes));
  CHECK(cudaMallocHost(&b.result, 2 * kHalfBytes));
  CHECK(cudaMalloc(&b.dev_in, kHalfBytes));
  CHECK(cudaMalloc(&b.out_left, kHalfBytes));
  CHECK(cudaMalloc(&b.out_right, kHalfBytes));
  Events ev;
  for (cudaEvent_t* e : {&ev.fork, &ev.left, &ev.right, &ev.joined}) CHECK(cudaEventCreate(e));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  cudaGraph_t graph;
  CHECK(cudaGraphCreate(&graph, 0));
  cudaGraphNode_t alloc_node;
  if (!build(graph, b, ev, &alloc_node)) return false;
  size_t nodes = 0, roots = 0;
  CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  CHECK(cudaGraphGetRootNodes(graph, nullptr, &roots));
  std::printf("graph built node by node: %zu nodes, %zu root\n", nodes, roots);
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  if (!launch_and_check(exec, stream, b, ev)) return false;
  unsigned long long in_use = 1;
  CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &in_use));
  std::printf("graph memory in use after the launches: %llu bytes\n", in_use);

  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaStreamDestroy(stream));
  for (cudaEvent_t e : {ev.fork, ev.left, ev.right, ev.joined}) CHECK(cudaEventDestroy(e));
  CHECK(cudaFree(b.dev_in));
  CHECK(cudaFree(b.out_left));
  CHECK(cudaFree(b.out_right));
  CHECK(cudaFreeHost(b.input));
  CHECK(cudaFreeHost(b.result));
  return in_use == 0;
}

}  // namespace

int main() {
  bool ok = run();
  std::printf("graph_branches: %s\n", ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
}
