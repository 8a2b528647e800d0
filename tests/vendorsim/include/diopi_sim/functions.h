/* diopi_sim/functions.h — operator declarations of the DIOPI-style test interface.
 *
 * Every operator returns diopiError_t and takes the context first. The declarations are
 * deliberately written in every style a real header has — line breaks inside parameter lists,
 * comments between parameters, unnamed parameters, `const` in odd places, arrays, macros — so
 * that scripts/gen_diopi_wrappers.py has real work to do. Not every declared operator is
 * implemented by the vendor library: the unimplemented ones stay null (weak references).
 */
#ifndef DIOPI_SIM_FUNCTIONS_H_
#define DIOPI_SIM_FUNCTIONS_H_

#include "diopi_sim/diopirt.h"

#if defined(__cplusplus)
extern "C" {
#endif

/* Info functions: not operators (no context argument, no diopiError_t), never wrapped. */
DIOPI_API const char* diopiGetVendorName(void);
DIOPI_API const char* diopiGetImplVersion(void);
DIOPI_API const char* diopiGetLastErrorString(void);

/**
 * \brief 2-D convolution, NCHW. `stride`, `padding` and `dilation` are size lists passed by
 * value; `bias` may be null.
 * DIOPI_API diopiError_t diopiCommentedOut(diopiContextHandle_t ctx);  <- inside a comment
 */
DIOPI_API diopiError_t diopiConvolution2d(diopiContextHandle_t ctx, diopiTensorHandle_t out,
                                          diopiConstTensorHandle_t input,
                                          diopiConstTensorHandle_t weight,
                                          diopiConstTensorHandle_t bias, diopiSize_t stride,
                                          diopiSize_t padding, diopiSize_t dilation,
                                          int64_t groups);

DIOPI_API diopiError_t diopiConvolution2dBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiTensorHandle_t grad_weight,
    diopiTensorHandle_t grad_bias, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, diopiConstTensorHandle_t weight,
    diopiSize_t* bias_sizes, /* out-pointer, may be null */
    diopiSize_t stride, diopiSize_t padding, diopiSize_t dilation, int64_t groups);

DIOPI_API diopiError_t diopiBatchNorm(diopiContextHandle_t ctx, diopiTensorHandle_t out,
                                      diopiTensorHandle_t save_mean,
                                      diopiTensorHandle_t save_invstd,
                                      diopiConstTensorHandle_t input,
                                      diopiConstTensorHandle_t weight,
                                      diopiConstTensorHandle_t bias,
                                      diopiTensorHandle_t running_mean,
                                      diopiTensorHandle_t running_var, bool training,
                                      double momentum, double eps);

DIOPI_API diopiError_t diopiBatchNormBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiTensorHandle_t grad_weight,
    diopiTensorHandle_t grad_bias, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, diopiConstTensorHandle_t weight,
    diopiConstTensorHandle_t running_mean, diopiConstTensorHandle_t running_var,
    diopiConstTensorHandle_t save_mean, diopiConstTensorHandle_t save_invstd, bool training,
    double eps);

DIOPI_API diopiError_t diopiRelu(diopiContextHandle_t ctx, diopiTensorHandle_t out,
                                 diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiReluInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);

DIOPI_API diopiError_t diopiThresholdBackward(diopiContextHandle_t ctx,
                                              diopiTensorHandle_t grad_input,
                                              diopiConstTensorHandle_t grad_output,
                                              diopiConstTensorHandle_t input,
                                              const diopiScalar_t* threshold);

/* out = input + alpha * other */
DIOPI_API diopiError_t diopiAdd(diopiContextHandle_t ctx, diopiTensorHandle_t out,
                                diopiConstTensorHandle_t input, diopiConstTensorHandle_t other,
                                const diopiScalar_t* alpha);

DIOPI_API diopiError_t diopiFill(diopiContextHandle_t ctx, diopiTensorHandle_t input,
                                 const diopiScalar_t* value);

DIOPI_API diopiError_t diopiCopyInp(diopiContextHandle_t ctx, diopiConstTensorHandle_t src,
                                    diopiTensorHandle_t dest);

/* Matrix products. diopiMm is the primitive; the others call it through its C symbol. */
DIOPI_API diopiError_t diopiMm(diopiContextHandle_t ctx, diopiTensorHandle_t out,
                               diopiConstTensorHandle_t input, diopiConstTensorHandle_t mat2);
DIOPI_API diopiError_t diopiMatmul(diopiContextHandle_t ctx, diopiTensorHandle_t out,
                                   diopiConstTensorHandle_t input,
                                   diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiLinear(diopiContextHandle_t ctx, diopiTensorHandle_t out,
                                   diopiConstTensorHandle_t input,
                                   diopiConstTensorHandle_t weight,
                                   diopiConstTensorHandle_t bias);
DIOPI_API diopiError_t diopiLinearBackward(diopiContextHandle_t ctx,
                                           diopiTensorHandle_t grad_input,
                                           diopiTensorHandle_t grad_weight,
                                           diopiTensorHandle_t grad_bias,
                                           diopiConstTensorHandle_t grad_output,
                                           diopiConstTensorHandle_t input,
                                           diopiConstTensorHandle_t weight);

DIOPI_API diopiError_t diopiCrossEntropyLoss(diopiContextHandle_t ctx, diopiTensorHandle_t out,
                                             diopiConstTensorHandle_t input,
                                             diopiConstTensorHandle_t target,
                                             diopiConstTensorHandle_t weight,
                                             diopiReduction_t reduction, int64_t ignore_index,
                                             double label_smoothing);
DIOPI_API diopiError_t diopiCrossEntropyLossBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input,
    diopiConstTensorHandle_t grad_output, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t target, diopiConstTensorHandle_t weight,
    diopiReduction_t reduction, int64_t ignore_index, double label_smoothing);

