// Threads that load libraries importing a DIOPI operator — one through a library constructor
// (a dlopen nested under the loader's lock), others directly, calling the operator through
// each freshly loaded copy — all at once, many times. The agent scans every new object from
// its dlopen hook; a scan that held an agent lock across a loader call deadlocked here.
//   diopi_race_app DIR ITERATIONS
// Prints "expect {"diopiFill": N}": the operator calls made through the direct loads.
#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

std::atomic<long> g_calls{0};
std::atomic<bool> g_failed{false};

void* open_or_fail(const std::string& path, int mode) {
  void* handle = dlopen(path.c_str(), mode);
  if (handle == nullptr) {
    std::fprintf(stderr, "dlopen %s: %s\n", path.c_str(), dlerror());
    g_failed = true;
  }
  return handle;
}

void load_through_constructor(const std::string& dir, long iterations) {
  for (long i = 0; i < iterations && !g_failed; ++i) {
    if (void* outer = open_or_fail(dir + "/libdiopi_race_outer.so", RTLD_NOW | RTLD_LOCAL)) dlclose(outer);
  }
}

void load_and_call(const std::string& dir, long iterations) {
  using Fill = long (*)(long);
  for (long i = 0; i < iterations && !g_failed; ++i) {
    void* importer = open_or_fail(dir + "/libdiopi_race_importer_b.so", RTLD_LAZY | RTLD_LOCAL);
    if (importer == nullptr) return;
    auto fill = reinterpret_cast<Fill>(dlsym(importer, "race_fill"));
    g_calls += fill(3);
    dlclose(importer);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const std::string dir = argv[1];
  const long iterations = std::atol(argv[2]);
  setenv("DIOPI_RACE_DIR", dir.c_str(), 1);
  std::vector<std::thread> threads;
  threads.emplace_back(load_through_constructor, dir, iterations);
  threads.emplace_back(load_through_constructor, dir, iterations);
  threads.emplace_back(load_and_call, dir, iterations);
  threads.emplace_back(load_and_call, dir, iterations);
  for (std::thread& thread : threads) thread.join();
  std::printf("expect {\"diopiFill\": %ld}\n", g_calls.load());
  return g_failed ? 1 : 0;
}
