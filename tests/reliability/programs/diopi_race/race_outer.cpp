// A library whose constructor loads an operator importer: that dlopen, and the agent's scan
// after it, run while this thread holds the loader's lock (glibc runs constructors under it).
#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace {
void* g_importer = nullptr;

__attribute__((constructor)) void load_importer() {
  const char* dir = std::getenv("DIOPI_RACE_DIR");
  if (dir == nullptr) return;
  g_importer = dlopen((std::string(dir) + "/libdiopi_race_importer_a.so").c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (g_importer == nullptr) std::abort();
}

__attribute__((destructor)) void unload_importer() {
  if (g_importer != nullptr) dlclose(g_importer);
}
}  // namespace
