// Helpers of vendor_common.h and the vendor's info functions.
#include <map>
#include <mutex>

#include "vendor_common.h"

namespace vendorsim {

// The runtime functions are weak references: a framework that exports none leaves them null,
// and the vendor falls back to the tensor layout both libraries share.
Shape shape_of(diopiConstTensorHandle_t tensor) {
  diopiSize_t size{nullptr, 0};
  if (diopiGetTensorShape != nullptr) {
    if (diopiGetTensorShape(tensor, &size) != diopiSuccess) return {};
    return {size.data, size.len};
  }
  return {tensor->shape, tensor->ndim};
}

diopiDtype_t dtype_of(diopiConstTensorHandle_t tensor) {
  diopiDtype_t dtype = diopi_dtype_float32;
  if (diopiGetTensorDtype == nullptr) return tensor->dtype;
  return diopiGetTensorDtype(tensor, &dtype) == diopiSuccess ? dtype : diopi_dtype_bool;
}

int64_t numel_of(diopiConstTensorHandle_t tensor) {
  int64_t numel = 0;
  if (diopiGetTensorNumel == nullptr) return tensor->numel;
  return diopiGetTensorNumel(tensor, &numel) == diopiSuccess ? numel : 0;
}

float* data_of(diopiTensorHandle_t tensor) {
  void* data = nullptr;
  if (diopiGetTensorData == nullptr) return static_cast<float*>(tensor->data);
  diopiGetTensorData(tensor, &data);
  return static_cast<float*>(data);
}

const float* data_of(diopiConstTensorHandle_t tensor) {
  const void* data = nullptr;
  if (diopiGetTensorDataConst == nullptr) return static_cast<const float*>(tensor->data);
  diopiGetTensorDataConst(tensor, &data);
  return static_cast<const float*>(data);
}

cudaStream_t stream_of(diopiContextHandle_t ctx) {
  diopiStreamHandle_t stream = nullptr;
  if (diopiGetStream == nullptr) return static_cast<cudaStream_t>(ctx->stream);
  diopiGetStream(ctx, &stream);
  return static_cast<cudaStream_t>(stream);
}

bool is_float(diopiConstTensorHandle_t tensor) {
  return tensor != nullptr && dtype_of(tensor) == diopi_dtype_float32;
}

bool same_shape(diopiConstTensorHandle_t a, diopiConstTensorHandle_t b) {
  const Shape x = shape_of(a), y = shape_of(b);
  if (x.rank != y.rank) return false;
  for (int64_t i = 0; i < x.rank; ++i) {
    if (x[i] != y[i]) return false;
  }
  return true;
}

double scalar_value(const diopiScalar_t* scalar, double fallback) {
  if (scalar == nullptr) return fallback;
  const bool floating = scalar->stype == diopi_dtype_float32 || scalar->stype == diopi_dtype_float64;
  return floating ? scalar->fval : double(scalar->ival);
}

diopiError_t launch_status(cudaError_t error) {
  return error == cudaSuccess ? diopiSuccess : diopiLaunchFailed;
}

float* scratch(int slot, int64_t floats) {
  static std::mutex mutex;
  static std::map<int, std::pair<float*, int64_t>> buffers;
  std::lock_guard<std::mutex> lock(mutex);
  auto& buffer = buffers[slot];
  if (buffer.second < floats) {
    if (buffer.first != nullptr) cudaFree(buffer.first);
    buffer.first = nullptr;
    if (cudaMalloc(&buffer.first, size_t(floats) * sizeof(float)) != cudaSuccess) return nullptr;
    buffer.second = floats;
  }
  return buffer.first;
}

}  // namespace vendorsim

VENDOR_API const char* diopiGetVendorName(void) { return "vendorsim"; }
VENDOR_API const char* diopiGetImplVersion(void) { return "vendorsim 1.0 (profagent tests)"; }
VENDOR_API const char* diopiGetLastErrorString(void) { return ""; }
