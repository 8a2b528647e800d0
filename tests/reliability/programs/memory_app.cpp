// memory_app: allocation sequences known by construction, for tests/reliability/cases_memory.py.
//
//   memory_app sequence OOM_BYTES   four steps (profagent_step() ends each):
//     step 0: cudaMalloc 1 MiB ("early") and cudaMallocHost 64 KiB ("pinned"): made before
//             the first window of a schedule that skips step 0;
//     step 1: in range "layer1": cudaMalloc 4096 (a), cudaMalloc 10000 (b),
//             cudaMallocAsync 3000 on a stream (c), cudaFree(a), cudaFreeAsync(c),
//             cudaFree(early) — freed in another order than made;
//     step 2: in range "layer2": cudaMallocHost 8192 (h), cudaFree(b), cudaFreeHost(h),
//             cudaMalloc 777 (never freed: a leak), cudaFree(nullptr), cudaFree(b) again (an
//             already freed pointer), cudaMalloc OOM_BYTES (more than the device has: fails);
//     step 3: nothing. "pinned" is never freed either.
//   memory_app churn STEPS      STEPS steps, each cudaMalloc 1 MiB then cudaFree of it, in a range
//                               "churn" (the pattern the memory summary warns about).
//   memory_app many COUNT       one step: COUNT cudaMalloc(256)/cudaFree pairs.
//   memory_app pool BYTES       a pool of its own (cudaMemPoolCreate, release threshold: keep
//                               everything), cudaMallocFromPoolAsync BYTES, cudaFreeAsync, sync,
//                               then cudaMalloc 512; the pool is destroyed at the end.
//   memory_app threads N        4 threads, each N cudaMalloc of 64 * (thread + 1) bytes, then
//                               cudaFree of each, concurrently.
//   memory_app library BYTES    in range "library": cudaMalloc 4096, a simblas workspace of BYTES
//                               (cuMemAlloc: no hook sees it), cudaFree, the workspace freed
//                               (cuMemFree), then cudaDeviceSynchronize.
// Prints "result <what> <cudaError_t>" for each call whose result the cases check, and "done".
#include <cuda_runtime_api.h>

#include "simblas.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

extern "C" {
__attribute__((weak)) void profagent_step(void);
__attribute__((weak)) void profagent_range_push(const char* name);
__attribute__((weak)) void profagent_range_pop(void);
}

namespace {

void step() {
  if (profagent_step) profagent_step();
}
void range(const char* name) {
  if (profagent_range_push) profagent_range_push(name);
}
void range_end() {
  if (profagent_range_pop) profagent_range_pop();
}
void said(const char* what, cudaError_t result) { std::printf("result %s %d\n", what, int(result)); }

int sequence(size_t oom_bytes) {
  void *early = nullptr, *pinned = nullptr, *a = nullptr, *b = nullptr, *c = nullptr, *h = nullptr, *leak = nullptr;
  cudaStream_t stream = nullptr;
  if (cudaStreamCreate(&stream) != cudaSuccess) return 2;
  if (cudaMalloc(&early, 1 << 20) != cudaSuccess || cudaMallocHost(&pinned, 64 << 10) != cudaSuccess) return 2;
  step();
  range("layer1");
  if (cudaMalloc(&a, 4096) != cudaSuccess || cudaMalloc(&b, 10000) != cudaSuccess) return 2;
  if (cudaMallocAsync(&c, 3000, stream) != cudaSuccess) return 2;
  cudaFree(a);
  cudaFreeAsync(c, stream);
  cudaStreamSynchronize(stream);
  cudaFree(early);
  range_end();
  step();
  range("layer2");
  if (cudaMallocHost(&h, 8192) != cudaSuccess) return 2;
  cudaFree(b);
  cudaFreeHost(h);
  if (cudaMalloc(&leak, 777) != cudaSuccess) return 2;
  said("free_null", cudaFree(nullptr));
  said("free_again", cudaFree(b));
  void* huge = nullptr;
  said("oom", cudaMalloc(&huge, oom_bytes));
  cudaGetLastError();  // the failed allocation is not sticky: clear it as a program would
  range_end();
  step();
  step();
  std::printf("done\n");
  return 0;
}

int churn(long steps) {
  for (long s = 0; s < steps; ++s) {
    range("churn");
    void* p = nullptr;
    if (cudaMalloc(&p, 1 << 20) != cudaSuccess) return 2;
    cudaFree(p);
    range_end();
    step();
  }
  std::printf("done\n");
  return 0;
}

int many(long count) {
  for (long i = 0; i < count; ++i) {
    void* p = nullptr;
    if (cudaMalloc(&p, 256) != cudaSuccess) return 2;
    cudaFree(p);
  }
  step();
  std::printf("done\n");
  return 0;
}

int pool(size_t bytes) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t mine = nullptr;
  cudaStream_t stream = nullptr;
  if (cudaStreamCreate(&stream) != cudaSuccess || cudaMemPoolCreate(&mine, &props) != cudaSuccess) return 2;
  uint64_t keep = UINT64_MAX;
  if (cudaMemPoolSetAttribute(mine, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess) return 2;
  range("pooled");
  void *p = nullptr, *plain = nullptr;
  if (cudaMallocFromPoolAsync(&p, bytes, mine, stream) != cudaSuccess) return 2;
  cudaFreeAsync(p, stream);
  cudaStreamSynchronize(stream);
  if (cudaMalloc(&plain, 512) != cudaSuccess) return 2;
  range_end();
  cudaFree(plain);
  cudaMemPoolDestroy(mine);
  std::printf("done\n");
  return 0;
}

int threads(long count) {
  std::vector<std::thread> workers;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    workers.emplace_back([t, count, &failures] {
      std::vector<void*> mine(size_t(count), nullptr);
      for (void*& p : mine) failures += cudaMalloc(&p, size_t(64) * size_t(t + 1)) != cudaSuccess;
      for (void* p : mine) cudaFree(p);
    });
  }
  for (std::thread& w : workers) w.join();
  if (failures != 0) return 2;
  std::printf("done\n");
  return 0;
}

int library(size_t bytes) {
  range("library");
  void *mine = nullptr, *workspace = nullptr;
  if (cudaMalloc(&mine, 4096) != cudaSuccess) return 2;
  said("workspace", cudaError_t(simblasWorkspaceCreate(bytes, &workspace)));
  cudaFree(mine);
  said("workspace_free", cudaError_t(simblasWorkspaceDestroy(workspace)));
  range_end();
  cudaDeviceSynchronize();
  std::printf("done\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 64;
  if (std::strcmp(argv[1], "sequence") == 0) return sequence(std::strtoull(argv[2], nullptr, 10));
  if (std::strcmp(argv[1], "churn") == 0) return churn(std::atol(argv[2]));
  if (std::strcmp(argv[1], "many") == 0) return many(std::atol(argv[2]));
  if (std::strcmp(argv[1], "threads") == 0) return threads(std::atol(argv[2]));
  if (std::strcmp(argv[1], "pool") == 0) return pool(std::strtoull(argv[2], nullptr, 10));
  if (std::strcmp(argv[1], "library") == 0) return library(std::strtoull(argv[2], nullptr, 10));
  return 64;
}
