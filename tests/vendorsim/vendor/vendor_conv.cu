// 2-D convolution (NCHW, float32, groups = 1), forward and backward, launched through the
// runtime (<<<>>> on the operator's stream).
#include "vendor_common.h"

using namespace vendorsim;

namespace {

struct ConvGeometry {
  int n, c, h, w, k, r, s, oh, ow, stride, pad;
};

__global__ void conv2d_forward(const float* in, const float* weight, const float* bias, float* out,
                               ConvGeometry g) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= g.n * g.k * g.oh * g.ow) return;
  const int x = i % g.ow, y = (i / g.ow) % g.oh, k = (i / (g.ow * g.oh)) % g.k, n = i / (g.ow * g.oh * g.k);
  float sum = bias != nullptr ? bias[k] : 0.0f;
  for (int c = 0; c < g.c; ++c)
    for (int dy = 0; dy < g.r; ++dy)
      for (int dx = 0; dx < g.s; ++dx) {
        const int yy = y * g.stride + dy - g.pad, xx = x * g.stride + dx - g.pad;
        if (yy >= 0 && yy < g.h && xx >= 0 && xx < g.w)
          sum += weight[((k * g.c + c) * g.r + dy) * g.s + dx] * in[((n * g.c + c) * g.h + yy) * g.w + xx];
      }
  out[i] = sum;
}

__global__ void conv2d_backward_weight(const float* in, const float* grad_out, float* grad_weight,
                                       ConvGeometry g) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= g.k * g.c * g.r * g.s) return;
  const int dx = i % g.s, dy = (i / g.s) % g.r, c = (i / (g.s * g.r)) % g.c, k = i / (g.s * g.r * g.c);
  float sum = 0.0f;
  for (int n = 0; n < g.n; ++n)
    for (int y = 0; y < g.oh; ++y)
      for (int x = 0; x < g.ow; ++x) {
        const int yy = y * g.stride + dy - g.pad, xx = x * g.stride + dx - g.pad;
        if (yy >= 0 && yy < g.h && xx >= 0 && xx < g.w)
          sum += grad_out[((n * g.k + k) * g.oh + y) * g.ow + x] * in[((n * g.c + c) * g.h + yy) * g.w + xx];
      }
  grad_weight[i] = sum;
}

__global__ void conv2d_backward_input(const float* grad_out, const float* weight, float* grad_in,
                                      ConvGeometry g) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= g.n * g.c * g.h * g.w) return;
  const int xx = i % g.w, yy = (i / g.w) % g.h, c = (i / (g.w * g.h)) % g.c, n = i / (g.w * g.h * g.c);
  float sum = 0.0f;
  for (int k = 0; k < g.k; ++k)
    for (int dy = 0; dy < g.r; ++dy)
      for (int dx = 0; dx < g.s; ++dx) {
        const int ys = yy + g.pad - dy, xs = xx + g.pad - dx;
        if (ys % g.stride || xs % g.stride) continue;
        const int y = ys / g.stride, x = xs / g.stride;
        if (y >= 0 && y < g.oh && x >= 0 && x < g.ow)
          sum += grad_out[((n * g.k + k) * g.oh + y) * g.ow + x] * weight[((k * g.c + c) * g.r + dy) * g.s + dx];
      }
  grad_in[i] = sum;
}

__global__ void channel_sum(const float* grad_out, float* grad_bias, int n, int k, int plane) {
  const int channel = blockIdx.x * blockDim.x + threadIdx.x;
  if (channel >= k) return;
  float sum = 0.0f;
  for (int b = 0; b < n; ++b)
    for (int p = 0; p < plane; ++p) sum += grad_out[(b * k + channel) * plane + p];
  grad_bias[channel] = sum;
}

bool uniform(diopiSize_t size, int64_t* value) {
  if (size.len < 1 || size.data == nullptr) return false;
  for (int64_t i = 1; i < size.len; ++i) {
    if (size.data[i] != size.data[0]) return false;
  }
  *value = size.data[0];
  return true;
}

