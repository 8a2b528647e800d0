// Which CUDA graphs do device work that CUPTI reports. A graph launch is waited for by its
// window's join until its first device record comes (docs/windows.md); a graph whose nodes are
// only memory allocations and frees, host functions, events, empty nodes or child graphs of
// those yields no kernel, copy or set record (CUPTI has no activity record for a host node,
// and reports graph memory nodes as allocations, not as device work), so its launch must not
// be waited for. The instantiation hooks look at the graph once (its nodes' types, child graphs
// included) and remember the executable graphs without device work; the launch hooks tag their
// launches kFlagGraphWithoutWork. Few graphs have no work: they fit a small fixed table, read
// with one relaxed load on the launch path while it is empty.
#pragma once

#include <cuda_runtime_api.h>

namespace profagent::hooks::graph_work {

// After cudaGraphInstantiate* (runtime `major`, 12 or 13) returned `result`.
void instantiated(cudaError_t result, const cudaGraphExec_t* exec, cudaGraph_t graph, int major) noexcept;
// After cudaGraphExecDestroy: the handle may be reused by another graph.
void destroyed(cudaGraphExec_t exec) noexcept;
// The executable graph was found to have no kernel, copy or set node.
bool without_device_work(cudaGraphExec_t exec) noexcept;

}  // namespace profagent::hooks::graph_work
