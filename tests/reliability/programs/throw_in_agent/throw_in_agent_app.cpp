// The program of the throw-in-agent case: CUDA runtime calls and profagent ranges made while
// every allocation of the agent throws (throwing_new.cpp, when preloaded), then the same calls
// again with allocation working. Prints each call's result and whether the data came back, so
// that the run with the agent must print exactly what the run without it prints.
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstring>

namespace {

using ArmFn = void (*)(int);
using RangeFn = void (*)(const char*);
using PopFn = void (*)();

void arm(int on) {
  if (auto fn = reinterpret_cast<ArmFn>(dlsym(RTLD_DEFAULT, "throwing_new_arm"))) fn(on);
}

// A named range when the agent is there (its C API is not linked: a run without it has none).
void range(const char* name, bool push) {
  if (push) {
    if (auto fn = reinterpret_cast<RangeFn>(dlsym(RTLD_DEFAULT, "profagent_range_push"))) fn(name);
  } else if (auto fn = reinterpret_cast<PopFn>(dlsym(RTLD_DEFAULT, "profagent_range_pop"))) {
    fn();
  }
}

int round_trip(const char* label) {
  char host[256], back[256];
  for (int i = 0; i < 256; ++i) host[i] = char(i * 7 + 3);
  std::memset(back, 0, sizeof back);
  void* device = nullptr;
  range(label, true);
  const cudaError_t allocated = cudaMalloc(&device, sizeof host);
  const cudaError_t set = cudaMemset(device, 0, sizeof host);
  const cudaError_t up = cudaMemcpy(device, host, sizeof host, cudaMemcpyHostToDevice);
  const cudaError_t down = cudaMemcpy(back, device, sizeof back, cudaMemcpyDeviceToHost);
  const cudaError_t synced = cudaDeviceSynchronize();
  const cudaError_t freed = cudaFree(device);
  range(label, false);
  std::printf("%s: malloc %d (pointer %s) memset %d copies %d %d sync %d free %d data %s\n", label, int(allocated),
              device != nullptr ? "set" : "null", int(set), int(up), int(down), int(synced), int(freed),
              std::memcmp(host, back, sizeof host) == 0 ? "intact" : "WRONG");
  return allocated == cudaSuccess && std::memcmp(host, back, sizeof host) == 0 ? 0 : 1;
}

}  // namespace

int main() {
  arm(1);
  int failures = round_trip("agent allocations throwing");
  arm(0);
  failures += round_trip("agent allocations working");
  std::printf("expect {\"cudaMalloc\": 2}\n");
  return failures;
}
