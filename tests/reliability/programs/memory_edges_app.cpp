// memory_edges_app: allocation sequences at the edges of the allocation ledger, for
// tests/reliability/cases_memory_ledger.py. Each mode prints "result <what> <value>" lines the
// cases check, and "done".
//
//   memory_edges_app reuse BYTES      in range "reuse", one address taken in turn by the runtime
//                                     and by a library at the driver level (simblas: cuMemAlloc/
//                                     cuMemFree, which no hook sees): a driver allocation of
//                                     4 BYTES freed by the driver, then cudaMalloc/cudaFree of
//                                     3 BYTES; then cudaMalloc of 2 BYTES freed by the driver
//                                     (cuMemFree), and a driver allocation of BYTES freed by
//                                     cudaFree. One allocation live at a time (the trace's Addr
//                                     args show which got the same address back).
//   memory_edges_app graph BYTES      a graph with an allocation node of BYTES and a memset node
//                                     on it, launched once; the memory is freed outside the graph
//                                     (cudaFree), as CUDA allows. Then a graph that allocates and
//                                     frees inside itself, launched twice.
//   memory_edges_app zero N           N times cudaMalloc(&p, 0) (success, p null) and cudaFree(p),
//                                     and cudaMallocHost(&h, 0): no memory at all.
//   memory_edges_app register BYTES   cudaHostRegister of a BYTES host buffer, the same again
//                                     (cudaErrorHostMemoryAlreadyRegistered), cudaHostUnregister.
#include <cuda_runtime_api.h>

#include "simblas.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" {
__attribute__((weak)) void profagent_range_push(const char* name);
__attribute__((weak)) void profagent_range_pop(void);
}

