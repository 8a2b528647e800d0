// The framework's C API (frameworksim.h): tensors in device memory, one stream and context,
// and operators dispatched to the vendor or to the framework's own fallback.
#include <cuda_runtime_api.h>

#include <initializer_list>

#include "diopi_sim/sim_tensor.h"
#include "frameworksim.h"
#include "fw_dispatch.h"

using frameworksim::vendor_ops;
using frameworksim::vendor_result;

namespace {

diopiContext g_context{nullptr};
diopiContextHandle_t ctx() { return &g_context; }

diopiTensorHandle_t T(fw_tensor_t tensor) { return static_cast<diopiTensorHandle_t>(tensor); }

int64_t element_size(diopiDtype_t dtype) {
  switch (dtype) {
    case diopi_dtype_int64: case diopi_dtype_float64: return 8;
    case diopi_dtype_int32: case diopi_dtype_float32: return 4;
    case diopi_dtype_int16: case diopi_dtype_float16: case diopi_dtype_bfloat16: return 2;
    default: return 1;
  }
}

int64_t bytes_of(diopiConstTensorHandle_t t) { return t->numel * element_size(t->dtype); }

// The framework's own implementation of an operator the vendor lacks or refuses: a generic
// device routine (here: the outputs are cleared on the framework's stream).
int fallback(std::initializer_list<diopiTensorHandle_t> outputs) {
  frameworksim::count_fallback();
  for (diopiTensorHandle_t out : outputs) {
    if (out == nullptr) continue;
    const cudaError_t error = cudaMemsetAsync(out->data, 0, size_t(bytes_of(out)),
                                              static_cast<cudaStream_t>(g_context.stream));
    if (error != cudaSuccess) return diopiLaunchFailed;
  }
  return diopiSuccess;
}

diopiSize_t square(const int64_t (&pair)[2]) { return diopiSize_t{pair, 2}; }

}  // namespace

// Runs the vendor operator when the framework registered it at load time and the vendor
// accepts the call; otherwise the fallback over the listed outputs.
#define FW_OP(available, call, ...)                  \
  do {                                               \
    if (available) {                                 \
      const int result_ = vendor_result(call);       \
      if (result_ >= 0) return result_;              \
    }                                                \
    return fallback({__VA_ARGS__});                  \
  } while (0)

extern "C" {

int fw_init(void) {
  if (g_context.stream != nullptr) return 0;
  cudaStream_t stream = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return diopiStreamError;
  g_context.stream = stream;
  return 0;
}

fw_tensor_t fw_tensor(int ndim, const int64_t* shape, int dtype) {
  if (ndim < 0 || ndim > DIOPI_MAX_DIMS || (ndim > 0 && shape == nullptr)) return nullptr;
  auto* t = new diopiTensor{};
  t->ndim = ndim;
  t->dtype = diopiDtype_t(dtype);
  t->numel = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    t->shape[i] = shape[i];
    t->stride[i] = t->numel;
    t->numel *= shape[i];
  }
  if (cudaMalloc(&t->data, size_t(bytes_of(t))) != cudaSuccess ||
      cudaMemset(t->data, 0, size_t(bytes_of(t))) != cudaSuccess) {
    delete t;
    return nullptr;
  }
  return t;
}

void fw_tensor_free(fw_tensor_t tensor) {
  if (tensor == nullptr) return;
  cudaFree(T(tensor)->data);
  delete T(tensor);
}

int fw_upload(fw_tensor_t tensor, const void* host, int64_t bytes) {
  if (tensor == nullptr || bytes > bytes_of(T(tensor))) return diopiInvalidArgument;
  return cudaMemcpyAsync(T(tensor)->data, host, size_t(bytes), cudaMemcpyHostToDevice,
                         static_cast<cudaStream_t>(g_context.stream)) == cudaSuccess ? 0 : diopiLaunchFailed;
}

int fw_download(fw_tensor_t tensor, void* host, int64_t bytes) {
  if (tensor == nullptr || bytes > bytes_of(T(tensor))) return diopiInvalidArgument;
  const auto stream = static_cast<cudaStream_t>(g_context.stream);
  if (cudaMemcpyAsync(host, T(tensor)->data, size_t(bytes), cudaMemcpyDeviceToHost, stream) != cudaSuccess) {
    return diopiLaunchFailed;
  }
  return cudaStreamSynchronize(stream) == cudaSuccess ? 0 : diopiStreamError;
}

int fw_sync(void) {
  return cudaStreamSynchronize(static_cast<cudaStream_t>(g_context.stream)) == cudaSuccess ? 0 : diopiStreamError;
}

int fw_conv2d(fw_tensor_t out, fw_tensor_t input, fw_tensor_t weight, fw_tensor_t bias, int stride,
              int padding) {
  const int64_t s[2] = {stride, stride}, p[2] = {padding, padding}, d[2] = {1, 1};
  FW_OP(vendor_ops().convolution2d,
        diopiConvolution2d(ctx(), T(out), T(input), T(weight), T(bias), square(s), square(p), square(d), 1),
        T(out));
}

int fw_conv2d_backward(fw_tensor_t grad_input, fw_tensor_t grad_weight, fw_tensor_t grad_bias,
                       fw_tensor_t grad_output, fw_tensor_t input, fw_tensor_t weight, int stride,
                       int padding) {
  const int64_t s[2] = {stride, stride}, p[2] = {padding, padding}, d[2] = {1, 1};
  FW_OP(vendor_ops().convolution2d_backward,
        diopiConvolution2dBackward(ctx(), T(grad_input), T(grad_weight), T(grad_bias), T(grad_output),
                                   T(input), T(weight), nullptr, square(s), square(p), square(d), 1),
        T(grad_input), T(grad_weight), T(grad_bias));
}

