// A kernel that needs far more than 64 registers per thread (forty live accumulators and a
// stack array: 87 registers, a stack frame and 4 KiB of static shared memory with this
// toolkit), so a block of 1024 threads cannot get its registers on any GPU. Shared by the
// devsim kernel-resource test and the register_limits workload.
#pragma once

__global__ void register_heavy(float* data, int n) {
  __shared__ float tile[1024];
  float acc[40];
  for (int i = 0; i < 40; ++i) acc[i] = data[i * n + threadIdx.x];
  for (int k = 0; k < n; ++k) {
    for (int i = 0; i < 40; ++i) acc[i] = acc[i] * acc[(i + k) % 40] + 1.f;
  }
  tile[threadIdx.x] = acc[0];
  __syncthreads();
  float sum = 0;
  for (int i = 0; i < 40; ++i) sum += acc[i] * tile[(threadIdx.x + i) % 1024];
  data[threadIdx.x] = sum;
}
