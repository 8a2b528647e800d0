// loader_bench: what the agent's dlopen and dlclose wrappers (hooks/loader_hooks.cpp) add to
// the program's own loader calls. Run by tests/bench/loader_bench.py with and without the agent.
//
//   loader_bench N PLUGIN
//
// Prints, per kind of call, the median over 9 batches of the ns per call:
//   noload    dlopen(name, RTLD_NOLOAD) of a loaded library + dlclose: no file is touched, so
//             this is the wrapper's own cost (finding the caller's `ret`, the DIOPI rescan's
//             generation check, dlclose's unload check) against the loader's bookkeeping
//   load      dlopen(PLUGIN) + dlclose of a small library that is really mapped and unmapped
//             each time (with the agent: a rescan of the new object, and forgetting the cached
//             runtime functions after the unload)
//   dlsym     dlsym of that library's symbol: not interposed, for reference
#include <dlfcn.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

double now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return double(t.tv_sec) * 1e9 + double(t.tv_nsec);
}

template <typename Body>
double median_ns_per_call(long calls, Body body) {
  std::vector<double> batches;
  for (int batch = 0; batch < 9; ++batch) {
    const double start = now_ns();
    for (long i = 0; i < calls; ++i) body();
    batches.push_back((now_ns() - start) / double(calls));
  }
  std::sort(batches.begin(), batches.end());
  return batches[batches.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return std::fprintf(stderr, "usage: loader_bench N PLUGIN\n"), 2;
  const long calls = std::atol(argv[1]);
  const char* plugin = argv[2];
  const double noload = median_ns_per_call(calls, [] {
    void* handle = dlopen("libc.so.6", RTLD_NOLOAD | RTLD_NOW);
    if (handle != nullptr) dlclose(handle);
  });
  const double load = median_ns_per_call(std::max(1L, calls / 20), [plugin] {
    void* handle = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) dlclose(handle);
  });
  void* kept = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
  const double lookup = median_ns_per_call(calls, [kept] {
    volatile void* symbol = dlsym(kept, "plugin_variant");
    (void)symbol;
  });
  std::printf("noload %.1f\nload %.1f\ndlsym %.1f\n", noload, load, lookup);
  return kept != nullptr ? 0 : 1;
}