// Validates the arguments and fills the geometry; any refusal is a DIOPI error.
diopiError_t geometry(diopiConstTensorHandle_t input, diopiConstTensorHandle_t weight,
                      diopiSize_t stride, diopiSize_t padding, diopiSize_t dilation,
                      int64_t groups, ConvGeometry& g) {
  VENDOR_REQUIRE(input != nullptr && weight != nullptr, diopiNullPointer);
  VENDOR_REQUIRE(is_float(input) && is_float(weight), diopiInvalidDtype);
  const Shape x = shape_of(input), wt = shape_of(weight);
  VENDOR_REQUIRE(x.rank == 4 && wt.rank == 4 && x[1] == wt[1], diopiInvalidShape);
  int64_t s = 0, p = 0, d = 0;
  VENDOR_REQUIRE(uniform(stride, &s) && uniform(padding, &p) && uniform(dilation, &d), diopiInvalidArgument);
  VENDOR_REQUIRE(groups == 1 && d == 1, diopiNoImplement);
  VENDOR_REQUIRE(s >= 1 && p >= 0, diopiInvalidArgument);
  g = {int(x[0]), int(x[1]), int(x[2]), int(x[3]), int(wt[0]), int(wt[2]), int(wt[3]), 0, 0, int(s), int(p)};
  g.oh = int((x[2] + 2 * p - wt[2]) / s + 1);
  g.ow = int((x[3] + 2 * p - wt[3]) / s + 1);
  VENDOR_REQUIRE(g.oh > 0 && g.ow > 0, diopiInvalidShape);
  return diopiSuccess;
}

bool output_matches(diopiConstTensorHandle_t out, const ConvGeometry& g) {
  const Shape o = shape_of(out);
  return o.rank == 4 && o[0] == g.n && o[1] == g.k && o[2] == g.oh && o[3] == g.ow;
}

}  // namespace

VENDOR_API diopiError_t diopiConvolution2d(diopiContextHandle_t ctx, diopiTensorHandle_t out,
                                           diopiConstTensorHandle_t input,
                                           diopiConstTensorHandle_t weight,
                                           diopiConstTensorHandle_t bias, diopiSize_t stride,
                                           diopiSize_t padding, diopiSize_t dilation,
                                           int64_t groups) {
  ConvGeometry g{};
  VENDOR_CALL(geometry(input, weight, stride, padding, dilation, groups, g));
  VENDOR_REQUIRE(out != nullptr && output_matches(out, g), diopiShapeMismatch);
  const int64_t n = int64_t(g.n) * g.k * g.oh * g.ow;
  conv2d_forward<<<blocks_for(n), 256, 0, stream_of(ctx)>>>(
      data_of(input), data_of(weight), bias != nullptr ? data_of(bias) : nullptr, data_of(out), g);
  return launch_status(cudaGetLastError());
}

VENDOR_API diopiError_t diopiConvolution2dBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiTensorHandle_t grad_weight,
    diopiTensorHandle_t grad_bias, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, diopiConstTensorHandle_t weight, diopiSize_t* bias_sizes,
    diopiSize_t stride, diopiSize_t padding, diopiSize_t dilation, int64_t groups) {
  ConvGeometry g{};
  VENDOR_CALL(geometry(input, weight, stride, padding, dilation, groups, g));
  VENDOR_REQUIRE(grad_output != nullptr && output_matches(grad_output, g), diopiShapeMismatch);
  cudaStream_t stream = stream_of(ctx);
  if (grad_weight != nullptr) {
    conv2d_backward_weight<<<blocks_for(int64_t(g.k) * g.c * g.r * g.s), 256, 0, stream>>>(
        data_of(input), data_of(grad_output), data_of(grad_weight), g);
  }
  if (grad_input != nullptr) {
    conv2d_backward_input<<<blocks_for(int64_t(g.n) * g.c * g.h * g.w), 256, 0, stream>>>(
        data_of(grad_output), data_of(weight), data_of(grad_input), g);
  }
  if (grad_bias != nullptr) {
    channel_sum<<<blocks_for(g.k, 64), 64, 0, stream>>>(data_of(grad_output), data_of(grad_bias),
                                                       g.n, g.k, g.oh * g.ow);
  }
  return launch_status(cudaGetLastError());
}
