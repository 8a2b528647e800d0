// loader_app: programs whose behaviour depends on how the dynamic loader treats THEIR calls —
// the shapes tests/reliability/cases_loader.py runs with and without libprofagent.so.
//
//   loader_app origin             dlopen("$ORIGIN/plug/libloader_plugin.so")
//   loader_app runpath HOST       dlopen(HOST): that library's RUNPATH finds its plugin
//   loader_app cudnn DIR          cuDNN laid out as in a pip wheel (RUNPATH $ORIGIN) in DIR
//   loader_app unload PLUGIN      a plugin linking libcudart: load, work, unload, fill, reload
//   loader_app pin PLUGIN         as unload, but dlsym(RTLD_DEFAULT) pins the runtime first
//   loader_app nocrt LIB PLUGIN   a library without crti (LIB) dlopens the CUDA PLUGIN twice by
//                                 path, then the program uses it
//
// It does not link the runtime itself (loader_cancel does the cancellation case), so that
// unloading the plugin can unload the runtime.
// Every mode prints what it saw (results, error strings, which directory each library came
// from) so that a run with the agent can be compared line by line with one without.
#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace {

using VariantFn = const char* (*)();
using WorkFn = int (*)();

int origin() {
  void* plugin = dlopen("$ORIGIN/plug/libloader_plugin.so", RTLD_NOW);
  if (plugin == nullptr) return std::printf("origin: dlopen failed: %s\n", dlerror()), 1;
  auto* variant = reinterpret_cast<VariantFn>(dlsym(plugin, "plugin_variant"));
  std::printf("origin: loaded plugin %s\n", variant != nullptr ? variant() : "(no plugin_variant)");
  return 0;
}

int runpath(const char* host_path) {
  void* host = dlopen(host_path, RTLD_NOW);
  if (host == nullptr) return std::printf("runpath: host not loaded: %s\n", dlerror()), 1;
  auto* load = reinterpret_cast<VariantFn>(dlsym(host, "host_load_plugin"));
  std::printf("runpath: %s\n", load != nullptr ? load() : "(no host_load_plugin)");
  return 0;
}

// Where each loaded object whose name holds `part` came from: `inside` DIR or elsewhere.
struct Listing {
  const char* part;
  const char* dir;
};
int list_object(dl_phdr_info* info, size_t, void* data) {
  const auto& listing = *static_cast<Listing*>(data);
  const char* name = info->dlpi_name;
  if (name == nullptr || std::strstr(name, listing.part) == nullptr) return 0;
  const char* base = std::strrchr(name, '/');
  const bool inside = std::strncmp(name, listing.dir, std::strlen(listing.dir)) == 0;
  std::printf("  loaded %s from %s\n", base != nullptr ? base + 1 : name, inside ? "the wheel" : "ELSEWHERE");
  return 0;
}

int cudnn(const char* dir) {
  const std::string path = std::string(dir) + "/libcudnn.so.9";
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return std::printf("cudnn: not loaded: %s\n", dlerror()), 1;
  auto* version = reinterpret_cast<size_t (*)()>(dlsym(lib, "cudnnGetVersion"));
  auto* create = reinterpret_cast<int (*)(void**)>(dlsym(lib, "cudnnCreate"));
  auto* message = reinterpret_cast<const char* (*)(int)>(dlsym(lib, "cudnnGetErrorString"));
  if (version == nullptr || create == nullptr || message == nullptr) return std::printf("cudnn: symbols missing\n"), 1;
  std::printf("cudnn: version %zu\n", version());
  void* handle = nullptr;
  const int status = create(&handle);  // loads the sub-libraries (graph, ops, ...) by bare name
  std::printf("cudnn: cudnnCreate: %s\n", message(status));
  Listing listing{"libcudnn", dir};
  dl_iterate_phdr(list_object, &listing);
  return 0;
}

bool runtime_loaded() {
  void* runtime = dlopen("libcudart.so.13", RTLD_NOLOAD | RTLD_LAZY);
  if (runtime != nullptr) dlclose(runtime);
  return runtime != nullptr;
}

int plugin_round(const char* plugin_path, int mode, const char* label) {
  void* plugin = dlopen(plugin_path, mode);
  if (plugin == nullptr) return std::printf("%s: plugin not loaded: %s\n", label, dlerror()), -1;
  auto* work = reinterpret_cast<WorkFn>(dlsym(plugin, "plugin_cuda_work"));
  std::printf("%s: plugin work returned %d\n", label, work != nullptr ? work() : -1);
  if (mode & RTLD_GLOBAL) {  // as a program that takes a runtime function by name
    auto* count = reinterpret_cast<int (*)(int*)>(dlsym(RTLD_DEFAULT, "cudaGetDeviceCount"));
    int devices = 0;
    const int result = count != nullptr ? count(&devices) : -1;
    std::printf("%s: cudaGetDeviceCount by dlsym: %d, %d devices\n", label, result, devices);
  }
  std::printf("%s: dlclose %d\n", label, dlclose(plugin));
  std::printf("%s: runtime still loaded after unload: %s\n", label, runtime_loaded() ? "yes" : "no");
  return 0;
}

// Loads and unloads a plugin that links the runtime, lets other libraries take the address
// range the runtime had, then loads the plugin again and calls through it.
int unload(const char* plugin_path, int mode) {
  if (plugin_round(plugin_path, mode, "first") != 0) return 1;
  // Libraries this program has not loaded yet: the loader maps them into the freed range.
  const char* fillers[] = {"libsqlite3.so.0", "libxml2.so.2", "libexpat.so.1", "libbz2.so.1.0", "libffi.so.8"};
  int loaded = 0;
  for (const char* filler : fillers) loaded += dlopen(filler, RTLD_NOW) != nullptr;
  std::printf("fillers loaded: %d\n", loaded);
  return plugin_round(plugin_path, mode, "second") != 0 ? 1 : 0;
}

int nocrt(const char* library, const char* plugin) {
  void* lib = dlopen(library, RTLD_NOW);
  auto* load = lib != nullptr ? reinterpret_cast<int (*)(const char*)>(dlsym(lib, "nocrt_load")) : nullptr;
  if (load == nullptr) return std::printf("nocrt: library not loaded: %s\n", dlerror()), 1;
  const int first = load(plugin), second = load(plugin);
  std::printf("nocrt: loads %d %d\n", first, second);
  void* loaded = dlopen(plugin, RTLD_NOLOAD | RTLD_NOW);  // the CUDA plugin: use it (a trace follows)
  auto* work = loaded != nullptr ? reinterpret_cast<WorkFn>(dlsym(loaded, "plugin_cuda_work")) : nullptr;
  std::printf("nocrt: plugin work returned %d\n", work != nullptr ? work() : -1);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  int status = 2;
  if (mode == "origin") status = origin();
  if (mode == "runpath" && argc > 2) status = runpath(argv[2]);
  if (mode == "cudnn" && argc > 2) status = cudnn(argv[2]);
  if (mode == "unload" && argc > 2) status = unload(argv[2], RTLD_NOW | RTLD_LOCAL);
  if (mode == "pin" && argc > 2) status = unload(argv[2], RTLD_NOW | RTLD_GLOBAL);
  if (mode == "nocrt" && argc > 3) status = nocrt(argv[2], argv[3]);
  if (status == 2) std::fprintf(stderr, "usage: loader_app origin|runpath HOST|cudnn DIR|unload P|pin P|nocrt LIB P\n");
  std::fflush(stdout);
  return status;
}
