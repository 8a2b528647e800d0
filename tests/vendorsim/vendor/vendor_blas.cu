// Matrix products and the classification loss. diopiMm launches through libsimblas, i.e. the
// DRIVER API (cuLaunchKernel), as cuBLAS does; diopiMatmul, diopiLinear and
// diopiLinearBackward call diopiMm through its exported C symbol, so they nest operators.
#include "simblas.h"
#include "vendor_common.h"

using namespace vendorsim;

namespace {

__global__ void add_bias_rows(float* out, const float* bias, int rows, int cols) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * cols) out[i] += bias[i % cols];
}

__global__ void transpose_kernel(const float* in, float* out, int rows, int cols) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * cols) out[(i % cols) * rows + i / cols] = in[i];
}

__global__ void column_sum(const float* in, float* out, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float sum = 0.0f;
  for (int r = 0; r < rows; ++r) sum += in[r * cols + c];
  out[c] = sum;
}

__global__ void cross_entropy_forward(const float* logits, const int64_t* target, float* sample_loss,
                                      int batch, int classes) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch) return;
  float top = logits[b * classes];
  for (int c = 1; c < classes; ++c) top = fmaxf(top, logits[b * classes + c]);
  float total = 0.0f;
  for (int c = 0; c < classes; ++c) total += expf(logits[b * classes + c] - top);
  sample_loss[b] = logf(total) + top - logits[b * classes + int(target[b])];
}

__global__ void mean_of(const float* values, float* out, int n) {
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += values[i];
  out[0] = sum / float(n);
}

__global__ void cross_entropy_backward(const float* logits, const int64_t* target,
                                       const float* grad_loss, float* grad_logits, int batch,
                                       int classes) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch) return;
  float top = logits[b * classes];
  for (int c = 1; c < classes; ++c) top = fmaxf(top, logits[b * classes + c]);
  float total = 0.0f;
  for (int c = 0; c < classes; ++c) total += expf(logits[b * classes + c] - top);
  for (int c = 0; c < classes; ++c) {
    const float p = expf(logits[b * classes + c] - top) / total;
    grad_logits[b * classes + c] = (p - (c == int(target[b]) ? 1.0f : 0.0f)) * grad_loss[0] / float(batch);
  }
}

bool is_matrix(diopiConstTensorHandle_t t) { return t != nullptr && is_float(t) && shape_of(t).rank == 2; }

// A temporary 2-D tensor over vendor scratch memory (layout shared with the framework).
diopiTensor scratch_matrix(int slot, int64_t rows, int64_t cols) {
  diopiTensor t{};
  t.ndim = 2;
  t.shape[0] = rows;
  t.shape[1] = cols;
  t.stride[0] = cols;
  t.stride[1] = 1;
  t.dtype = diopi_dtype_float32;
  t.numel = rows * cols;
  t.data = scratch(slot, rows * cols);
  return t;
}

}  // namespace

// out[M,N] = input[M,K] x mat2[K,N], row-major: column-major C^T = B^T A^T for the BLAS.
VENDOR_API diopiError_t diopiMm(diopiContextHandle_t ctx, diopiTensorHandle_t out,
                                diopiConstTensorHandle_t input, diopiConstTensorHandle_t mat2) {
  VENDOR_REQUIRE(is_matrix(out) && is_matrix(input) && is_matrix(mat2), diopiInvalidArgument);
  const Shape a = shape_of(input), b = shape_of(mat2), c = shape_of(out);
  VENDOR_REQUIRE(a[1] == b[0] && c[0] == a[0] && c[1] == b[1], diopiShapeMismatch);
  const int m = int(a[0]), k = int(a[1]), n = int(b[1]);
  const simblasStatus_t status = simblasSgemm(n, m, k, 1.0f, data_of(mat2), n, data_of(input), k,
                                              0.0f, data_of(out), n, stream_of(ctx));
  return status == SIMBLAS_STATUS_SUCCESS ? diopiSuccess : diopiLaunchFailed;
}

VENDOR_API diopiError_t diopiMatmul(diopiContextHandle_t ctx, diopiTensorHandle_t out,
                                    diopiConstTensorHandle_t input,
                                    diopiConstTensorHandle_t other) {
  VENDOR_REQUIRE(is_matrix(input) && is_matrix(other), diopiNoImplement);  // batched: fall back
  return diopiMm(ctx, out, input, other);
}

// out[N,out] = input[N,in] x weight[in,out] + bias[out]  (weight stored input-major).
VENDOR_API diopiError_t diopiLinear(diopiContextHandle_t ctx, diopiTensorHandle_t out,
                                    diopiConstTensorHandle_t input,
                                    diopiConstTensorHandle_t weight,
                                    diopiConstTensorHandle_t bias) {
  VENDOR_CALL(diopiMm(ctx, out, input, weight));
  if (bias == nullptr) return diopiSuccess;
  const Shape o = shape_of(out);
  VENDOR_REQUIRE(is_float(bias) && numel_of(bias) == o[1], diopiShapeMismatch);
  add_bias_rows<<<blocks_for(o[0] * o[1]), 256, 0, stream_of(ctx)>>>(data_of(out), data_of(bias),
                                                                      int(o[0]), int(o[1]));
  return launch_status(cudaGetLastError());
}

