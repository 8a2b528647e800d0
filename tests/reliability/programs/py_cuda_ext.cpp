// libpy_cuda_ext.so: what a Python program's CUDA calls go through — a compiled extension
// linked against the runtime, as torch's and CuPy's are (its references carry the runtime's
// symbol version, so they meet the agent's hooks). Python loads it with ctypes; each function
// is the runtime call of the same name behind an `ext_` prefix.
#include <cuda_runtime_api.h>

#define PY_CUDA_EXT extern "C" __attribute__((visibility("default")))

PY_CUDA_EXT int ext_cudaMalloc(void** pointer, size_t bytes) { return cudaMalloc(pointer, bytes); }
PY_CUDA_EXT int ext_cudaFree(void* pointer) { return cudaFree(pointer); }
PY_CUDA_EXT int ext_cudaStreamSynchronize(cudaStream_t stream) { return cudaStreamSynchronize(stream); }
PY_CUDA_EXT int ext_cudaDeviceSynchronize() { return cudaDeviceSynchronize(); }
