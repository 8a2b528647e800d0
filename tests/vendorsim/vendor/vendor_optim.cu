// Optimizer steps: SGD (double hyper-parameters) and AdamW (float hyper-parameters), one
// kernel each, through the runtime.
#include "vendor_common.h"

using namespace vendorsim;

namespace {

__global__ void sgd_kernel(float* w, const float* dw, float* buf, float lr, float momentum,
                           float dampening, float weight_decay, bool nesterov, int64_t n) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float g = dw[i] + weight_decay * w[i];
  if (buf != nullptr && momentum != 0.0f) {
    buf[i] = momentum * buf[i] + (1.0f - dampening) * g;
    g = nesterov ? g + momentum * buf[i] : buf[i];
  }
  w[i] -= lr * g;
}

struct AdamHyper {
  float lr, beta1, beta2, eps, weight_decay, correction1, correction2;
};

__global__ void adamw_kernel(float* p, const float* g, float* m, float* v, float* v_max,
                             AdamHyper h, int64_t n) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  p[i] *= 1.0f - h.lr * h.weight_decay;
  m[i] = h.beta1 * m[i] + (1.0f - h.beta1) * g[i];
  v[i] = h.beta2 * v[i] + (1.0f - h.beta2) * g[i] * g[i];
  float second = v[i];
  if (v_max != nullptr) second = v_max[i] = fmaxf(v_max[i], v[i]);
  p[i] -= h.lr * (m[i] / h.correction1) / (sqrtf(second / h.correction2) + h.eps);
}

}  // namespace

VENDOR_API diopiError_t diopiSgd(diopiContextHandle_t ctx, diopiTensorHandle_t w,
                                 diopiTensorHandle_t dw, diopiTensorHandle_t buf, double lr,
                                 double momentum, double dampening, double weight_decay,
                                 bool nesterov) {
  VENDOR_REQUIRE(w != nullptr && dw != nullptr, diopiNullPointer);
  VENDOR_REQUIRE(same_shape(w, dw) && (buf == nullptr || same_shape(w, buf)), diopiShapeMismatch);
  VENDOR_REQUIRE(lr >= 0 && momentum >= 0, diopiInvalidArgument);
  const int64_t n = numel_of(w);
  sgd_kernel<<<blocks_for(n), 256, 0, stream_of(ctx)>>>(
      data_of(w), data_of(dw), buf != nullptr ? data_of(buf) : nullptr, float(lr), float(momentum),
      float(dampening), float(weight_decay), nesterov, n);
  return launch_status(cudaGetLastError());
}

VENDOR_API diopiError_t diopiAdamW(diopiContextHandle_t ctx, diopiTensorHandle_t param,
                                   diopiConstTensorHandle_t grad, diopiTensorHandle_t exp_avg,
                                   diopiTensorHandle_t exp_avg_sq,
                                   diopiTensorHandle_t max_exp_avg_sq, float lr, float beta1,
                                   float beta2, float eps, float weight_decay, int64_t step,
                                   bool amsgrad) {
  VENDOR_REQUIRE(param != nullptr && grad != nullptr && exp_avg != nullptr && exp_avg_sq != nullptr,
                 diopiNullPointer);
  VENDOR_REQUIRE(!amsgrad || max_exp_avg_sq != nullptr, diopiNullPointer);
  VENDOR_REQUIRE(same_shape(param, grad) && same_shape(param, exp_avg) && same_shape(param, exp_avg_sq),
                 diopiShapeMismatch);
  VENDOR_REQUIRE(step >= 1 && lr >= 0 && beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1 && eps > 0,
                 diopiInvalidArgument);
  const AdamHyper h{lr, beta1, beta2, eps, weight_decay, 1.0f - powf(beta1, float(step)),
                    1.0f - powf(beta2, float(step))};
  const int64_t n = numel_of(param);
  adamw_kernel<<<blocks_for(n), 256, 0, stream_of(ctx)>>>(
      data_of(param), data_of(grad), data_of(exp_avg), data_of(exp_avg_sq),
      amsgrad ? data_of(max_exp_avg_sq) : nullptr, h, n);
  return launch_status(cudaGetLastError());
}
