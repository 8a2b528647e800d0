// Shared by the memory workloads: a call check that reports the failing call and makes the
// step fail, and a byte pattern whose every byte depends on its seed and position.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#define CHECK(call)                                                                  \
  do {                                                                               \
    cudaError_t err_ = (call);                                                       \
    if (err_ != cudaSuccess) {                                                       \
      std::printf("FAIL %s: %s\n", #call, cudaGetErrorName(err_));                   \
      return false;                                                                  \
    }                                                                                \
  } while (0)

#define EXPECT(cond, ...)                                                            \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::printf("FAIL " __VA_ARGS__);                                              \
      std::printf("\n");                                                             \
      return false;                                                                  \
    }                                                                                \
  } while (0)

inline void fill_pattern(unsigned char* data, size_t bytes, unsigned seed) {
  for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>(seed * 31 + i * 7 + (i >> 12));
}

inline bool has_pattern(const unsigned char* data, size_t bytes, unsigned seed) {
  for (size_t i = 0; i < bytes; ++i) {
    if (data[i] != static_cast<unsigned char>(seed * 31 + i * 7 + (i >> 12))) return false;
  }
  return true;
}
