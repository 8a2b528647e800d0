// Graphs as DAGs: explicit construction, replay order and overlap of branches (proved with the
// records' modelled times), captured fork/join edges, memory nodes, clones, exec updates,
// disabled nodes, child graphs and event nodes. Kernels named *k_3ms* run exactly 3 ms
// (DEVSIM_KERNEL_NS of the model tests); copies run at 1 GB/s (DEVSIM_BW_HTOD/DTOH_GBPS).
#include <catch2/catch.hpp>

#include <cupti_callbacks.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "graph.h"
#include "model_test_support.h"

using namespace devsim_test;

namespace {
void left_stub() {}
void right_stub() {}
void join_stub() {}
const void* k_left = fake_kernel(reinterpret_cast<const void*>(&left_stub), "_Z10k_3ms_leftv");
const void* k_right = fake_kernel(reinterpret_cast<const void*>(&right_stub), "_Z11k_3ms_rightv");
const void* k_join = fake_kernel(reinterpret_cast<const void*>(&join_stub), "_Z10k_3ms_joinv");
constexpr uint64_t kKernelNs = 3000000;

cudaKernelNodeParams kernel_params(const void* k, unsigned grid = 4) {
  cudaKernelNodeParams p{};
  p.func = const_cast<void*>(k);
  p.gridDim = dim3(grid);
  p.blockDim = dim3(128);
  return p;
}

cudaGraphNode_t add_kernel(cudaGraph_t g, const void* k, std::vector<cudaGraphNode_t> deps) {
  cudaGraphNode_t n = nullptr;
  cudaKernelNodeParams p = kernel_params(k);
  REQUIRE(cudaGraphAddKernelNode(&n, g, deps.data(), deps.size(), &p) == cudaSuccess);
  return n;
}

uint64_t node_id(cudaGraphNode_t n) {
  uint64_t id = 0;
  REQUIRE(devsim::graph_node_id_of(n, &id));
  return id;
}

const devsim::OpRecord& only(const std::vector<devsim::OpRecord>& v) {
  REQUIRE(v.size() == 1);
  return v.front();
}

// Ids the resource notices carried, to check records against what a tool saw.
struct NoticeLog final : devsim::Tracer {
  void on_api_enter(const devsim::ApiCall& c) override { tracer().on_api_enter(c); }
  void on_api_exit(const devsim::ApiCall& c) override { tracer().on_api_exit(c); }
  void on_op_done(const devsim::OpRecord& op) override { tracer().on_op_done(op); }
  void on_sync(const devsim::SyncRecord& s) override { tracer().on_sync(s); }
  void on_graph_event(const devsim::GraphEvent& e) override { events.push_back(e); }
  std::vector<devsim::GraphEvent> events;
};

}  // namespace

