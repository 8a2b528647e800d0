#include "hooks/graph_work.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include "collector/api.h"
#include "hooks/cudart.h"

namespace profagent::hooks::graph_work {
namespace {

// More live executable graphs without device work than this: the others are waited for as
// graphs with work (their windows wait for the bound and count their launches as late).
constexpr size_t kSlots = 256;
// Child graphs nested deeper than this are taken to have device work.
constexpr int kMaxDepth = 16;

std::array<std::atomic<uintptr_t>, kSlots> g_without_work{};
std::atomic<uint32_t> g_count{0};

uintptr_t key(cudaGraphExec_t exec) { return reinterpret_cast<uintptr_t>(exec); }

// The graph queries of each runtime major (the agent's own calls, never recorded).
RealSymbol get_nodes_13{"cudaGraphGetNodes", &kCudart13};
RealSymbol node_type_13{"cudaGraphNodeGetType", &kCudart13};
RealSymbol child_graph_13{"cudaGraphChildGraphNodeGetGraph", &kCudart13};
RealSymbol get_nodes_12{"cudaGraphGetNodes", &kCudart12};
RealSymbol node_type_12{"cudaGraphNodeGetType", &kCudart12};
RealSymbol child_graph_12{"cudaGraphChildGraphNodeGetGraph", &kCudart12};
PROFAGENT_REGISTER_REAL_SYMBOL(graph_get_nodes_13, get_nodes_13);
PROFAGENT_REGISTER_REAL_SYMBOL(graph_node_type_13, node_type_13);
PROFAGENT_REGISTER_REAL_SYMBOL(graph_child_graph_13, child_graph_13);
PROFAGENT_REGISTER_REAL_SYMBOL(graph_get_nodes_12, get_nodes_12);
PROFAGENT_REGISTER_REAL_SYMBOL(graph_node_type_12, node_type_12);
PROFAGENT_REGISTER_REAL_SYMBOL(graph_child_graph_12, child_graph_12);

struct Resolved {
  decltype(cudaGraphGetNodes)* get_nodes;
  decltype(cudaGraphNodeGetType)* node_type;
  decltype(cudaGraphChildGraphNodeGetGraph)* child_graph;
};

// A node whose launch CUPTI reports as a kernel, copy or set record. Node types this agent
// does not know (conditional nodes, types added after CUDA 13) may hold such work: yes.
bool may_do_device_work(cudaGraphNodeType type) {
  switch (type) {
    case cudaGraphNodeTypeHost:
    case cudaGraphNodeTypeEmpty:
    case cudaGraphNodeTypeWaitEvent:
    case cudaGraphNodeTypeEventRecord:
    case cudaGraphNodeTypeExtSemaphoreSignal:
    case cudaGraphNodeTypeExtSemaphoreWait:
    case cudaGraphNodeTypeMemAlloc:
    case cudaGraphNodeTypeMemFree:
    case cudaGraphNodeTypeGraph:  // decided by its own nodes
      return false;
    default:
      return true;
  }
}

// Whether any node of `graph` (child graphs included) does device work; any failing query
// counts as yes, so an unknown graph is waited for as before.
bool has_device_work(const Resolved& real, cudaGraph_t graph, int depth) {
  size_t count = 0;
  if (depth > kMaxDepth || real.get_nodes(graph, nullptr, &count) != cudaSuccess) return true;
  std::vector<cudaGraphNode_t> nodes(count);
  if (count != 0 && real.get_nodes(graph, nodes.data(), &count) != cudaSuccess) return true;
  for (size_t i = 0; i < count && i < nodes.size(); ++i) {
    cudaGraphNodeType type{};
    if (real.node_type(nodes[i], &type) != cudaSuccess || may_do_device_work(type)) return true;
    if (type != cudaGraphNodeTypeGraph) continue;
    cudaGraph_t child = nullptr;
    if (real.child_graph(nodes[i], &child) != cudaSuccess || has_device_work(real, child, depth + 1)) return true;
  }
  return false;
}

bool graph_has_device_work(cudaGraph_t graph, int major) noexcept {
  const bool cuda12 = major == 12;
  const Resolved real{
      reinterpret_cast<decltype(cudaGraphGetNodes)*>(resolve(cuda12 ? get_nodes_12 : get_nodes_13)),
      reinterpret_cast<decltype(cudaGraphNodeGetType)*>(resolve(cuda12 ? node_type_12 : node_type_13)),
      reinterpret_cast<decltype(cudaGraphChildGraphNodeGetGraph)*>(resolve(cuda12 ? child_graph_12 : child_graph_13))};
  if (real.get_nodes == nullptr || real.node_type == nullptr || real.child_graph == nullptr) return true;
  collector::AgentBusy busy;  // the agent's own queries, not the program's calls
  try {
    return has_device_work(real, graph, 0);
  } catch (...) {  // no memory for the node list: wait for it as for any graph
    return true;
  }
}

void remember(uintptr_t exec) {
  for (std::atomic<uintptr_t>& slot : g_without_work) {
    uintptr_t empty = 0;
    if (slot.compare_exchange_strong(empty, exec, std::memory_order_relaxed)) {
      g_count.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
}

}  // namespace

void instantiated(cudaError_t result, const cudaGraphExec_t* exec, cudaGraph_t graph, int major) noexcept {
  // Only while device records are traced (never in a process where the agent only forwards).
  if (result != cudaSuccess || exec == nullptr || *exec == nullptr || graph == nullptr) return;
  if (!collector::g_device_tracing.load(std::memory_order_relaxed)) return;
  destroyed(*exec);  // a handle whose destruction no hook saw (an unversioned lookup) is new now
  if (!graph_has_device_work(graph, major)) remember(key(*exec));
}

void destroyed(cudaGraphExec_t exec) noexcept {
  if (exec == nullptr || g_count.load(std::memory_order_relaxed) == 0) return;
  for (std::atomic<uintptr_t>& slot : g_without_work) {
    uintptr_t held = key(exec);
    if (slot.compare_exchange_strong(held, 0, std::memory_order_relaxed)) {
      g_count.fetch_sub(1, std::memory_order_relaxed);
      return;
    }
  }
}

bool without_device_work(cudaGraphExec_t exec) noexcept {
  if (g_count.load(std::memory_order_relaxed) == 0) return false;
  for (const std::atomic<uintptr_t>& slot : g_without_work) {
    if (slot.load(std::memory_order_relaxed) == key(exec)) return true;
  }
  return false;
}

}  // namespace profagent::hooks::graph_work
