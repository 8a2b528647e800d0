// Element-wise operators: relu, its backward, add, fill and copy. Fill and copy use the
// runtime's memset and copy calls instead of kernels where they can.
#include <cstring>

#include "vendor_common.h"

using namespace vendorsim;

namespace {

__global__ void relu_kernel(const float* in, float* out, int64_t n) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
}

__global__ void threshold_backward_kernel(const float* grad_out, const float* in, float* grad_in,
                                          float threshold, int64_t n) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) grad_in[i] = in[i] > threshold ? grad_out[i] : 0.0f;
}

__global__ void add_kernel(const float* a, const float* b, float* out, float alpha, int64_t n) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = a[i] + alpha * b[i];
}

__global__ void fill_kernel(float* out, float value, int64_t n) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = value;
}

}  // namespace

VENDOR_API diopiError_t diopiRelu(diopiContextHandle_t ctx, diopiTensorHandle_t out,
                                  diopiConstTensorHandle_t input) {
  VENDOR_REQUIRE(out != nullptr && input != nullptr, diopiNullPointer);
  VENDOR_REQUIRE(is_float(input) && is_float(out), diopiInvalidDtype);
  VENDOR_REQUIRE(same_shape(out, input), diopiShapeMismatch);
  const int64_t n = numel_of(input);
  relu_kernel<<<blocks_for(n), 256, 0, stream_of(ctx)>>>(data_of(input), data_of(out), n);
  return launch_status(cudaGetLastError());
}

VENDOR_API diopiError_t diopiThresholdBackward(diopiContextHandle_t ctx,
                                               diopiTensorHandle_t grad_input,
                                               diopiConstTensorHandle_t grad_output,
                                               diopiConstTensorHandle_t input,
                                               const diopiScalar_t* threshold) {
  VENDOR_REQUIRE(grad_input != nullptr && grad_output != nullptr && input != nullptr, diopiNullPointer);
  VENDOR_REQUIRE(is_float(input) && is_float(grad_output), diopiInvalidDtype);
  VENDOR_REQUIRE(same_shape(grad_input, input) && same_shape(grad_output, input), diopiShapeMismatch);
  const int64_t n = numel_of(input);
  threshold_backward_kernel<<<blocks_for(n), 256, 0, stream_of(ctx)>>>(
      data_of(grad_output), data_of(input), data_of(grad_input), float(scalar_value(threshold, 0.0)), n);
  return launch_status(cudaGetLastError());
}

VENDOR_API diopiError_t diopiAdd(diopiContextHandle_t ctx, diopiTensorHandle_t out,
                                 diopiConstTensorHandle_t input, diopiConstTensorHandle_t other,
                                 const diopiScalar_t* alpha) {
  VENDOR_REQUIRE(out != nullptr && input != nullptr && other != nullptr, diopiNullPointer);
  VENDOR_REQUIRE(is_float(input) && is_float(other) && is_float(out), diopiInvalidDtype);
  VENDOR_REQUIRE(same_shape(input, other), diopiNoImplement);  // no broadcasting: fall back
  VENDOR_REQUIRE(same_shape(out, input), diopiShapeMismatch);
  const int64_t n = numel_of(input);
  add_kernel<<<blocks_for(n), 256, 0, stream_of(ctx)>>>(data_of(input), data_of(other), data_of(out),
                                                        float(scalar_value(alpha, 1.0)), n);
  return launch_status(cudaGetLastError());
}

VENDOR_API diopiError_t diopiFill(diopiContextHandle_t ctx, diopiTensorHandle_t input,
                                  const diopiScalar_t* value) {
  VENDOR_REQUIRE(input != nullptr && value != nullptr, diopiNullPointer);
  VENDOR_REQUIRE(is_float(input), diopiInvalidDtype);
  const int64_t n = numel_of(input);
  const float v = float(scalar_value(value, 0.0));
  if (v == 0.0f) {  // all-zero bytes: a memset, no kernel
    return launch_status(cudaMemsetAsync(data_of(input), 0, size_t(n) * sizeof(float), stream_of(ctx)));
  }
  fill_kernel<<<blocks_for(n), 256, 0, stream_of(ctx)>>>(data_of(input), v, n);
  return launch_status(cudaGetLastError());
}

VENDOR_API diopiError_t diopiCopyInp(diopiContextHandle_t ctx, diopiConstTensorHandle_t src,
                                     diopiTensorHandle_t dest) {
  VENDOR_REQUIRE(src != nullptr && dest != nullptr, diopiNullPointer);
  VENDOR_REQUIRE(dtype_of(src) == dtype_of(dest), diopiInvalidDtype);
  VENDOR_REQUIRE(numel_of(src) == numel_of(dest), diopiShapeMismatch);
  return launch_status(cudaMemcpyAsync(data_of(dest), data_of(src), size_t(numel_of(src)) * sizeof(float),
                                       cudaMemcpyDeviceToDevice, stream_of(ctx)));
}
