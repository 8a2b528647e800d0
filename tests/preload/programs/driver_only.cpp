// A program that uses the CUDA driver API alone, as Triton, CuPy or Numba do: its kernels come
// from an image loaded with cuModuleLoadData (a cubin, PTX or fatbin embedded at build time by
// bin2c), launched with cuLaunchKernel. No runtime is linked, so no hook can see a call: the
// agent sees them through CUDA's tool injection and CUPTI's callbacks.
//
//   driver_only <cubin|ptx|fatbin> <steps>
// Each step: HtoD copy, two launches, a set, a DtoH copy, an event record, a stream sync.
// Prints "expect {...}" with what it issued (tests/preload/inject_checks.py compares).
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "inject_cubin.h"
#include "inject_fatbin.h"
#include "inject_ptx.h"

namespace {

void check(CUresult result, const char* what) {
  if (result == CUDA_SUCCESS) return;
  std::fprintf(stderr, "driver_only: %s failed with %d\n", what, int(result));
  std::exit(2);
}

const void* image_of(const char* kind) {
  if (std::strcmp(kind, "cubin") == 0) return inject_cubin;
  if (std::strcmp(kind, "ptx") == 0) return inject_ptx;
  if (std::strcmp(kind, "fatbin") == 0) return inject_fatbin;
  std::fprintf(stderr, "driver_only: unknown image kind %s\n", kind);
  std::exit(2);
}

CUmodule load(const char* kind) {
  CUmodule module = nullptr;
  if (std::strcmp(kind, "fatbin") == 0) {
    check(cuModuleLoadFatBinary(&module, image_of(kind)), "cuModuleLoadFatBinary");
  } else if (std::strcmp(kind, "ptx") == 0) {
    check(cuModuleLoadDataEx(&module, image_of(kind), 0, nullptr, nullptr), "cuModuleLoadDataEx");
  } else {
    check(cuModuleLoadData(&module, image_of(kind)), "cuModuleLoadData");
  }
  return module;
}

void launch(CUfunction f, CUdeviceptr data, float value, int n, CUstream stream) {
  void* args[] = {&data, &value, &n};
  check(cuLaunchKernel(f, unsigned((n + 255) / 256), 1, 1, 256, 1, 1, 0, stream, args, nullptr), "cuLaunchKernel");
}

}  // namespace

int main(int argc, char** argv) {
  const char* kind = argc > 1 ? argv[1] : "cubin";
  const int steps = argc > 2 ? std::atoi(argv[2]) : 4;
  constexpr int n = 1 << 16;
  check(cuInit(0), "cuInit");
  CUdevice device;
  check(cuDeviceGet(&device, 0), "cuDeviceGet");
  CUcontext context;
  check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
  CUmodule module = load(kind);
  CUfunction scale, offset;
  check(cuModuleGetFunction(&scale, module, "scale"), "cuModuleGetFunction scale");
  check(cuModuleGetFunction(&offset, module, "offset"), "cuModuleGetFunction offset");
  CUstream stream;
  check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  CUevent start, stop;
  check(cuEventCreate(&start, 0), "cuEventCreate");
  check(cuEventCreate(&stop, 0), "cuEventCreate");
  CUdeviceptr data;
  check(cuMemAlloc(&data, n * sizeof(float)), "cuMemAlloc");
  std::vector<float> host(n, 1.0f), back(n, 0.0f);
  check(cuEventRecord(start, stream), "cuEventRecord");
  for (int step = 0; step < steps; ++step) {
    check(cuMemcpyHtoDAsync(data, host.data(), n * sizeof(float), stream), "cuMemcpyHtoDAsync");
    launch(scale, data, 2.0f, n, stream);
    launch(offset, data, 1.0f, n, stream);
    check(cuMemsetD8Async(data, 0, 256, stream), "cuMemsetD8Async");
    check(cuMemcpyDtoHAsync(back.data(), data, n * sizeof(float), stream), "cuMemcpyDtoHAsync");
    check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  }
  check(cuEventRecord(stop, stream), "cuEventRecord");
  check(cuEventSynchronize(stop), "cuEventSynchronize");
  float ms = 0;
  check(cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
  // Copies move real bytes on the simulated device: the set zeroed the first 256 bytes.
  if (back[0] != 0.0f || back[n - 1] != 1.0f) {
    std::fprintf(stderr, "driver_only: wrong bytes back (%g, %g)\n", back[0], back[n - 1]);
    return 3;
  }
  check(cuMemFree(data), "cuMemFree");
  check(cuEventDestroy(start), "cuEventDestroy");
  check(cuEventDestroy(stop), "cuEventDestroy");
  check(cuStreamDestroy(stream), "cuStreamDestroy");
  check(cuModuleUnload(module), "cuModuleUnload");
  check(cuCtxSynchronize(), "cuCtxSynchronize");
  std::printf("expect {\"kernels\": {\"scale\": %d, \"offset\": %d}, \"memcpy\": %d, \"memset\": %d, "
              "\"calls\": {\"cuLaunchKernel\": %d, \"cuMemcpyHtoDAsync_v2\": %d, \"cuMemcpyDtoHAsync_v2\": %d, "
              "\"cuMemsetD8Async\": %d, \"cuStreamSynchronize\": %d}}\n",
              steps, steps, 2 * steps, steps, 2 * steps, steps, steps, steps, steps);
  return 0;
}