namespace {

void range(const char* name) {
  if (profagent_range_push) profagent_range_push(name);
}
void range_end() {
  if (profagent_range_pop) profagent_range_pop();
}
void said(const char* what, long value) { std::printf("result %s %ld\n", what, value); }

void* driver_alloc(size_t bytes) {
  void* p = nullptr;
  return simblasWorkspaceCreate(bytes, &p) == SIMBLAS_STATUS_SUCCESS ? p : nullptr;
}
bool driver_free(void* p) { return simblasWorkspaceDestroy(p) == SIMBLAS_STATUS_SUCCESS; }

// Each allocation is smaller than the one freed before it, so the allocator (devsim's is the
// C library's) hands the same address out again; a first large allocation, freed, moves later
// ones of this size off mmap, whose addresses are never reused at once.
int reuse(size_t bytes) {
  void* warm = nullptr;
  if (cudaMalloc(&warm, 8 * bytes) != cudaSuccess) return 2;  // also creates the runtime's context
  cudaFree(warm);
  range("reuse");
  void* d = driver_alloc(4 * bytes);
  if (d == nullptr || !driver_free(d)) return 2;
  void* p = nullptr;
  if (cudaMalloc(&p, 3 * bytes) != cudaSuccess) return 2;
  cudaFree(p);
  void* q = nullptr;
  if (cudaMalloc(&q, 2 * bytes) != cudaSuccess) return 2;
  if (!driver_free(q)) return 2;  // the driver frees the runtime's allocation
  void* e = driver_alloc(bytes);
  if (e == nullptr) return 2;
  if (cudaFree(e) != cudaSuccess) return 2;  // the runtime frees the driver's
  range_end();
  cudaDeviceSynchronize();
  std::printf("done\n");  // the addresses are not printed: the agent's own allocations may move them
  return 0;
}

cudaMemAllocNodeParams alloc_params(size_t bytes) {
  cudaMemAllocNodeParams params{};
  params.poolProps.allocType = cudaMemAllocationTypePinned;
  params.poolProps.location.type = cudaMemLocationTypeDevice;
  params.poolProps.location.id = 0;
  params.bytesize = bytes;
  return params;
}

cudaMemsetParams memset_params(void* dst, size_t bytes) {
  cudaMemsetParams set{};
  set.dst = dst;
  set.value = 0;
  set.elementSize = 1;
  set.width = bytes;
  set.height = 1;
  return set;
}

// alloc -> memset [-> free]: the memory is used by device work, as a graph would.
cudaGraphExec_t graph_of(size_t bytes, bool free_inside, void** memory) {
  cudaGraph_t graph = nullptr;
  cudaGraphNode_t alloc = nullptr, set = nullptr, release = nullptr;
  cudaMemAllocNodeParams params = alloc_params(bytes);
  if (cudaGraphCreate(&graph, 0) != cudaSuccess || cudaGraphAddMemAllocNode(&alloc, graph, nullptr, 0, &params) != cudaSuccess) {
    return nullptr;
  }
  cudaMemsetParams set_params = memset_params(params.dptr, bytes);
  if (cudaGraphAddMemsetNode(&set, graph, &alloc, 1, &set_params) != cudaSuccess) return nullptr;
  if (free_inside && cudaGraphAddMemFreeNode(&release, graph, &set, 1, params.dptr) != cudaSuccess) return nullptr;
  cudaGraphExec_t exec = nullptr;
  if (cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) return nullptr;
  cudaGraphDestroy(graph);
  *memory = params.dptr;
  return exec;
}

int graph(size_t bytes) {
  cudaStream_t stream = nullptr;
  if (cudaStreamCreate(&stream) != cudaSuccess) return 2;
  void* kept = nullptr;
  void* inside = nullptr;
  cudaGraphExec_t allocates = graph_of(bytes, false, &kept);
  cudaGraphExec_t balanced = graph_of(bytes / 2, true, &inside);
  if (allocates == nullptr || balanced == nullptr) return 2;
  range("graphs");
  if (cudaGraphLaunch(allocates, stream) != cudaSuccess || cudaStreamSynchronize(stream) != cudaSuccess) return 2;
  said("free_outside", long(cudaFree(kept)));
  for (int i = 0; i < 2; ++i) {
    if (cudaGraphLaunch(balanced, stream) != cudaSuccess) return 2;
  }
  cudaStreamSynchronize(stream);
  range_end();
  cudaGraphExecDestroy(allocates);
  cudaGraphExecDestroy(balanced);
  std::printf("done\n");
  return 0;
}

int zero(long count) {
  range("zero");
  long null_pointers = 0;
  for (long i = 0; i < count; ++i) {
    void* p = reinterpret_cast<void*>(uintptr_t(1));
    if (cudaMalloc(&p, 0) != cudaSuccess) return 2;
    null_pointers += p == nullptr;
    cudaFree(p);
  }
  void* h = reinterpret_cast<void*>(uintptr_t(1));
  if (cudaMallocHost(&h, 0) != cudaSuccess) return 2;
  null_pointers += h == nullptr;
  void* real = nullptr;
  if (cudaMalloc(&real, 512) != cudaSuccess) return 2;  // one real allocation, freed
  cudaFree(real);
  range_end();
  said("null_pointers", null_pointers);
  std::printf("done\n");
  return 0;
}

int register_twice(size_t bytes) {
  void* buffer = std::malloc(bytes);
  if (buffer == nullptr) return 2;
  range("pin");
  said("register", long(cudaHostRegister(buffer, bytes, cudaHostRegisterDefault)));
  said("register_again", long(cudaHostRegister(buffer, bytes, cudaHostRegisterDefault)));
  cudaGetLastError();  // not sticky: cleared as a program would
  said("unregister", long(cudaHostUnregister(buffer)));
  range_end();
  std::free(buffer);
  std::printf("done\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 64;
  if (std::strcmp(argv[1], "reuse") == 0) return reuse(std::strtoull(argv[2], nullptr, 10));
  if (std::strcmp(argv[1], "graph") == 0) return graph(std::strtoull(argv[2], nullptr, 10));
  if (std::strcmp(argv[1], "zero") == 0) return zero(std::atol(argv[2]));
  if (std::strcmp(argv[1], "register") == 0) return register_twice(std::strtoull(argv[2], nullptr, 10));
  return 64;
}