int fw_batch_norm(fw_tensor_t out, fw_tensor_t save_mean, fw_tensor_t save_invstd, fw_tensor_t input,
                  fw_tensor_t weight, fw_tensor_t bias, fw_tensor_t running_mean,
                  fw_tensor_t running_var, int training) {
  FW_OP(vendor_ops().batch_norm,
        diopiBatchNorm(ctx(), T(out), T(save_mean), T(save_invstd), T(input), T(weight), T(bias),
                       T(running_mean), T(running_var), training != 0, 0.1, 1e-5),
        T(out), T(save_mean), T(save_invstd));
}

int fw_batch_norm_backward(fw_tensor_t grad_input, fw_tensor_t grad_weight, fw_tensor_t grad_bias,
                           fw_tensor_t grad_output, fw_tensor_t input, fw_tensor_t weight,
                           fw_tensor_t save_mean, fw_tensor_t save_invstd) {
  FW_OP(vendor_ops().batch_norm_backward,
        diopiBatchNormBackward(ctx(), T(grad_input), T(grad_weight), T(grad_bias), T(grad_output),
                               T(input), T(weight), nullptr, nullptr, T(save_mean), T(save_invstd),
                               true, 1e-5),
        T(grad_input), T(grad_weight), T(grad_bias));
}

int fw_relu(fw_tensor_t out, fw_tensor_t input) {
  FW_OP(vendor_ops().relu, diopiRelu(ctx(), T(out), T(input)), T(out));
}

int fw_relu_backward(fw_tensor_t grad_input, fw_tensor_t grad_output, fw_tensor_t input) {
  diopiScalar_t zero{};
  zero.stype = diopi_dtype_float64;
  zero.fval = 0.0;
  FW_OP(vendor_ops().threshold_backward,
        diopiThresholdBackward(ctx(), T(grad_input), T(grad_output), T(input), &zero), T(grad_input));
}

int fw_linear(fw_tensor_t out, fw_tensor_t input, fw_tensor_t weight, fw_tensor_t bias) {
  FW_OP(vendor_ops().linear, diopiLinear(ctx(), T(out), T(input), T(weight), T(bias)), T(out));
}

int fw_linear_backward(fw_tensor_t grad_input, fw_tensor_t grad_weight, fw_tensor_t grad_bias,
                       fw_tensor_t grad_output, fw_tensor_t input, fw_tensor_t weight) {
  FW_OP(vendor_ops().linear_backward,
        diopiLinearBackward(ctx(), T(grad_input), T(grad_weight), T(grad_bias), T(grad_output),
                            T(input), T(weight)),
        T(grad_input), T(grad_weight), T(grad_bias));
}

int fw_matmul(fw_tensor_t out, fw_tensor_t input, fw_tensor_t other) {
  FW_OP(vendor_ops().matmul, diopiMatmul(ctx(), T(out), T(input), T(other)), T(out));
}

int fw_cross_entropy(fw_tensor_t loss, fw_tensor_t logits, fw_tensor_t target) {
  FW_OP(vendor_ops().cross_entropy,
        diopiCrossEntropyLoss(ctx(), T(loss), T(logits), T(target), nullptr, ReductionMean, -100, 0.0),
        T(loss));
}

int fw_cross_entropy_backward(fw_tensor_t grad_logits, fw_tensor_t grad_loss, fw_tensor_t logits,
                              fw_tensor_t target) {
  FW_OP(vendor_ops().cross_entropy_backward,
        diopiCrossEntropyLossBackward(ctx(), T(grad_logits), T(grad_loss), T(logits), T(target), nullptr,
                                      ReductionMean, -100, 0.0),
        T(grad_logits));
}

int fw_add(fw_tensor_t out, fw_tensor_t input, fw_tensor_t other, double alpha) {
  diopiScalar_t scalar{};
  scalar.stype = diopi_dtype_float64;
  scalar.fval = alpha;
  FW_OP(vendor_ops().add, diopiAdd(ctx(), T(out), T(input), T(other), &scalar), T(out));
}

int fw_fill(fw_tensor_t tensor, double value) {
  diopiScalar_t scalar{};
  scalar.stype = diopi_dtype_float64;
  scalar.fval = value;
  FW_OP(vendor_ops().fill, diopiFill(ctx(), T(tensor), &scalar), T(tensor));
}

int fw_copy(fw_tensor_t dest, fw_tensor_t src) {
  FW_OP(vendor_ops().copy, diopiCopyInp(ctx(), T(src), T(dest)), T(dest));
}

int fw_softmax(fw_tensor_t out, fw_tensor_t input, int64_t dim) {
  FW_OP(vendor_ops().softmax, diopiSoftmax(ctx(), T(out), T(input), dim), T(out));
}

int fw_adamw(fw_tensor_t param, fw_tensor_t grad, fw_tensor_t exp_avg, fw_tensor_t exp_avg_sq,
             float lr, int64_t step) {
  FW_OP(vendor_ops().adamw,
        diopiAdamW(ctx(), T(param), T(grad), T(exp_avg), T(exp_avg_sq), nullptr, lr, 0.9f, 0.999f,
                   1e-8f, 0.01f, step, false),
        T(param));
}

int fw_sgd(fw_tensor_t w, fw_tensor_t dw, fw_tensor_t buf, double lr, double momentum) {
  FW_OP(vendor_ops().sgd, diopiSgd(ctx(), T(w), T(dw), T(buf), lr, momentum, 0.0, 0.0, false), T(w));
}

const char* fw_implemented_ops(void) { return frameworksim::implemented_ops().c_str(); }

int64_t fw_fallback_calls(void) { return frameworksim::fallback_calls(); }

}  // extern "C"
