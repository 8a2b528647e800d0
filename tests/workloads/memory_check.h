// Shared by the memory workloads: the workloads' checks, and a byte pattern whose every byte
// depends on its seed and position.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "workload_check.h"

inline void fill_pattern(unsigned char* data, size_t bytes, unsigned seed) {
  for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>(seed * 31 + i * 7 + (i >> 12));
}

inline bool has_pattern(const unsigned char* data, size_t bytes, unsigned seed) {
  for (size_t i = 0; i < bytes; ++i) {
    if (data[i] != static_cast<unsigned char>(seed * 31 + i * 7 + (i >> 12))) return false;
  }
  return true;
}
