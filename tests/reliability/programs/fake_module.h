// What the reliability programs share: they are plain C++ (no nvcc), so they register their
// "kernels" the way nvcc-generated code does — a host stub's address and a device name, through
// the runtime's registration entry points — and they mark ranges through the agent's weak C API
// (a no-op without the agent).
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

extern "C" {
void profagent_range_push(const char* name) __attribute__((weak));
void profagent_range_pop(void) __attribute__((weak));
void** __cudaRegisterFatBinary(void* fat_cubin);
void __cudaRegisterFatBinaryEnd(void** handle);
void __cudaRegisterFunction(void** handle, const char* host_fun, char* device_fun, const char* device_name,
                            int thread_limit, uint3* tid, uint3* bid, dim3* block, dim3* grid, int* wsize);
}

// Registers one module of kernels: &stubs[i] (one distinct address each) launches as names[i].
inline void register_fake_kernels(const char* stubs, const std::vector<std::string>& names) {
  void** module = __cudaRegisterFatBinary(nullptr);
  for (size_t i = 0; i < names.size(); ++i) {
    __cudaRegisterFunction(module, &stubs[i], const_cast<char*>(names[i].c_str()), names[i].c_str(), -1, nullptr,
                           nullptr, nullptr, nullptr, nullptr);
  }
  __cudaRegisterFatBinaryEnd(module);
}
