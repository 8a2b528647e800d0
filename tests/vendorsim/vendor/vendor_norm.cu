// Batch normalisation over NCHW float32 tensors (training and inference), forward and
// backward, through the runtime. Statistics per channel, one thread per channel.
#include "vendor_common.h"

using namespace vendorsim;

namespace {

struct NormGeometry {
  int n, c, plane;
};

__global__ void batch_norm_stats(const float* in, float* mean, float* invstd, float* running_mean,
                                 float* running_var, NormGeometry g, float momentum, float eps) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= g.c) return;
  float sum = 0.0f, squares = 0.0f;
  for (int b = 0; b < g.n; ++b)
    for (int p = 0; p < g.plane; ++p) {
      const float v = in[(b * g.c + c) * g.plane + p];
      sum += v;
      squares += v * v;
    }
  const float count = float(g.n * g.plane), mu = sum / count, var = squares / count - mu * mu;
  mean[c] = mu;
  invstd[c] = rsqrtf(var + eps);
  if (running_mean != nullptr) running_mean[c] = (1 - momentum) * running_mean[c] + momentum * mu;
  if (running_var != nullptr) running_var[c] = (1 - momentum) * running_var[c] + momentum * var;
}

__global__ void batch_norm_apply(const float* in, const float* mean, const float* invstd,
                                 const float* weight, const float* bias, float* out, NormGeometry g) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= g.n * g.c * g.plane) return;
  const int c = (i / g.plane) % g.c;
  const float scale = weight != nullptr ? weight[c] : 1.0f, shift = bias != nullptr ? bias[c] : 0.0f;
  out[i] = (in[i] - mean[c]) * invstd[c] * scale + shift;
}

__global__ void batch_norm_backward(const float* grad_out, const float* in, const float* mean,
                                    const float* invstd, const float* weight, float* grad_in,
                                    float* grad_weight, float* grad_bias, NormGeometry g) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= g.c) return;
  float dsum = 0.0f, dot = 0.0f;
  for (int b = 0; b < g.n; ++b)
    for (int p = 0; p < g.plane; ++p) {
      const int i = (b * g.c + c) * g.plane + p;
      dsum += grad_out[i];
      dot += grad_out[i] * (in[i] - mean[c]);
    }
  const float count = float(g.n * g.plane), scale = weight != nullptr ? weight[c] : 1.0f;
  if (grad_weight != nullptr) grad_weight[c] = dot * invstd[c];
  if (grad_bias != nullptr) grad_bias[c] = dsum;
  if (grad_in == nullptr) return;
  for (int b = 0; b < g.n; ++b)
    for (int p = 0; p < g.plane; ++p) {
      const int i = (b * g.c + c) * g.plane + p;
      const float centered = (in[i] - mean[c]) * invstd[c];
      grad_in[i] = scale * invstd[c] * (grad_out[i] - dsum / count - centered * dot * invstd[c] / count);
    }
}

diopiError_t geometry(diopiConstTensorHandle_t input, NormGeometry& g) {
  VENDOR_REQUIRE(input != nullptr, diopiNullPointer);
  VENDOR_REQUIRE(is_float(input), diopiInvalidDtype);
  const Shape x = shape_of(input);
  VENDOR_REQUIRE(x.rank >= 2, diopiInvalidShape);
  int64_t plane = 1;
  for (int64_t i = 2; i < x.rank; ++i) plane *= x[i];
  g = {int(x[0]), int(x[1]), int(plane)};
  return diopiSuccess;
}

bool per_channel(diopiConstTensorHandle_t t, const NormGeometry& g) {
  return t == nullptr || (shape_of(t).rank == 1 && shape_of(t)[0] == g.c && is_float(t));
}

template <typename T>
float* optional_data(T tensor) {
  return tensor != nullptr ? const_cast<float*>(data_of(tensor)) : nullptr;
}

}  // namespace

VENDOR_API diopiError_t diopiBatchNorm(diopiContextHandle_t ctx, diopiTensorHandle_t out,
                                       diopiTensorHandle_t save_mean,
                                       diopiTensorHandle_t save_invstd,
                                       diopiConstTensorHandle_t input,
                                       diopiConstTensorHandle_t weight,
                                       diopiConstTensorHandle_t bias,
                                       diopiTensorHandle_t running_mean,
                                       diopiTensorHandle_t running_var, bool training,
                                       double momentum, double eps) {
  NormGeometry g{};
  VENDOR_CALL(geometry(input, g));
  VENDOR_REQUIRE(out != nullptr && same_shape(out, input), diopiShapeMismatch);
  VENDOR_REQUIRE(save_mean != nullptr && save_invstd != nullptr, diopiNullPointer);
  VENDOR_REQUIRE(per_channel(weight, g) && per_channel(bias, g) && per_channel(save_mean, g) &&
                     per_channel(save_invstd, g) && per_channel(running_mean, g) &&
                     per_channel(running_var, g), diopiShapeMismatch);
  VENDOR_REQUIRE(training, diopiNoImplement);  // inference statistics: the framework falls back
  VENDOR_REQUIRE(eps > 0 && momentum >= 0 && momentum <= 1, diopiInvalidArgument);
  cudaStream_t stream = stream_of(ctx);
  batch_norm_stats<<<blocks_for(g.c, 64), 64, 0, stream>>>(
      data_of(input), data_of(save_mean), data_of(save_invstd), optional_data(running_mean),
      optional_data(running_var), g, float(momentum), float(eps));
  batch_norm_apply<<<blocks_for(int64_t(g.n) * g.c * g.plane), 256, 0, stream>>>(
      data_of(input), data_of(save_mean), data_of(save_invstd), optional_data(weight),
      optional_data(bias), data_of(out), g);
  return launch_status(cudaGetLastError());
}

VENDOR_API diopiError_t diopiBatchNormBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiTensorHandle_t grad_weight,
    diopiTensorHandle_t grad_bias, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, diopiConstTensorHandle_t weight,
    diopiConstTensorHandle_t running_mean, diopiConstTensorHandle_t running_var,
    diopiConstTensorHandle_t save_mean, diopiConstTensorHandle_t save_invstd, bool training,
    double eps) {
  NormGeometry g{};
  VENDOR_CALL(geometry(input, g));
  VENDOR_REQUIRE(grad_output != nullptr && same_shape(grad_output, input), diopiShapeMismatch);
  VENDOR_REQUIRE(save_mean != nullptr && save_invstd != nullptr, diopiNullPointer);
  VENDOR_REQUIRE(per_channel(save_mean, g) && per_channel(save_invstd, g), diopiShapeMismatch);
  batch_norm_backward<<<blocks_for(g.c, 64), 64, 0, stream_of(ctx)>>>(
      data_of(grad_output), data_of(input), data_of(save_mean), data_of(save_invstd),
      optional_data(weight), optional_data(grad_input), optional_data(grad_weight),
      optional_data(grad_bias), g);
  return launch_status(cudaGetLastError());
}
