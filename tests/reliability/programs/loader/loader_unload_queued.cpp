// loader_unload_queued PLUGIN LAUNCHES: a program that links the runtime loads a plugin with
// kernels of its own, has it queue LAUNCHES kernels, unloads it while they are still queued
// (the plugin's kernel names go away with it), fills the freed address range with another
// library, and only then waits for the device. Prints what it saw; the exit status is 0 when
// every call succeeded.
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 3) return std::fprintf(stderr, "usage: %s PLUGIN LAUNCHES\n", argv[0]), 2;
  const int launches = std::atoi(argv[2]);
  void* warm = nullptr;  // the runtime is the program's own, as in a framework process
  if (cudaMalloc(&warm, 256) != cudaSuccess) return std::printf("cudaMalloc failed\n"), 1;
  void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (plugin == nullptr) return std::printf("dlopen failed: %s\n", dlerror()), 1;
  auto* queue = reinterpret_cast<int (*)(int)>(dlsym(plugin, "plugin_queue_kernels"));
  if (queue == nullptr) return std::printf("plugin_queue_kernels missing\n"), 1;
  const int failures = queue(launches);
  std::printf("queued %d kernels, %d failed\n", launches, failures);
  std::printf("dlclose: %d\n", dlclose(plugin));
  void* still = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
  std::printf("plugin still mapped after dlclose: %s\n", still != nullptr ? "yes" : "no");
  void* filler = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);  // takes the freed range if it fits
  const cudaError_t synced = cudaDeviceSynchronize();
  std::printf("cudaDeviceSynchronize after the unload: %s\n", cudaGetErrorName(synced));
  std::printf("cudaFree: %s\n", cudaGetErrorName(cudaFree(warm)));
  if (filler != nullptr) dlclose(filler);
  std::printf("expect {\"cudaLaunchKernel\": %d}\n", launches);
  return failures == 0 && synced == cudaSuccess ? 0 : 1;
}
