// Shared helpers of the vendor simulator (libvendorsim_diopi.so): tensor facts through the
// DIOPI runtime functions the framework exports (or, when it exports none, through the shared
// tensor layout), argument validation that returns DIOPI errors, and launch shapes.
#pragma once

#include <cuda_runtime.h>

#include "diopi_sim/functions.h"
#include "diopi_sim/sim_tensor.h"

#define VENDOR_API extern "C" __attribute__((visibility("default")))

// Returns `error` from the operator when `condition` does not hold.
#define VENDOR_REQUIRE(condition, error) \
  do {                                   \
    if (!(condition)) return (error);    \
  } while (0)

// Returns the error of a failed step (a DIOPI call, a launch) from the operator.
#define VENDOR_CALL(expression)                      \
  do {                                               \
    const diopiError_t vendor_status_ = (expression); \
    if (vendor_status_ != diopiSuccess) return vendor_status_; \
  } while (0)

namespace vendorsim {

struct Shape {
  const int64_t* dims = nullptr;
  int64_t rank = 0;
  int64_t operator[](int64_t i) const { return dims[i]; }
};

Shape shape_of(diopiConstTensorHandle_t tensor);
diopiDtype_t dtype_of(diopiConstTensorHandle_t tensor);
int64_t numel_of(diopiConstTensorHandle_t tensor);
float* data_of(diopiTensorHandle_t tensor);
const float* data_of(diopiConstTensorHandle_t tensor);
cudaStream_t stream_of(diopiContextHandle_t ctx);

// Every operator here computes in float32 on device tensors.
bool is_float(diopiConstTensorHandle_t tensor);
bool same_shape(diopiConstTensorHandle_t a, diopiConstTensorHandle_t b);
double scalar_value(const diopiScalar_t* scalar, double fallback);

// A launch's result as a DIOPI error (cudaGetLastError after <<<>>>, or a runtime call's).
diopiError_t launch_status(cudaError_t error);
inline unsigned blocks_for(int64_t n, unsigned threads = 256) {
  return unsigned((n + threads - 1) / threads);
}

// Device scratch memory owned by the vendor (grown, never shrunk; one per purpose).
float* scratch(int slot, int64_t floats);

}  // namespace vendorsim
