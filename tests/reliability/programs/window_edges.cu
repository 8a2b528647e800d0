// window_edges: programs at the edges of step windows (tests/reliability/cases_window_edges.py).
//
//   window_edges timed MS            ~MS milliseconds of small steps of host and device work
//                                    (for PROFAGENT_STEP_ON=time:N); prints "done"
//   window_edges graphs KIND STEPS   each step launches a graph of KIND and one kernel, then
//                                    profagent_step(); KIND is one of
//                                      memory   a memory allocation node and its free node
//                                      host     two host nodes
//                                      empty    a graph without nodes, and one with an empty node
//                                      child    a child graph node whose graph has a host node
//                                      captured a stream capture of cudaLaunchHostFunc
//                                      kernel   a kernel node (device work, the control case)
//   window_edges race THREADS STEPS  THREADS threads launch kernels without pause while the
//                                    main thread ends a step every millisecond
//   window_edges queries STEPS       device queries, allocations, copies, events and kernels,
//                                    profagent_step() after each step
//
// Steps are marked with profagent_step() (a weak symbol: without the agent nothing happens).
// Everything printed is the same with and without the agent.
#include <cuda_runtime_api.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

extern "C" void profagent_step(void) __attribute__((weak));

__global__ void step_kernel(int* out) { out[blockIdx.x] += 1; }
__global__ void race_kernel(int* out) { out[blockIdx.x] = 1; }

namespace {

int g_failures = 0;
std::atomic<int> g_host_calls{0};

void check(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  ++g_failures;
  std::printf("%s: %s\n", call, cudaGetErrorName(status));
}

void step() {
  if (profagent_step) profagent_step();
}

uint64_t monotonic_ms() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return uint64_t(now.tv_sec) * 1000 + uint64_t(now.tv_nsec) / 1'000'000;
}

void sleep_us(long us) {
  const timespec pause{0, us * 1000};
  nanosleep(&pause, nullptr);
}

int timed(long total_ms) {
  int* device = nullptr;
  check(cudaMalloc(&device, 64 * sizeof(int)), "cudaMalloc");
  const uint64_t end = monotonic_ms() + uint64_t(total_ms);
  while (monotonic_ms() < end) {
    step_kernel<<<1, 1>>>(device);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    sleep_us(2000);
  }
  check(cudaFree(device), "cudaFree");
  std::printf("done\n");
  return g_failures == 0 ? 0 : 1;
}

// ---- graphs without device work ----------------------------------------------------------

void CUDART_CB count_host_call(void*) { g_host_calls.fetch_add(1); }

cudaGraph_t memory_graph() {
  cudaGraph_t graph = nullptr;
  check(cudaGraphCreate(&graph, 0), "cudaGraphCreate");
  cudaMemAllocNodeParams alloc{};
  alloc.poolProps.allocType = cudaMemAllocationTypePinned;
  alloc.poolProps.location.type = cudaMemLocationTypeDevice;
  alloc.poolProps.location.id = 0;
  alloc.bytesize = 1 << 20;
  cudaGraphNode_t alloc_node = nullptr, free_node = nullptr;
  check(cudaGraphAddMemAllocNode(&alloc_node, graph, nullptr, 0, &alloc), "cudaGraphAddMemAllocNode");
  check(cudaGraphAddMemFreeNode(&free_node, graph, &alloc_node, 1, alloc.dptr), "cudaGraphAddMemFreeNode");
  return graph;
}

cudaGraph_t host_graph() {
  cudaGraph_t graph = nullptr;
  check(cudaGraphCreate(&graph, 0), "cudaGraphCreate");
  cudaHostNodeParams host{count_host_call, nullptr};
  cudaGraphNode_t first = nullptr, second = nullptr;
  check(cudaGraphAddHostNode(&first, graph, nullptr, 0, &host), "cudaGraphAddHostNode");
  check(cudaGraphAddHostNode(&second, graph, &first, 1, &host), "cudaGraphAddHostNode");
  return graph;
}

cudaGraph_t child_graph() {
  cudaGraph_t inner = host_graph();
  cudaGraph_t graph = nullptr;
  check(cudaGraphCreate(&graph, 0), "cudaGraphCreate");
  cudaGraphNode_t child = nullptr, empty = nullptr;
  check(cudaGraphAddChildGraphNode(&child, graph, nullptr, 0, inner), "cudaGraphAddChildGraphNode");
  check(cudaGraphAddEmptyNode(&empty, graph, &child, 1), "cudaGraphAddEmptyNode");
  check(cudaGraphDestroy(inner), "cudaGraphDestroy");  // the child node holds its own copy
  return graph;
}

cudaGraph_t captured_graph(cudaStream_t stream) {
  cudaGraph_t graph = nullptr;
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  check(cudaLaunchHostFunc(stream, count_host_call, nullptr), "cudaLaunchHostFunc");
  check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  return graph;
}

cudaGraph_t kernel_graph(int* device) {
  cudaGraph_t graph = nullptr;
  check(cudaGraphCreate(&graph, 0), "cudaGraphCreate");
  void* args[] = {&device};
  cudaKernelNodeParams kernel{};
  kernel.func = reinterpret_cast<void*>(step_kernel);
  kernel.gridDim = dim3(2);
  kernel.blockDim = dim3(1);
  kernel.kernelParams = args;
  cudaGraphNode_t node = nullptr;
  check(cudaGraphAddKernelNode(&node, graph, nullptr, 0, &kernel), "cudaGraphAddKernelNode");
  return graph;
}