TEST_CASE("an explicit graph runs its two branches concurrently, after the root and before the join",
          "[devsim][graph][dag]") {
  constexpr size_t n = 1 << 20;  // 1 MiB at 1 GB/s: about 1 ms per copy
  void *pinned = nullptr, *dev = nullptr;
  REQUIRE(cudaMallocHost(&pinned, n) == cudaSuccess);
  REQUIRE(cudaMalloc(&dev, n) == cudaSuccess);
  std::memset(pinned, 7, n);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);

  cudaGraph_t g;
  REQUIRE(cudaGraphCreate(&g, 0) == cudaSuccess);
  cudaGraphNode_t up;
  REQUIRE(cudaGraphAddMemcpyNode1D(&up, g, nullptr, 0, dev, pinned, n, cudaMemcpyHostToDevice) == cudaSuccess);
  cudaGraphNode_t left = add_kernel(g, k_left, {up});
  cudaGraphNode_t right = add_kernel(g, k_right, {up});
  cudaGraphNode_t join = add_kernel(g, k_join, {left, right});
  size_t roots = 0, edges = 0;
  REQUIRE(cudaGraphGetRootNodes(g, nullptr, &roots) == cudaSuccess);
  REQUIRE(cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &edges) == cudaSuccess);
  CHECK(roots == 1);
  CHECK(edges == 4);

  cudaGraphExec_t exec;
  REQUIRE(cudaGraphInstantiate(&exec, g, 0) == cudaSuccess);
  tracer().clear();
  cudaEvent_t before, after;
  cudaEventCreate(&before), cudaEventCreate(&after);
  cudaEventRecord(before, s);
  REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
  cudaEventRecord(after, s);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);

  auto l = only(tracer().kernels("_Z10k_3ms_leftv"));
  auto r = only(tracer().kernels("_Z11k_3ms_rightv"));
  auto j = only(tracer().kernels("_Z10k_3ms_joinv"));
  devsim::OpRecord copy{};
  for (const auto& op : tracer().ops()) {
    if (op.kind == devsim::OpKind::Memcpy) copy = op;
  }
  REQUIRE(copy.end_ns != 0);
  CHECK(l.start_ns >= copy.end_ns);
  CHECK(r.start_ns >= copy.end_ns);
  CHECK(intervals_overlap(l, r));  // the branches ran at the same time
  CHECK(j.start_ns >= std::max(l.end_ns, r.end_ns));
  float ms = 0;
  REQUIRE(cudaEventElapsedTime(&ms, before, after) == cudaSuccess);
  CHECK(ms * 1e6 >= double(copy.end_ns - copy.start_ns + 2 * kKernelNs) - 1e3);
  CHECK(ms * 1e6 < double(copy.end_ns - copy.start_ns + 3 * kKernelNs));  // less than serial

  // Records carry the graph's id and the exec's own node ids, which are not the graph's.
  uint32_t graph_id = 0;
  REQUIRE(devsim::graph_id_of(g, &graph_id));
  auto* e = devsim::exec_from_handle(exec);
  std::set<uint64_t> exec_ids;
  for (cudaGraphNode_t node : {up, left, right, join}) {
    auto* clone = devsim::exec_node(e, devsim::node_from_handle(node));
    REQUIRE(clone != nullptr);
    CHECK(clone->id != node_id(node));
    exec_ids.insert(clone->id);
  }
  std::set<uint64_t> record_ids;
  for (const auto& op : tracer().ops()) {
    CHECK(op.graph_id == graph_id);
    record_ids.insert(op.graph_node_id);
  }
  CHECK(record_ids == exec_ids);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
  cudaFree(dev), cudaFreeHost(pinned);
}

TEST_CASE("a launch waits for the stream's earlier work and later work waits for every sink",
          "[devsim][graph][dag]") {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaGraph_t g;
  REQUIRE(cudaGraphCreate(&g, 0) == cudaSuccess);
  add_kernel(g, k_left, {});
  add_kernel(g, k_right, {});  // two roots, two sinks
  cudaGraphExec_t exec;
  REQUIRE(cudaGraphInstantiate(&exec, g, 0) == cudaSuccess);
  tracer().clear();
  Gate gate;
  gate.enqueue_on(s);
  REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(cudaLaunchKernel(k_join, 1, 32, nullptr, 0, s) == cudaSuccess);
  CHECK(cudaStreamQuery(s) == cudaErrorNotReady);
  uint64_t opened = devsim::now_ns();
  gate.open();
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  auto l = only(tracer().kernels("_Z10k_3ms_leftv"));
  auto r = only(tracer().kernels("_Z11k_3ms_rightv"));
  auto j = only(tracer().kernels("_Z10k_3ms_joinv"));
  CHECK(l.start_ns >= opened);
  CHECK(r.start_ns >= opened);
  CHECK(intervals_overlap(l, r));
  CHECK(j.start_ns >= std::max(l.end_ns, r.end_ns));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
}

