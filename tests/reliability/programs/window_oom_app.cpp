// window_oom_app HOLD_MB EVENTS: a program that holds HOLD_MB of its own memory (touched) and
// records EVENTS user ranges (profagent_range_push/pop, nested two deep: EVENTS host events)
// around a few CUDA calls, then prints "done", a checksum of its memory and its CUDA calls. For
// tests/reliability/cases_window_memory.py (run under `ulimit -v`) and
// tests/bench/window_memory_bench.py.
#include <cuda_runtime_api.h>

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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 64;
  const size_t hold = size_t(std::strtoull(argv[1], nullptr, 10)) << 20;
  const long events = std::atol(argv[2]);
  // Held to the end, through the agent's exit-time write (never freed, as a program's memory
  // often is not: a destructor would give it back before the agent writes).
  auto* held = static_cast<unsigned char*>(std::malloc(hold + 1));
  if (held == nullptr) return 3;
  for (size_t i = 0; i < hold; i += 4096) held[i] = static_cast<unsigned char>(i >> 12);
  void* device = nullptr;
  if (cudaMalloc(&device, 4096) != cudaSuccess) return 2;
  long calls = 2;  // cudaMalloc, cudaFree
  for (long i = 0; i < events / 2; ++i) {
    range("outer");
    range("inner");
    range_end();
    range_end();
    if (i % 100000 == 0) cudaMemset(device, int(i & 0xff), 4096), ++calls;
  }
  cudaFree(device);
  uint64_t sum = 0;
  for (size_t i = 0; i < hold; i += 4096) sum += held[i];
  std::printf("done %llu, %ld CUDA calls\n", static_cast<unsigned long long>(sum), calls);
  return 0;
}
