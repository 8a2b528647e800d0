// The kernels of the injection tests: built into the runtime programs, and compiled alone to a
// cubin, PTX and fatbin that driver_only.cpp loads with cuModuleLoadData.
#pragma once

extern "C" __global__ void scale(float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

extern "C" __global__ void offset(float* x, float b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += b;
}
