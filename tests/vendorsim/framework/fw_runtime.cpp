// The DIOPI runtime functions, implemented by the framework and called by the vendor: tensor
// facts read from the framework's own tensor struct, no allocation (as DIPU's diopirt_impl).
// Left out of the "no runtime" build variant (libframeworksim_nort.so).
#include <cuda_runtime_api.h>

#include "diopi_sim/functions.h"
#include "diopi_sim/sim_tensor.h"

extern "C" {

const char* diopiGetVersion(void) { return "DIOPI-sim Version: 1.0.0"; }

diopiError_t diopiGetTensorShape(diopiConstTensorHandle_t th, diopiSize_t* size) {
  if (th == nullptr || size == nullptr) return diopiNullPointer;
  *size = diopiSize_t{th->shape, th->ndim};
  return diopiSuccess;
}

diopiError_t diopiGetTensorStride(diopiConstTensorHandle_t th, diopiSize_t* stride) {
  if (th == nullptr || stride == nullptr) return diopiNullPointer;
  *stride = diopiSize_t{th->stride, th->ndim};
  return diopiSuccess;
}

diopiError_t diopiGetTensorDtype(diopiConstTensorHandle_t th, diopiDtype_t* dtype) {
  if (th == nullptr || dtype == nullptr) return diopiNullPointer;
  *dtype = th->dtype;
  return diopiSuccess;
}

diopiError_t diopiGetTensorNumel(diopiConstTensorHandle_t th, int64_t* numel) {
  if (th == nullptr || numel == nullptr) return diopiNullPointer;
  *numel = th->numel;
  return diopiSuccess;
}

diopiError_t diopiGetTensorData(diopiTensorHandle_t th, void** data) {
  if (th == nullptr || data == nullptr) return diopiNullPointer;
  *data = th->data;
  return diopiSuccess;
}

diopiError_t diopiGetTensorDataConst(diopiConstTensorHandle_t th, const void** data) {
  if (th == nullptr || data == nullptr) return diopiNullPointer;
  *data = th->data;
  return diopiSuccess;
}

diopiError_t diopiGetStream(diopiContextHandle_t ctx, diopiStreamHandle_t* stream) {
  if (ctx == nullptr || stream == nullptr) return diopiNullPointer;
  *stream = ctx->stream;
  return diopiSuccess;
}

diopiError_t diopiRequireTensor(diopiContextHandle_t, diopiTensorHandle_t*, const diopiSize_t*,
                                const diopiSize_t*, const diopiDtype_t, const diopiDevice_t) {
  return diopiNoImplement;  // the simulated vendor keeps its own scratch memory
}

diopiError_t diopiRecordStart(const char*, void** record) {
  if (record != nullptr) *record = nullptr;
  return diopiSuccess;
}

diopiError_t diopiRecordEnd(void** record) { return diopiSuccess; }

}  // extern "C"
