// A DIOPI-style vendor library with one operator: the GOT slots that import it are what the
// agent patches while other threads load and unload libraries.
#include <atomic>

namespace {
std::atomic<long> g_calls{0};
}

extern "C" __attribute__((visibility("default"))) int diopiFill(void*, void*, const void*) {
  g_calls.fetch_add(1, std::memory_order_relaxed);
  return 0;
}
