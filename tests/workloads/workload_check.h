// Shared by the workloads: a call check that reports the failing call and makes the step
// (a function returning bool) fail, and a condition check that says what was wrong.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>

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
