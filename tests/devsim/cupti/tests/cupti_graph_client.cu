// A CUPTI client of the kind of NVIDIA's cuda_graphs_trace sample, run on the simulated device:
// it hears every graph node being created (resource callback GRAPHNODE_CREATED, inside the API
// call that created it) and cloned at instantiation (GRAPHNODE_CLONED), and must be able to map
// each kernel, copy and set record of a graph launch back to the node and the creating call.
//
// Graphs: one built node by node (a set, two parallel kernels, a copy), one captured on two
// streams with an event fork/join, and a clone of the first; each instantiated and launched
// twice, the first exec once more after cudaGraphExecUpdate. Checks: records carry their
// cudaGraphLaunch's correlation id, the graph id cuptiGetGraphId gives the instantiated graph,
// an exec node id that a GRAPHNODE_CLONED callback mapped to a node the program created, with
// the creating call's name; ids stay stable across launches and the update; branches overlap.
//
// Prints one "PASS <what>" or "FAIL <what>" line per check and "cupti_graph_client: PASSED".
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

__global__ void left_kernel(float* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= 2.0f;
}

__global__ void right_kernel(float* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}

namespace {

int g_failures = 0;
std::mutex g_mutex;
constexpr int kElements = 1 << 20;

void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
  if (!ok) ++g_failures;
}

#define CUDA_OK(call) check((call) == cudaSuccess, #call)

struct Created {
  std::string function;  // the API call that created the node
  CUgraphNodeType type;
};

struct Seen {
  std::map<uint64_t, Created> created;         // node id -> creation
  std::map<uint64_t, uint64_t> original_of;    // cloned node id -> the node it was cloned from
  std::set<uint32_t> exec_ids;                 // from GRAPHEXEC_CREATED
  std::set<uint32_t> graph_launches;           // cudaGraphLaunch correlation ids
  std::vector<CUpti_ActivityKernel10> kernels;
  std::vector<CUpti_ActivityMemcpy6> memcpys;
  std::vector<CUpti_ActivityMemset4> memsets;
} g_seen;

thread_local const char* t_current_call = nullptr;  // the runtime call this thread is inside

uint64_t node_id(CUgraphNode node) {
  uint64_t id = 0;
  check(cuptiGetGraphNodeId(node, &id) == CUPTI_SUCCESS, "cuptiGetGraphNodeId");
  return id;
}

void on_resource(CUpti_CallbackId cbid, const CUpti_ResourceData* data) {
  const auto* graph = static_cast<const CUpti_GraphData*>(data->resourceDescriptor);
  std::lock_guard<std::mutex> lock(g_mutex);
  if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) {
    g_seen.created[node_id(graph->node)] = Created{t_current_call ? t_current_call : "?", graph->nodeType};
  } else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) {  // by cudaGraphClone or instantiation
    g_seen.original_of[node_id(graph->node)] = node_id(graph->originalNode);
  } else if (cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED) {
    uint32_t id = 0;
    check(cuptiGetGraphExecId(graph->graphExec, &id) == CUPTI_SUCCESS, "cuptiGetGraphExecId in the callback");
    g_seen.exec_ids.insert(id);
  }
}

void CUPTIAPI callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) return on_resource(cbid, static_cast<const CUpti_ResourceData*>(data));
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  t_current_call = info->callbackSite == CUPTI_API_ENTER ? info->functionName : nullptr;
  if (info->callbackSite == CUPTI_API_EXIT && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_seen.graph_launches.insert(info->correlationId);
  }
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, 1 << 20));
  *size = 1 << 20;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::lock_guard<std::mutex> lock(g_mutex);
  CUpti_Activity* r = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
    if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      g_seen.kernels.push_back(*reinterpret_cast<CUpti_ActivityKernel10*>(r));
    } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      g_seen.memcpys.push_back(*reinterpret_cast<CUpti_ActivityMemcpy6*>(r));
    } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      g_seen.memsets.push_back(*reinterpret_cast<CUpti_ActivityMemset4*>(r));
    }
  }
  std::free(buffer);
}