TEST_CASE("capture records fork/join edges and its replay runs the forked branches concurrently",
          "[devsim][graph][dag][capture]") {
  cudaStream_t a, b;
  cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
  cudaEvent_t fork, joined;
  cudaEventCreateWithFlags(&fork, cudaEventDisableTiming);
  cudaEventCreateWithFlags(&joined, cudaEventDisableTiming);
  NoticeLog log;
  devsim::set_tracer(nullptr);
  devsim::set_tracer(&log);

  REQUIRE(cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal) == cudaSuccess);
  cudaEventRecord(fork, a);
  REQUIRE(cudaStreamWaitEvent(b, fork, 0) == cudaSuccess);
  cudaLaunchKernel(k_left, 1, 32, nullptr, 0, a);
  cudaLaunchKernel(k_right, 1, 32, nullptr, 0, b);
  cudaEventRecord(joined, b);
  REQUIRE(cudaStreamWaitEvent(a, joined, 0) == cudaSuccess);
  cudaLaunchKernel(k_join, 1, 32, nullptr, 0, a);
  cudaStreamCaptureStatus status;
  const cudaGraphNode_t* deps = nullptr;
  size_t num_deps = 0;
  REQUIRE(cudaStreamGetCaptureInfo(a, &status, nullptr, nullptr, &deps, nullptr, &num_deps) == cudaSuccess);
  CHECK(num_deps == 1);  // the join kernel
  cudaGraph_t g;
  REQUIRE(cudaStreamEndCapture(a, &g) == cudaSuccess);

  size_t roots = 0, edges = 0, nodes = 0;
  cudaGraphGetNodes(g, nullptr, &nodes);
  cudaGraphGetRootNodes(g, nullptr, &roots);
  cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &edges);
  CHECK(nodes == 3);
  CHECK(roots == 2);
  CHECK(edges == 2);
  std::set<uint64_t> created;
  for (const auto& e : log.events) {
    if (e.cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED && e.graph == g) created.insert(node_id((cudaGraphNode_t)e.node));
  }
  CHECK(created.size() == 3);  // a tool heard of each captured node when its launch was captured

  cudaGraphExec_t exec;
  REQUIRE(cudaGraphInstantiate(&exec, g, 0) == cudaSuccess);
  std::map<uint64_t, uint64_t> clone_of;  // exec node id -> original node id, from the notices
  for (const auto& e : log.events) {
    if (e.cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED && e.exec == exec) {
      clone_of[node_id((cudaGraphNode_t)e.node)] = node_id((cudaGraphNode_t)e.original_node);
    }
  }
  tracer().clear();
  REQUIRE(cudaGraphLaunch(exec, a) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(a) == cudaSuccess);
  devsim::set_tracer(nullptr);
  devsim::set_tracer(&tracer());
  auto l = only(tracer().kernels("_Z10k_3ms_leftv"));
  auto r = only(tracer().kernels("_Z11k_3ms_rightv"));
  auto j = only(tracer().kernels("_Z10k_3ms_joinv"));
  CHECK(intervals_overlap(l, r));
  CHECK(j.start_ns >= std::max(l.end_ns, r.end_ns));
  CHECK(l.stream_id == r.stream_id);  // replayed on the launch stream
  for (const auto& k : {l, r, j}) {
    REQUIRE(clone_of.count(k.graph_node_id) == 1);
    CHECK(created.count(clone_of[k.graph_node_id]) == 1);
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);
  cudaStreamDestroy(a), cudaStreamDestroy(b);
}

TEST_CASE("memory nodes allocate at a fixed address, count as graph memory and free", "[devsim][graph][memory]") {
  constexpr size_t n = 4096;
  void* host = nullptr;
  REQUIRE(cudaMallocHost(&host, n) == cudaSuccess);
  std::memset(host, 0, n);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaGraph_t g;
  REQUIRE(cudaGraphCreate(&g, 0) == cudaSuccess);
  cudaMemAllocNodeParams alloc{};
  alloc.poolProps.allocType = cudaMemAllocationTypePinned;
  alloc.poolProps.location = {cudaMemLocationTypeDevice, 0};
  alloc.bytesize = n;
  cudaGraphNode_t a, set, down, f;
  REQUIRE(cudaGraphAddMemAllocNode(&a, g, nullptr, 0, &alloc) == cudaSuccess);
  REQUIRE(alloc.dptr != nullptr);
  cudaMemsetParams mp{};
  mp.dst = alloc.dptr, mp.value = 0x5a, mp.elementSize = 1, mp.width = n, mp.height = 1;
  REQUIRE(cudaGraphAddMemsetNode(&set, g, &a, 1, &mp) == cudaSuccess);
  REQUIRE(cudaGraphAddMemcpyNode1D(&down, g, &set, 1, host, alloc.dptr, n, cudaMemcpyDeviceToHost) == cudaSuccess);
  REQUIRE(cudaGraphAddMemFreeNode(&f, g, &down, 1, alloc.dptr) == cudaSuccess);
  void* freed = nullptr;
  REQUIRE(cudaGraphMemFreeNodeGetParams(f, &freed) == cudaSuccess);
  CHECK(freed == alloc.dptr);
  uint64_t reserved = 0, used = 0, used_high = 0;
  cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemCurrent, &reserved);
  CHECK(reserved >= n);

  cudaGraphExec_t exec;
  REQUIRE(cudaGraphInstantiate(&exec, g, 0) == cudaSuccess);
  uint64_t zero = 0;
  REQUIRE(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &zero) == cudaSuccess);
  for (int i = 0; i < 3; ++i) REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(static_cast<unsigned char*>(host)[n - 1] == 0x5a);
  cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &used);
  cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &used_high);
  CHECK(used == 0);          // freed by the free node
  CHECK(used_high >= n);     // in use between the alloc and free nodes
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);
  cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemCurrent, &reserved);
  CHECK(reserved == 0);
  cudaStreamDestroy(s);
  cudaFreeHost(host);
}

