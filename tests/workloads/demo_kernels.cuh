// Device kernels of the demo training workload. Their names are deliberately of every kind a
// profiler must print well: plain C++ (relu_forward), templated and namespaced
// (nn::conv2d_fwd<float, 3>, optim::adam_step<float>), and — inside libsimblas — a C-linkage
// kernel and a templated one launched through the driver API.
//
// The kernels are real (they train on a GPU); on devsim they are timed, not executed.
#pragma once

#include <cuda_runtime.h>

// Element-wise ReLU, out-of-place.
__global__ void relu_forward(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
}

// Gradient through ReLU given its forward output.
__global__ void relu_backward(const float* out, const float* grad_out, float* grad_in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) grad_in[i] = out[i] > 0.0f ? grad_out[i] : 0.0f;
}

namespace nn {

// Images are stored column-major over (batch, pixel): element (b, y, x) at b + (y*width+x)*batch,
// the layout the BLAS-style matmuls of the model expect.
template <typename T, int K>
__global__ void conv2d_fwd(const T* in, const T* weight, T* out, int batch, int height, int width) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= batch * height * width) return;
  int b = i % batch, pixel = i / batch, y = pixel / width, x = pixel % width;
  T sum = 0;
  for (int dy = 0; dy < K; ++dy)
    for (int dx = 0; dx < K; ++dx) {
      int yy = y + dy - K / 2, xx = x + dx - K / 2;
      if (yy >= 0 && yy < height && xx >= 0 && xx < width)
        sum += weight[dy * K + dx] * in[b + (yy * width + xx) * batch];
    }
  out[i] = sum;
}

// Gradient of the K x K filter: every output element adds its share (grad must start at zero).
template <typename T, int K>
__global__ void conv2d_bwd_weight(const T* in, const T* grad_out, T* grad_weight, int batch,
                                  int height, int width) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= batch * height * width) return;
  int b = i % batch, pixel = i / batch, y = pixel / width, x = pixel % width;
  for (int dy = 0; dy < K; ++dy)
    for (int dx = 0; dx < K; ++dx) {
      int yy = y + dy - K / 2, xx = x + dx - K / 2;
      if (yy >= 0 && yy < height && xx >= 0 && xx < width)
        atomicAdd(&grad_weight[dy * K + dx], grad_out[i] * in[b + (yy * width + xx) * batch]);
    }
}

// out (cols x rows) = in (rows x cols)^T, both column-major.
template <typename T>
__global__ void transpose(const T* in, T* out, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows * cols) return;
  int r = i % rows, c = i / rows;
  out[c + r * cols] = in[i];
}

}  // namespace nn

namespace loss {

// Per sample: softmax over `classes` logits, its cross-entropy against the label, and the
// gradient of the mean loss with respect to the logits. Logits are column-major (batch x classes).
template <typename T>
__global__ void softmax_cross_entropy(const T* logits, const int* labels, T* sample_loss,
                                      T* grad_logits, int batch, int classes) {
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch) return;
  T max_logit = logits[b];
  for (int c = 1; c < classes; ++c) max_logit = fmaxf(max_logit, logits[b + c * batch]);
  T total = 0;
  for (int c = 0; c < classes; ++c) total += expf(logits[b + c * batch] - max_logit);
  for (int c = 0; c < classes; ++c) {
    T p = expf(logits[b + c * batch] - max_logit) / total;
    grad_logits[b + c * batch] = (p - (c == labels[b] ? T(1) : T(0))) / batch;
  }
  sample_loss[b] = logf(total) + max_logit - logits[b + labels[b] * batch];
}

// One block of BLOCK threads averages n values into *mean.
template <typename T, int BLOCK>
__global__ void mean_reduce(const T* values, T* mean, int n) {
  __shared__ T partial[BLOCK];
  T sum = 0;
  for (int i = threadIdx.x; i < n; i += BLOCK) sum += values[i];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) *mean = partial[0] / n;
}

}  // namespace loss

namespace optim {

// The optimizer's step counter lives on the device so a captured CUDA graph can replay the
// whole optimizer step without new kernel arguments.
__global__ void advance_step(int* step) { *step += 1; }

template <typename T>
__global__ void adam_step(T* param, const T* grad, T* m, T* v, int n, T lr, const int* step) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const T beta1 = T(0.9), beta2 = T(0.999), eps = T(1e-8);
  m[i] = beta1 * m[i] + (1 - beta1) * grad[i];
  v[i] = beta2 * v[i] + (1 - beta2) * grad[i] * grad[i];
  T m_hat = m[i] / (1 - powf(beta1, *step)), v_hat = v[i] / (1 - powf(beta2, *step));
  param[i] -= lr * m_hat / (sqrtf(v_hat) + eps);
}

}  // namespace optim