cudaGraphNode_t kernel_node(cudaGraph_t g, std::vector<cudaGraphNode_t> deps, void* func, float* data,
                            unsigned grid) {
  int n = kElements;
  void* args[] = {&data, &n};
  cudaKernelNodeParams p{};
  p.func = func;
  p.gridDim = dim3(grid);
  p.blockDim = dim3(256);
  p.kernelParams = args;
  cudaGraphNode_t node = nullptr;
  CUDA_OK(cudaGraphAddKernelNode(&node, g, deps.data(), deps.size(), &p));
  return node;
}

// set ─┬─ left ─┬─ copy to host
//      └─ right ┘
cudaGraph_t explicit_graph(float* dev, float* host, unsigned grid) {
  cudaGraph_t g;
  CUDA_OK(cudaGraphCreate(&g, 0));
  cudaMemsetParams set{};
  set.dst = dev, set.value = 0, set.elementSize = 4, set.width = kElements, set.height = 1;
  cudaGraphNode_t set_node, copy;
  CUDA_OK(cudaGraphAddMemsetNode(&set_node, g, nullptr, 0, &set));
  cudaGraphNode_t ends[] = {kernel_node(g, {set_node}, (void*)left_kernel, dev, grid),
                            kernel_node(g, {set_node}, (void*)right_kernel, dev, grid)};
  CUDA_OK(cudaGraphAddMemcpyNode1D(&copy, g, ends, 2, host, dev, 4096, cudaMemcpyDeviceToHost));
  return g;
}

cudaGraph_t captured_graph(float* dev, cudaStream_t a, cudaStream_t b) {
  cudaEvent_t fork, join;
  CUDA_OK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CUDA_OK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  CUDA_OK(cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal));
  CUDA_OK(cudaEventRecord(fork, a));
  CUDA_OK(cudaStreamWaitEvent(b, fork, 0));
  left_kernel<<<kElements / 256, 256, 0, a>>>(dev, kElements);
  right_kernel<<<kElements / 256, 256, 0, b>>>(dev, kElements);
  CUDA_OK(cudaEventRecord(join, b));
  CUDA_OK(cudaStreamWaitEvent(a, join, 0));
  CUDA_OK(cudaMemsetAsync(dev, 0, 4096, a));
  cudaGraph_t g;
  CUDA_OK(cudaStreamEndCapture(a, &g));
  return g;
}

struct Launched {
  uint32_t graph_id;
  std::set<uint64_t> node_ids;  // from the records of its launches
};

// The created node a record's node descends from, through clones (instantiation, cudaGraphClone).
const Created* creation_of(uint64_t node) {
  for (int hops = 0; hops < 8; ++hops) {
    auto created = g_seen.created.find(node);
    if (created != g_seen.created.end()) return &created->second;
    auto up = g_seen.original_of.find(node);
    if (up == g_seen.original_of.end()) return nullptr;
    node = up->second;
  }
  return nullptr;
}

// Every graph record: its launch's correlation id, and a node the tool traces back to its
// creation, of the record's kind, by one of the calls that make such nodes.
template <typename Record>
void check_record(const Record& r, CUgraphNodeType type, std::set<std::string> creators,
                  std::map<uint32_t, int>& per_graph, int& traced) {
  ++per_graph[r.graphId];
  const Created* c = creation_of(r.graphNodeId);
  traced += g_seen.graph_launches.count(r.correlationId) && g_seen.created.count(r.graphNodeId) == 0 && c &&
            c->type == type && creators.count(c->function);
}