// Memory an alloc node hands out without a free node belongs to the program after the launch:
// CUDA lets it free the memory with cudaFree, cudaFreeAsync or a free node of another graph,
// and the next launch allocates it again at the same address.
TEST_CASE("graph memory may be freed outside its graph and is allocated again by the next launch",
          "[devsim][graph][memory]") {
  constexpr size_t n = 8192;
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaGraph_t g;
  REQUIRE(cudaGraphCreate(&g, 0) == cudaSuccess);
  cudaMemAllocNodeParams alloc{};
  alloc.poolProps.allocType = cudaMemAllocationTypePinned;
  alloc.poolProps.location = {cudaMemLocationTypeDevice, 0};
  alloc.bytesize = n;
  cudaGraphNode_t a, set;
  REQUIRE(cudaGraphAddMemAllocNode(&a, g, nullptr, 0, &alloc) == cudaSuccess);
  cudaMemsetParams mp{};
  mp.dst = alloc.dptr, mp.value = 0x11, mp.elementSize = 1, mp.width = n, mp.height = 1;
  REQUIRE(cudaGraphAddMemsetNode(&set, g, &a, 1, &mp) == cudaSuccess);
  cudaGraphExec_t exec;
  REQUIRE(cudaGraphInstantiate(&exec, g, 0) == cudaSuccess);
  auto used_now = [] {
    uint64_t used = 0;
    cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &used);
    return used;
  };
  const uint64_t used_before = used_now();

  REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(used_now() == used_before + n);
  REQUIRE(cudaFree(alloc.dptr) == cudaSuccess);
  CHECK(used_now() == used_before);
  CHECK(cudaFree(alloc.dptr) == cudaErrorInvalidValue);  // freed twice
  cudaGetLastError();

  // Launch and free in stream order, without a host wait between them.
  REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(cudaFreeAsync(alloc.dptr, s) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(used_now() == used_before);

  // A free node in another graph.
  cudaGraph_t freer;
  cudaGraphNode_t f;
  REQUIRE(cudaGraphCreate(&freer, 0) == cudaSuccess);
  REQUIRE(cudaGraphAddMemFreeNode(&f, freer, nullptr, 0, alloc.dptr) == cudaSuccess);
  cudaGraphExec_t freer_exec;
  REQUIRE(cudaGraphInstantiate(&freer_exec, freer, 0) == cudaSuccess);
  REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
  CHECK(used_now() >= used_before);
  REQUIRE(cudaGraphLaunch(freer_exec, s) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(used_now() == used_before);

  // A pointer that is no graph memory is still refused by the free node.
  int not_graph_memory = 0;
  cudaGraphNode_t bad;
  CHECK(cudaGraphAddMemFreeNode(&bad, freer, nullptr, 0, &not_graph_memory) == cudaErrorInvalidValue);
  cudaGetLastError();
  cudaGraphExecDestroy(freer_exec);
  cudaGraphDestroy(freer);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);
  uint64_t reserved = 0;
  cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemCurrent, &reserved);
  CHECK(reserved == 0);
  cudaStreamDestroy(s);
}

