/* frameworksim.h — the small C API of the simulated framework (libframeworksim.so), what a
 * Python extension module would be: train.py drives it through ctypes. Tensors are opaque
 * pointers; every function returns 0 or a diopiError_t code. Each operator goes to the vendor
 * library when the vendor defines the DIOPI function (decided once, when the framework is
 * loaded, from its weak references), else to the framework's own fallback. */
#ifndef FRAMEWORKSIM_H_
#define FRAMEWORKSIM_H_

#include <stdint.h>

#define FW_API __attribute__((visibility("default")))

#if defined(__cplusplus)
extern "C" {
#endif

typedef void* fw_tensor_t;

FW_API int fw_init(void);
FW_API fw_tensor_t fw_tensor(int ndim, const int64_t* shape, int dtype); /* zero-filled */
FW_API void fw_tensor_free(fw_tensor_t tensor);
FW_API int fw_upload(fw_tensor_t tensor, const void* host, int64_t bytes);
FW_API int fw_download(fw_tensor_t tensor, void* host, int64_t bytes);
FW_API int fw_sync(void);

FW_API int fw_conv2d(fw_tensor_t out, fw_tensor_t input, fw_tensor_t weight, fw_tensor_t bias,
                     int stride, int padding);
FW_API int fw_conv2d_backward(fw_tensor_t grad_input, fw_tensor_t grad_weight, fw_tensor_t grad_bias,
                              fw_tensor_t grad_output, fw_tensor_t input, fw_tensor_t weight,
                              int stride, int padding);
FW_API int fw_batch_norm(fw_tensor_t out, fw_tensor_t save_mean, fw_tensor_t save_invstd,
                         fw_tensor_t input, fw_tensor_t weight, fw_tensor_t bias,
                         fw_tensor_t running_mean, fw_tensor_t running_var, int training);
FW_API int fw_batch_norm_backward(fw_tensor_t grad_input, fw_tensor_t grad_weight,
                                  fw_tensor_t grad_bias, fw_tensor_t grad_output, fw_tensor_t input,
                                  fw_tensor_t weight, fw_tensor_t save_mean, fw_tensor_t save_invstd);
FW_API int fw_relu(fw_tensor_t out, fw_tensor_t input);
FW_API int fw_relu_backward(fw_tensor_t grad_input, fw_tensor_t grad_output, fw_tensor_t input);
FW_API int fw_linear(fw_tensor_t out, fw_tensor_t input, fw_tensor_t weight, fw_tensor_t bias);
FW_API int fw_linear_backward(fw_tensor_t grad_input, fw_tensor_t grad_weight, fw_tensor_t grad_bias,
                              fw_tensor_t grad_output, fw_tensor_t input, fw_tensor_t weight);
FW_API int fw_matmul(fw_tensor_t out, fw_tensor_t input, fw_tensor_t other);
FW_API int fw_cross_entropy(fw_tensor_t loss, fw_tensor_t logits, fw_tensor_t target);
FW_API int fw_cross_entropy_backward(fw_tensor_t grad_logits, fw_tensor_t grad_loss,
                                     fw_tensor_t logits, fw_tensor_t target);
FW_API int fw_add(fw_tensor_t out, fw_tensor_t input, fw_tensor_t other, double alpha);
FW_API int fw_fill(fw_tensor_t tensor, double value);
FW_API int fw_copy(fw_tensor_t dest, fw_tensor_t src); /* same element count, any shapes */
FW_API int fw_softmax(fw_tensor_t out, fw_tensor_t input, int64_t dim);
FW_API int fw_adamw(fw_tensor_t param, fw_tensor_t grad, fw_tensor_t exp_avg, fw_tensor_t exp_avg_sq,
                    float lr, int64_t step);
FW_API int fw_sgd(fw_tensor_t w, fw_tensor_t dw, fw_tensor_t buf, double lr, double momentum);

/* Comma-separated DIOPI operators the framework routes to the vendor (decided at load time). */
FW_API const char* fw_implemented_ops(void);
/* How many calls ran the framework's own fallback (unimplemented or refused by the vendor). */
FW_API int64_t fw_fallback_calls(void);

#if defined(__cplusplus)
}
#endif

#endif /* FRAMEWORKSIM_H_ */