/* Optimizers: doubles for SGD, floats for AdamW (real headers mix both). */
DIOPI_API diopiError_t diopiSgd(diopiContextHandle_t ctx, diopiTensorHandle_t w,
                                diopiTensorHandle_t dw, diopiTensorHandle_t buf, double lr,
                                double momentum, double dampening, double weight_decay,
                                bool nesterov);
DIOPI_API diopiError_t diopiAdamW(diopiContextHandle_t ctx, diopiTensorHandle_t param,
                                  diopiConstTensorHandle_t grad, diopiTensorHandle_t exp_avg,
                                  diopiTensorHandle_t exp_avg_sq,
                                  diopiTensorHandle_t max_exp_avg_sq, float lr, float beta1,
                                  float beta2, float eps, float weight_decay, int64_t step,
                                  bool amsgrad);

/* Declared, not implemented by the vendor simulator: the framework falls back. */
DIOPI_API diopiError_t diopiSoftmax(diopiContextHandle_t ctx, diopiTensorHandle_t out,
                                    diopiConstTensorHandle_t input, int64_t dim);
DIOPI_API diopiError_t diopiGelu(diopiContextHandle_t ctx, diopiTensorHandle_t out,
                                 diopiConstTensorHandle_t input, const char* approximate);
DIOPI_API diopiError_t diopiMaxPool2d(diopiContextHandle_t ctx, diopiTensorHandle_t out,
                                      diopiConstTensorHandle_t input, diopiSize_t kernel_size,
                                      diopiSize_t stride, diopiSize_t padding,
                                      diopiSize_t dilation, bool ceil_mode);
DIOPI_API diopiError_t diopiDropout(diopiContextHandle_t ctx, diopiTensorHandle_t out,
                                    diopiTensorHandle_t mask, diopiConstTensorHandle_t input,
                                    double p, bool train, diopiGeneratorHandle_t generator);

/* Pointer array with its count; unnamed parameters. */
DIOPI_API diopiError_t diopiCat(diopiContextHandle_t, diopiTensorHandle_t,
                                diopiConstTensorHandle_t*, int64_t, int64_t);

/* 25 parameters: 152 bytes of them go on the stack on x86-64. */
DIOPI_API diopiError_t diopiModulatedDeformConvBackwardMmcv(
    diopiContextHandle_t ctx, diopiConstTensorHandle_t input, diopiConstTensorHandle_t weight,
    diopiConstTensorHandle_t bias, diopiConstTensorHandle_t ones,
    diopiConstTensorHandle_t offset, diopiConstTensorHandle_t mask,
    diopiTensorHandle_t columns, diopiTensorHandle_t grad_input,
    diopiTensorHandle_t grad_weight, diopiTensorHandle_t grad_bias,
    diopiTensorHandle_t grad_offset, diopiTensorHandle_t grad_mask,
    diopiConstTensorHandle_t grad_output, int64_t kernel_h, int64_t kernel_w,
    int64_t stride_h, int64_t stride_w, int64_t pad_h, int64_t pad_w, int64_t dilation_h,
    int64_t dilation_w, int64_t group, int64_t deformable_group, const bool with_bias);

/* A probe for ABI tests: five by-value size lists interleaved with floats, doubles, ints and
 * strings, so that registers run out and whole structs go to the stack. */
DIOPI_API diopiError_t diopiSimArgProbe(diopiContextHandle_t ctx, diopiSize_t a, float f1,
                                        int64_t i1, double d1, diopiSize_t b,
                                        const bool flag, float f2, diopiSize_t c,
                                        const char* text, double d2, int32_t i32,
                                        diopiSize_t d, float f3, diopiSize_t e,
                                        const int64_t i2, double d3, float f4,
                                        const diopiScalar_t* scalar, diopiReduction_t reduction,
                                        uint8_t small, double d4, diopiTensorHandle_t out,
                                        diopiConstTensorHandle_t input, int64_t dims[]);

/* Unparseable on purpose (a function-pointer parameter, a macro-built parameter): the
 * generator must report and skip them, never guess. */
DIOPI_API diopiError_t diopiSimRegisterHook(diopiContextHandle_t ctx, void (*hook)(int));
#define DIOPI_SIM_SIZE_ARG(name) diopiSize_t name
DIOPI_API diopiError_t diopiSimMacroArgs(diopiContextHandle_t ctx, DIOPI_SIM_SIZE_ARG(size));

#if defined(__cplusplus)
}
#endif

#endif /* DIOPI_SIM_FUNCTIONS_H_ */