int run() {
  CUpti_SubscriberHandle subscriber = nullptr;
  check(cuptiSubscribe(&subscriber, callback, nullptr) == CUPTI_SUCCESS, "cuptiSubscribe");
  cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  for (CUpti_CallbackId id : {CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED,
                              CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED}) {
    check(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, id) == CUPTI_SUCCESS, "resource callback");
  }
  cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  for (auto kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET}) {
    check(cuptiActivityEnable(kind) == CUPTI_SUCCESS, "cuptiActivityEnable");
  }
  float *dev = nullptr, *host = nullptr;
  CUDA_OK(cudaMalloc(&dev, kElements * sizeof(float)));
  CUDA_OK(cudaMallocHost(&host, kElements * sizeof(float)));
  cudaStream_t a, b;
  CUDA_OK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CUDA_OK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));

  cudaGraph_t graphs[3] = {explicit_graph(dev, host, kElements / 256), captured_graph(dev, a, b), nullptr};
  CUDA_OK(cudaGraphClone(&graphs[2], graphs[0]));
  cudaGraphExec_t execs[3];
  std::set<uint32_t> graph_ids;
  for (int i = 0; i < 3; ++i) {
    CUDA_OK(cudaGraphInstantiate(&execs[i], graphs[i], 0));
    uint32_t id = 0;
    check(cuptiGetGraphId(graphs[i], &id) == CUPTI_SUCCESS, "cuptiGetGraphId");
    graph_ids.insert(id);
    for (int launch = 0; launch < 2; ++launch) CUDA_OK(cudaGraphLaunch(execs[i], a));
  }
  cudaGraph_t wider = explicit_graph(dev, host, kElements / 128);
  cudaGraphExecUpdateResultInfo info{};
  CUDA_OK(cudaGraphExecUpdate(execs[0], wider, &info));
  CUDA_OK(cudaGraphLaunch(execs[0], a));
  CUDA_OK(cudaStreamSynchronize(a));
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);

  std::lock_guard<std::mutex> lock(g_mutex);
  check(g_seen.kernels.size() == 14, "kernel records: " + std::to_string(g_seen.kernels.size()) + " for 7 launches");
  check(g_seen.memcpys.size() == 5 && g_seen.memsets.size() == 7, "copy and set records of every launch");
  check(g_seen.exec_ids.size() == 3, "three executable graphs announced with distinct ids");
  std::map<uint32_t, int> per_graph;
  int traced = 0;
  for (const auto& k : g_seen.kernels) {
    check_record(k, CU_GRAPH_NODE_TYPE_KERNEL, {"cudaGraphAddKernelNode", "cudaLaunchKernel", "__cudaLaunchKernel"},
                 per_graph, traced);
  }
  for (const auto& m : g_seen.memcpys) {
    check_record(m, CU_GRAPH_NODE_TYPE_MEMCPY, {"cudaGraphAddMemcpyNode1D"}, per_graph, traced);
  }
  for (const auto& m : g_seen.memsets) {
    check_record(m, CU_GRAPH_NODE_TYPE_MEMSET, {"cudaGraphAddMemsetNode", "cudaMemsetAsync"}, per_graph, traced);
  }
  check(traced == 26, "every record is an exec node that GRAPHNODE_CLONED maps to a created node of its kind (" +
                          std::to_string(traced) + " of 26)");
  std::set<uint32_t> recorded_ids;
  for (const auto& [id, count] : per_graph) recorded_ids.insert(id);
  check(recorded_ids == graph_ids, "records carry the ids cuptiGetGraphId gives the three graphs");
  int explicit_added = 0, captured = 0;
  for (const auto& [id, c] : g_seen.created) {
    explicit_added += c.function.rfind("cudaGraphAdd", 0) == 0;
    captured += c.function == "cudaLaunchKernel" || c.function.rfind("__cudaLaunch", 0) == 0 ||
                c.function == "cudaMemsetAsync";
  }
  check(explicit_added == 8, "explicit nodes announced inside their cudaGraphAdd*Node call");
  check(captured == 3, "captured nodes announced inside the captured call");

  // The first exec's kernels: the same two node ids in all three launches, the last one wider.
  uint32_t first_id = 0;
  cuptiGetGraphId(graphs[0], &first_id);
  std::map<uint64_t, std::vector<CUpti_ActivityKernel10>> by_node;
  for (const auto& k : g_seen.kernels) {
    if (k.graphId == first_id) by_node[k.graphNodeId].push_back(k);
  }
  bool stable = by_node.size() == 2;
  for (const auto& [id, ks] : by_node) stable = stable && ks.size() == 3 && ks.back().gridX == kElements / 128;
  check(stable, "exec node ids stay the same across launches and cudaGraphExecUpdate (new grid taken)");
  if (by_node.size() == 2) {
    const auto& l = by_node.begin()->second.front();
    const auto& r = by_node.rbegin()->second.front();
    check(l.start < r.end && r.start < l.end && l.streamId == r.streamId,
          "the two branches overlap on the launch stream");
  }
  cuptiUnsubscribe(subscriber);
  return 0;
}

}  // namespace

int main() {
  run();
  std::printf("cupti_graph_client: %s\n", g_failures == 0 ? "PASSED" : "FAILED");
  return g_failures == 0 ? 0 : 1;
}
