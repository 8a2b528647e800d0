#include "injection.h"

#include <dlfcn.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace devsim {
namespace {

enum : int { kNotYet = 0, kRunning = 1, kDone = 2 };
std::atomic<int> g_state{kNotYet};
std::atomic<long> g_owner{0};

long this_thread() { return syscall(SYS_gettid); }

void inject(const char* path) {
  // RTLD_LOCAL: the tool's symbols must not interpose anything in the program.
  void* tool = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (tool == nullptr) {
    std::fprintf(stderr, "devsim: CUDA_INJECTION64_PATH: %s\n", dlerror());
    return;
  }
  using Initialize = int (*)();
  auto initialize = reinterpret_cast<Initialize>(dlsym(tool, "InitializeInjection"));
  if (initialize == nullptr) {
    std::fprintf(stderr, "devsim: CUDA_INJECTION64_PATH: %s has no InitializeInjection\n", path);
    return;
  }
  initialize();  // its result is not used by the driver either
}

}  // namespace

void run_tool_injection_once() {
  if (g_state.load(std::memory_order_acquire) == kDone) return;
  int expected = kNotYet;
  if (g_state.compare_exchange_strong(expected, kRunning, std::memory_order_acq_rel)) {
    g_owner.store(this_thread());
    const char* path = std::getenv("CUDA_INJECTION64_PATH");
    if (path != nullptr && *path != '\0') inject(path);
    g_state.store(kDone, std::memory_order_release);
    return;
  }
  if (g_owner.load() == this_thread()) return;  // CUDA called from InitializeInjection itself
  while (g_state.load(std::memory_order_acquire) != kDone) sched_yield();
}

}  // namespace devsim