TEST_CASE("clones get their own ids, and FindInClone maps nodes across", "[devsim][graph][clone]") {
  cudaGraph_t g, clone;
  REQUIRE(cudaGraphCreate(&g, 0) == cudaSuccess);
  cudaGraphNode_t k = add_kernel(g, k_left, {});
  cudaGraphNode_t e;
  REQUIRE(cudaGraphAddEmptyNode(&e, g, &k, 1) == cudaSuccess);
  REQUIRE(cudaGraphClone(&clone, g) == cudaSuccess);
  cudaGraphNode_t kc = nullptr;
  REQUIRE(cudaGraphNodeFindInClone(&kc, k, clone) == cudaSuccess);
  CHECK(kc != k);
  CHECK(node_id(kc) != node_id(k));
  cudaGraphNodeType type;
  REQUIRE(cudaGraphNodeGetType(kc, &type) == cudaSuccess);
  CHECK(type == cudaGraphNodeTypeKernel);
  size_t deps = 0;
  cudaGraphNode_t ec;
  REQUIRE(cudaGraphNodeFindInClone(&ec, e, clone) == cudaSuccess);
  cudaGraphNode_t dep;
  deps = 1;
  REQUIRE(cudaGraphNodeGetDependencies(ec, &dep, nullptr, &deps) == cudaSuccess);
  CHECK(deps == 1);
  CHECK(dep == kc);
  uint32_t gid = 0, cid = 0;
  REQUIRE(devsim::graph_id_of(g, &gid));
  REQUIRE(devsim::graph_id_of(clone, &cid));
  CHECK(gid != cid);

  cudaGraphExec_t exec;
  REQUIRE(cudaGraphInstantiate(&exec, clone, 0) == cudaSuccess);
  tracer().clear();
  REQUIRE(cudaGraphLaunch(exec, 0) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(only(tracer().kernels("_Z10k_3ms_leftv")).graph_id == cid);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(clone);
  cudaGraphDestroy(g);
}

TEST_CASE("exec update takes new parameters and refuses a changed topology", "[devsim][graph][update]") {
  cudaGraph_t g, same, bigger;
  cudaGraphCreate(&g, 0), cudaGraphCreate(&same, 0), cudaGraphCreate(&bigger, 0);
  add_kernel(g, k_left, {});
  cudaGraphNode_t n2;
  cudaKernelNodeParams wide = kernel_params(k_left, 64);
  REQUIRE(cudaGraphAddKernelNode(&n2, same, nullptr, 0, &wide) == cudaSuccess);
  cudaGraphNode_t b1 = add_kernel(bigger, k_left, {});
  add_kernel(bigger, k_right, {b1});

  cudaGraphExec_t exec;
  REQUIRE(cudaGraphInstantiate(&exec, g, 0) == cudaSuccess);
  cudaGraphExecUpdateResultInfo info{};
  REQUIRE(cudaGraphExecUpdate(exec, same, &info) == cudaSuccess);
  CHECK(info.result == cudaGraphExecUpdateSuccess);
  CHECK(cudaGraphExecUpdate(exec, bigger, &info) == cudaErrorGraphExecUpdateFailure);
  CHECK(info.result == cudaGraphExecUpdateErrorTopologyChanged);
  cudaGetLastError();

  tracer().clear();
  REQUIRE(cudaGraphLaunch(exec, 0) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  auto k = only(tracer().kernels("_Z10k_3ms_leftv"));
  CHECK(k.grid[0] == 64);  // the updated parameters
  cudaKernelNodeParams bad = kernel_params(k_left);
  bad.blockDim = dim3(4096);  // validated like a launch
  cudaGraphNode_t unused;
  CHECK(cudaGraphAddKernelNode(&unused, g, nullptr, 0, &bad) == cudaErrorInvalidConfiguration);
  cudaGetLastError();
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g), cudaGraphDestroy(same), cudaGraphDestroy(bigger);
}

TEST_CASE("a disabled node does no work until it is enabled again", "[devsim][graph][enabled]") {
  constexpr size_t n = 256;
  void* dev = nullptr;
  REQUIRE(cudaMalloc(&dev, n) == cudaSuccess);
  REQUIRE(cudaMemset(dev, 1, n) == cudaSuccess);
  cudaGraph_t g;
  cudaGraphCreate(&g, 0);
  cudaMemsetParams mp{};
  mp.dst = dev, mp.value = 9, mp.elementSize = 1, mp.width = n, mp.height = 1;
  cudaGraphNode_t set;
  REQUIRE(cudaGraphAddMemsetNode(&set, g, nullptr, 0, &mp) == cudaSuccess);
  cudaGraphExec_t exec;
  REQUIRE(cudaGraphInstantiate(&exec, g, 0) == cudaSuccess);
  REQUIRE(cudaGraphNodeSetEnabled(exec, set, 0) == cudaSuccess);
  unsigned enabled = 1;
  REQUIRE(cudaGraphNodeGetEnabled(exec, set, &enabled) == cudaSuccess);
  CHECK(enabled == 0);
  tracer().clear();
  REQUIRE(cudaGraphLaunch(exec, 0) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  unsigned char byte = 0;
  cudaMemcpy(&byte, dev, 1, cudaMemcpyDeviceToHost);
  CHECK(byte == 1);
  int memsets = 0;
  for (const auto& op : tracer().ops()) memsets += op.kind == devsim::OpKind::Memset;
  CHECK(memsets == 0);
  REQUIRE(cudaGraphNodeSetEnabled(exec, set, 1) == cudaSuccess);
  REQUIRE(cudaGraphLaunch(exec, 0) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  cudaMemcpy(&byte, dev, 1, cudaMemcpyDeviceToHost);
  CHECK(byte == 9);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);
  cudaFree(dev);
}

namespace {
void count_host(void* user) { ++*static_cast<int*>(user); }
}  // namespace

TEST_CASE("child graphs expand in place, host and event nodes act on the host and real events",
          "[devsim][graph][child]") {
  int calls = 0;
  cudaGraph_t child, parent;
  cudaGraphCreate(&child, 0), cudaGraphCreate(&parent, 0);
  cudaGraphNode_t ck = add_kernel(child, k_left, {});
  cudaHostNodeParams hp{count_host, &calls};
  cudaGraphNode_t h;
  REQUIRE(cudaGraphAddHostNode(&h, child, &ck, 1, &hp) == cudaSuccess);
  cudaEvent_t start, stop;
  cudaEventCreate(&start), cudaEventCreate(&stop);
  cudaGraphNode_t rec_start, sub, rec_stop;
  REQUIRE(cudaGraphAddEventRecordNode(&rec_start, parent, nullptr, 0, start) == cudaSuccess);
  REQUIRE(cudaGraphAddChildGraphNode(&sub, parent, &rec_start, 1, child) == cudaSuccess);
  REQUIRE(cudaGraphAddEventRecordNode(&rec_stop, parent, &sub, 1, stop) == cudaSuccess);
  cudaGraph_t inner = nullptr;
  REQUIRE(cudaGraphChildGraphNodeGetGraph(sub, &inner) == cudaSuccess);
  size_t inner_nodes = 0;
  REQUIRE(cudaGraphGetNodes(inner, nullptr, &inner_nodes) == cudaSuccess);
  CHECK(inner_nodes == 2);

  cudaGraphExec_t exec;
  REQUIRE(cudaGraphInstantiate(&exec, parent, 0) == cudaSuccess);
  for (int i = 0; i < 2; ++i) REQUIRE(cudaGraphLaunch(exec, 0) == cudaSuccess);
  REQUIRE(cudaEventSynchronize(stop) == cudaSuccess);
  CHECK(calls == 2);
  float ms = 0;
  REQUIRE(cudaEventElapsedTime(&ms, start, stop) == cudaSuccess);
  CHECK(ms >= 3.0f);  // the child's 3 ms kernel ran between the two event nodes

  const char* path = "devsim_graph_test.dot";
  REQUIRE(cudaGraphDebugDotPrint(parent, path, 0) == cudaSuccess);
  std::ifstream dot(path);
  std::stringstream text;
  text << dot.rdbuf();
  CHECK(text.str().rfind("digraph", 0) == 0);
  CHECK(text.str().find("_Z10k_3ms_leftv") != std::string::npos);
  CHECK(text.str().find("->") != std::string::npos);
  std::remove(path);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(parent), cudaGraphDestroy(child);
}

TEST_CASE("capture into an existing graph continues after the given nodes, dependencies can be replaced",
          "[devsim][graph][capture]") {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaGraph_t g;
  cudaGraphCreate(&g, 0);
  cudaGraphNode_t first = add_kernel(g, k_left, {});
  cudaGraphNode_t other = add_kernel(g, k_right, {});
  REQUIRE(cudaStreamBeginCaptureToGraph(s, g, &first, nullptr, 1, cudaStreamCaptureModeGlobal) == cudaSuccess);
  REQUIRE(cudaLaunchKernel(k_join, 1, 32, nullptr, 0, s) == cudaSuccess);  // after `first`
  REQUIRE(cudaStreamUpdateCaptureDependencies(s, &other, nullptr, 1, cudaStreamSetCaptureDependencies) ==
          cudaSuccess);
  REQUIRE(cudaLaunchKernel(k_join, 1, 32, nullptr, 0, s) == cudaSuccess);  // after `other` only
  cudaGraph_t out = nullptr;
  REQUIRE(cudaStreamEndCapture(s, &out) == cudaSuccess);
  CHECK(out == g);
  size_t count = 0;
  REQUIRE(cudaGraphNodeGetDependentNodes(first, nullptr, nullptr, &count) == cudaSuccess);
  CHECK(count == 1);
  cudaGraphNode_t after_other = nullptr;
  count = 1;
  REQUIRE(cudaGraphNodeGetDependentNodes(other, &after_other, nullptr, &count) == cudaSuccess);
  REQUIRE(count == 1);
  size_t deps = 0;
  REQUIRE(cudaGraphNodeGetDependencies(after_other, nullptr, nullptr, &deps) == cudaSuccess);
  CHECK(deps == 1);  // the set replaced the first captured kernel as its dependency
  size_t nodes = 0;
  cudaGraphGetNodes(g, nullptr, &nodes);
  CHECK(nodes == 4);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
}

TEST_CASE("a capture whose forked stream never joins back fails to end, and both streams leave it",
          "[devsim][graph][capture]") {
  cudaStream_t a, b;
  cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
  cudaEvent_t fork;
  cudaEventCreateWithFlags(&fork, cudaEventDisableTiming);
  REQUIRE(cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal) == cudaSuccess);
  cudaEventRecord(fork, a);
  REQUIRE(cudaStreamWaitEvent(b, fork, 0) == cudaSuccess);
  cudaLaunchKernel(k_left, 1, 32, nullptr, 0, a);
  cudaLaunchKernel(k_right, 1, 32, nullptr, 0, b);  // b's work is never waited for by a
  cudaGraph_t g = nullptr;
  CHECK(cudaStreamEndCapture(a, &g) == cudaErrorStreamCaptureUnjoined);
  cudaGetLastError();
  cudaStreamCaptureStatus status;
  REQUIRE(cudaStreamIsCapturing(b, &status) == cudaSuccess);
  CHECK(status == cudaStreamCaptureStatusNone);
  cudaStreamDestroy(a), cudaStreamDestroy(b);
}

TEST_CASE("a graph launched inside a capture becomes a child-graph node", "[devsim][graph][capture]") {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaGraph_t inner;
  cudaGraphCreate(&inner, 0);
  add_kernel(inner, k_left, {});
  cudaGraphExec_t inner_exec;
  REQUIRE(cudaGraphInstantiate(&inner_exec, inner, 0) == cudaSuccess);
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  REQUIRE(cudaGraphLaunch(inner_exec, s) == cudaSuccess);
  REQUIRE(cudaLaunchKernel(k_join, 1, 32, nullptr, 0, s) == cudaSuccess);
  cudaGraph_t outer;
  REQUIRE(cudaStreamEndCapture(s, &outer) == cudaSuccess);
  cudaGraphNode_t roots[2];
  size_t count = 2;
  REQUIRE(cudaGraphGetRootNodes(outer, roots, &count) == cudaSuccess);
  REQUIRE(count == 1);
  cudaGraphNodeType type;
  REQUIRE(cudaGraphNodeGetType(roots[0], &type) == cudaSuccess);
  CHECK(type == cudaGraphNodeTypeGraph);
  cudaGraphExec_t outer_exec;
  REQUIRE(cudaGraphInstantiate(&outer_exec, outer, 0) == cudaSuccess);
  tracer().clear();
  REQUIRE(cudaGraphLaunch(outer_exec, s) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  auto l = only(tracer().kernels("_Z10k_3ms_leftv"));
  auto j = only(tracer().kernels("_Z10k_3ms_joinv"));
  CHECK(j.start_ns >= l.end_ns);  // the captured kernel followed the child graph
  cudaGraphExecDestroy(outer_exec), cudaGraphExecDestroy(inner_exec);
  cudaGraphDestroy(outer), cudaGraphDestroy(inner);
  cudaStreamDestroy(s);
}
