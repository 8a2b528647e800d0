// markers_app: a training-like loop whose kernels and ranges carry hostile names, for the
// PROFAGENT_STEP_ON cases of tests/reliability/cases_markers.py.
//
//   markers_app steps N      N steps; each launches every hostile kernel twice (each inside a
//                            range of the same name), then the step's last kernel
//                            `train_step_end`, then pushes and pops a range `step_boundary`
//
// Kernel names are registered as given (devsim takes any name, as the real runtime does).
// The names contain no 'c' and end in a non-word character (also where the agent cuts them,
// at 16 KiB), so that the hostile patterns (a|b)*c and (\w+\s?)+$ match none of them;
// `train_step_end` is the marker.
// Prints "expect {...}" with the calls made, as reliability_app does.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fake_module.h"

namespace {

std::vector<std::string> hostile_names() {
  std::string ab;  // 20,000 characters for (a|b)*c: std::regex overflowed the stack on it
  while (ab.size() < 20000) ab += "ab";
  ab[16 * 1024 - 1] = '!';  // the agent matches the first 16 KiB: they end in '!' too
  ab += "!";
  std::string huge;  // 64 KiB, beyond the agent's 16 KiB bound
  while (huge.size() < 64 * 1024) huge += "K-";
  return {ab, std::string(1000, 'w') + "!",  // (\w+\s?)+$: exponential backtracking
          huge, "train_step_end"};
}

char g_stubs[8];  // each kernel's "host function" is one distinct address

void range(const char* name) {
  if (profagent_range_push) profagent_range_push(name);
}
void range_end() {
  if (profagent_range_pop) profagent_range_pop();
}

void register_kernels(const std::vector<std::string>& names) { register_fake_kernels(g_stubs, names); }

int steps(long count) {
  const std::vector<std::string> names = hostile_names();
  register_kernels(names);
  const size_t marker = names.size() - 1;
  long launches = 0;
  for (long step = 0; step < count; ++step) {
    for (int twice = 0; twice < 2; ++twice) {
      for (size_t k = 0; k < marker; ++k) {
        range(names[k].c_str());
        if (cudaLaunchKernel(&g_stubs[k], dim3(1), dim3(1), nullptr, 0, nullptr) != cudaSuccess) return 2;
        range_end();
        ++launches;
      }
    }
    if (cudaLaunchKernel(&g_stubs[marker], dim3(1), dim3(1), nullptr, 0, nullptr) != cudaSuccess) return 2;
    ++launches;
    range("step_boundary");
    range_end();
  }
  if (cudaDeviceSynchronize() != cudaSuccess) return 3;
  std::printf("expect {\"steps\": %ld, \"cudaLaunchKernel\": %ld, \"per_step\": %zu}\n", count, launches,
              2 * marker + 1);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const long count = argc > 2 ? std::atol(argv[2]) : 10;
  if (mode == "steps") return steps(count);
  std::fprintf(stderr, "usage: markers_app steps N\n");
  return 64;
}