// The graphs of KIND, instantiated (two for "empty": no node at all, and one empty node).
std::vector<cudaGraphExec_t> instantiate(const char* kind, cudaStream_t stream, int* device) {
  std::vector<cudaGraph_t> graphs;
  if (!std::strcmp(kind, "memory")) graphs.push_back(memory_graph());
  if (!std::strcmp(kind, "host")) graphs.push_back(host_graph());
  if (!std::strcmp(kind, "child")) graphs.push_back(child_graph());
  if (!std::strcmp(kind, "captured")) graphs.push_back(captured_graph(stream));
  if (!std::strcmp(kind, "kernel")) graphs.push_back(kernel_graph(device));
  if (!std::strcmp(kind, "empty")) {
    cudaGraph_t none = nullptr, one = nullptr;
    check(cudaGraphCreate(&none, 0), "cudaGraphCreate");
    check(cudaGraphCreate(&one, 0), "cudaGraphCreate");
    cudaGraphNode_t empty = nullptr;
    check(cudaGraphAddEmptyNode(&empty, one, nullptr, 0), "cudaGraphAddEmptyNode");
    graphs = {none, one};
  }
  std::vector<cudaGraphExec_t> execs;
  for (cudaGraph_t graph : graphs) {
    cudaGraphExec_t exec = nullptr;
    check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    check(cudaGraphDestroy(graph), "cudaGraphDestroy");
    execs.push_back(exec);
  }
  return execs;
}

int graphs(const char* kind, int steps) {
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  int* device = nullptr;
  check(cudaMalloc(&device, 64 * sizeof(int)), "cudaMalloc");
  const std::vector<cudaGraphExec_t> execs = instantiate(kind, stream, device);
  for (int s = 0; s < steps; ++s) {
    for (cudaGraphExec_t exec : execs) check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
    step_kernel<<<1, 1, 0, stream>>>(device);
    check(cudaGetLastError(), "step_kernel");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    step();
  }
  for (cudaGraphExec_t exec : execs) check(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
  check(cudaFree(device), "cudaFree");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  std::printf("%s graphs: %d steps, %zu graphs, %d host calls\n", kind, steps, execs.size(), g_host_calls.load());
  return g_failures == 0 ? 0 : 1;
}

// ---- launches racing the step boundary ---------------------------------------------------

int race(int threads, int steps) {
  int* device = nullptr;
  check(cudaMalloc(&device, 256 * sizeof(int)), "cudaMalloc");
  std::atomic<bool> stop{false};
  std::vector<std::thread> launchers;
  for (int t = 0; t < threads; ++t) {
    launchers.emplace_back([&stop, device, t] {
      cudaStream_t stream = nullptr;
      check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
      for (int n = 1; !stop.load(std::memory_order_relaxed); ++n) {
        race_kernel<<<t % 8 + 1, 1, 0, stream>>>(device);
        if (n % 32 == 0) check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
      }
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
      check(cudaStreamDestroy(stream), "cudaStreamDestroy");
    });
  }
  for (int s = 0; s < steps; ++s) {
    sleep_us(1000);
    step();
  }
  stop.store(true);
  for (std::thread& launcher : launchers) launcher.join();
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  check(cudaFree(device), "cudaFree");
  std::printf("race: %d threads, %d steps\n", threads, steps);
  return g_failures == 0 ? 0 : 1;
}

// ---- device queries beside recorded work -------------------------------------------------

int queries(int steps) {
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  check(cudaSetDevice(0), "cudaSetDevice");
  int* device = nullptr;
  check(cudaMalloc(&device, 64 * sizeof(int)), "cudaMalloc");
  int host[64] = {};
  cudaEvent_t event = nullptr;
  for (int s = 0; s < steps; ++s) {
    check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    check(cudaSetDevice(0), "cudaSetDevice");
    int current = -1;
    check(cudaGetDevice(&current), "cudaGetDevice");
    check(cudaEventCreate(&event), "cudaEventCreate");
    check(cudaMemcpy(device, host, sizeof host, cudaMemcpyHostToDevice), "cudaMemcpy");
    step_kernel<<<1, 1>>>(device);
    check(cudaGetLastError(), "cudaGetLastError");
    check(cudaEventRecord(event, nullptr), "cudaEventRecord");
    check(cudaEventSynchronize(event), "cudaEventSynchronize");
    check(cudaEventDestroy(event), "cudaEventDestroy");
    step();
  }
  check(cudaMemcpy(host, device, sizeof host, cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaFree(device), "cudaFree");
  std::printf("queries: %d devices, %d steps, first value %d\n", count, steps, host[0]);
  return g_failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (!std::strcmp(mode, "timed")) return timed(argc > 2 ? std::atol(argv[2]) : 1000);
  if (!std::strcmp(mode, "graphs") && argc > 3) return graphs(argv[2], std::atoi(argv[3]));
  if (!std::strcmp(mode, "race") && argc > 3) return race(std::atoi(argv[2]), std::atoi(argv[3]));
  if (!std::strcmp(mode, "queries")) return queries(argc > 2 ? std::atoi(argv[2]) : 4);
  std::fprintf(stderr, "usage: window_edges timed MS | graphs KIND STEPS | race THREADS STEPS | queries STEPS\n");
  return 2;
}