VENDOR_API diopiError_t diopiLinearBackward(diopiContextHandle_t ctx,
                                            diopiTensorHandle_t grad_input,
                                            diopiTensorHandle_t grad_weight,
                                            diopiTensorHandle_t grad_bias,
                                            diopiConstTensorHandle_t grad_output,
                                            diopiConstTensorHandle_t input,
                                            diopiConstTensorHandle_t weight) {
  VENDOR_REQUIRE(is_matrix(grad_output) && is_matrix(input) && is_matrix(weight), diopiInvalidArgument);
  const Shape g = shape_of(grad_output), x = shape_of(input), w = shape_of(weight);
  VENDOR_REQUIRE(g[0] == x[0] && x[1] == w[0] && g[1] == w[1], diopiShapeMismatch);
  cudaStream_t stream = stream_of(ctx);
  if (grad_weight != nullptr) {  // grad_weight[in,out] = input^T x grad_output
    diopiTensor xt = scratch_matrix(0, x[1], x[0]);
    VENDOR_REQUIRE(xt.data != nullptr, diopiOutOfMemory);
    transpose_kernel<<<blocks_for(x[0] * x[1]), 256, 0, stream>>>(data_of(input), data_of(&xt), int(x[0]), int(x[1]));
    VENDOR_CALL(diopiMm(ctx, grad_weight, &xt, grad_output));
  }
  if (grad_input != nullptr) {  // grad_input[N,in] = grad_output x weight^T
    diopiTensor wt = scratch_matrix(1, w[1], w[0]);
    VENDOR_REQUIRE(wt.data != nullptr, diopiOutOfMemory);
    transpose_kernel<<<blocks_for(w[0] * w[1]), 256, 0, stream>>>(data_of(weight), data_of(&wt), int(w[0]), int(w[1]));
    VENDOR_CALL(diopiMm(ctx, grad_input, grad_output, &wt));
  }
  if (grad_bias != nullptr) {
    column_sum<<<blocks_for(g[1], 64), 64, 0, stream>>>(data_of(grad_output), data_of(grad_bias), int(g[0]), int(g[1]));
  }
  return launch_status(cudaGetLastError());
}

VENDOR_API diopiError_t diopiCrossEntropyLoss(diopiContextHandle_t ctx, diopiTensorHandle_t out,
                                              diopiConstTensorHandle_t input,
                                              diopiConstTensorHandle_t target,
                                              diopiConstTensorHandle_t weight,
                                              diopiReduction_t reduction, int64_t ignore_index,
                                              double label_smoothing) {
  VENDOR_REQUIRE(out != nullptr && is_matrix(input) && target != nullptr, diopiNullPointer);
  VENDOR_REQUIRE(dtype_of(target) == diopi_dtype_int64, diopiInvalidDtype);
  VENDOR_REQUIRE(reduction == ReductionMean && weight == nullptr && label_smoothing == 0.0, diopiNoImplement);
  const Shape x = shape_of(input);
  VENDOR_REQUIRE(numel_of(target) == x[0] && numel_of(out) == 1, diopiShapeMismatch);
  float* per_sample = scratch(2, x[0]);
  VENDOR_REQUIRE(per_sample != nullptr, diopiOutOfMemory);
  cudaStream_t stream = stream_of(ctx);
  cross_entropy_forward<<<blocks_for(x[0], 64), 64, 0, stream>>>(
      data_of(input), reinterpret_cast<const int64_t*>(data_of(target)), per_sample, int(x[0]), int(x[1]));
  mean_of<<<1, 1, 0, stream>>>(per_sample, data_of(out), int(x[0]));
  return launch_status(cudaGetLastError());
}

VENDOR_API diopiError_t diopiCrossEntropyLossBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, diopiConstTensorHandle_t target, diopiConstTensorHandle_t weight,
    diopiReduction_t reduction, int64_t ignore_index, double label_smoothing) {
  VENDOR_REQUIRE(grad_input != nullptr && grad_output != nullptr && is_matrix(input) && target != nullptr,
                 diopiNullPointer);
  VENDOR_REQUIRE(dtype_of(target) == diopi_dtype_int64, diopiInvalidDtype);
  VENDOR_REQUIRE(reduction == ReductionMean && weight == nullptr && label_smoothing == 0.0, diopiNoImplement);
  VENDOR_REQUIRE(same_shape(grad_input, input), diopiShapeMismatch);
  const Shape x = shape_of(input);
  cross_entropy_backward<<<blocks_for(x[0], 64), 64, 0, stream_of(ctx)>>>(
      data_of(input), reinterpret_cast<const int64_t*>(data_of(target)), data_of(grad_output),
      data_of(grad_input), int(x[0]), int(x[1]));
  return launch_status(cudaGetLastError());
}
