/* diopi_sim/diopirt.h — the runtime half of a DIOPI-style C interface, written for profagent's
 * tests (no DIOPI file was copied). Types shared by framework and vendor, and the runtime
 * functions the FRAMEWORK implements and the VENDOR calls (tensor shape, dtype, data, stream).
 *
 * Operators (functions.h) are declared DIOPI_API, i.e. weak: a framework checks their
 * addresses for null to pick the vendor operator or its own fallback. Runtime functions are
 * weak too here, so a vendor library still loads beside a framework that does not export them.
 */
#ifndef DIOPI_SIM_DIOPIRT_H_
#define DIOPI_SIM_DIOPIRT_H_

#include <stdbool.h>
#include <stdint.h>

/* Default visibility: the libraries that define these are built with -fvisibility=hidden. */
#define DIOPI_ATTR_WEAK __attribute__((weak, visibility("default")))
#define DIOPI_API DIOPI_ATTR_WEAK
#define DIOPI_RT_API DIOPI_ATTR_WEAK
#define DIOPI_MAX_DIMS 8 /* tensors of higher rank are refused by the framework */

#if defined(__cplusplus)
extern "C" {
#endif

typedef enum {
  diopiSuccess = 0,
  diopiErrorOccurred = 1,
  diopiNotInited = 2,
  diopiNullPointer = 3,
  diopiInvalidShape = 4,
  diopiInvalidDtype = 5,
  diopiInvalidArgument = 6,
  diopiDeviceMismatch = 7,
  diopiLaunchFailed = 8,
  diopiOutOfMemory = 9,
  diopiStreamError = 10,
  diopiRuntimeMissing = 11,
  diopiShapeMismatch = 12,
  diopiNoImplement = 13,        /* the vendor declares but does not implement this case */
  diopiForceFallbackToCPU = 14, /* ask the framework to run its own fallback */
} diopiError_t;

typedef enum {
  diopi_dtype_int8 = 0,
  diopi_dtype_uint8 = 1,
  diopi_dtype_int16 = 2,
  diopi_dtype_int32 = 3,
  diopi_dtype_int64 = 4,
  diopi_dtype_float16 = 5,
  diopi_dtype_float32 = 6,
  diopi_dtype_float64 = 7,
  diopi_dtype_bool = 8,
  diopi_dtype_bfloat16 = 9,
} diopiDtype_t;

typedef enum { diopi_host = 0, diopi_device = 1 } diopiDevice_t;

typedef enum {
  ReductionNone = 0,
  ReductionMean = 1,
  ReductionSum = 2,
} diopiReduction_t;

/* Opaque handles. The framework defines the structs; the vendor sees only pointers. */
struct diopiContext;
struct diopiTensor;
struct diopiGenerator;
typedef struct diopiContext* diopiContextHandle_t;
typedef struct diopiTensor* diopiTensorHandle_t;
typedef const struct diopiTensor* diopiConstTensorHandle_t;
typedef struct diopiGenerator* diopiGeneratorHandle_t;
typedef void* diopiStreamHandle_t;

/* A list of sizes. Passed BY VALUE to operators (16 bytes: two INTEGER eightbytes on x86-64). */
typedef struct diopiSize {
  const int64_t* data;
  int64_t len;
} diopiSize_t;

/* A scalar argument; operators take it by const pointer, never by value. */
typedef struct diopiScalar {
  diopiDtype_t stype;
  union {
    double fval;
    int64_t ival;
  };
} diopiScalar_t;

/* ---- runtime functions: implemented by the framework ---------------------------------- */
DIOPI_RT_API const char* diopiGetVersion(void);
DIOPI_RT_API diopiError_t diopiGetTensorShape(diopiConstTensorHandle_t th, diopiSize_t* size);
DIOPI_RT_API diopiError_t diopiGetTensorStride(diopiConstTensorHandle_t th, diopiSize_t* stride);
DIOPI_RT_API diopiError_t diopiGetTensorDtype(diopiConstTensorHandle_t th, diopiDtype_t* dtype);
DIOPI_RT_API diopiError_t diopiGetTensorNumel(diopiConstTensorHandle_t th, int64_t* numel);
DIOPI_RT_API diopiError_t diopiGetTensorData(diopiTensorHandle_t th, void** data);
DIOPI_RT_API diopiError_t diopiGetTensorDataConst(diopiConstTensorHandle_t th, const void** data);
DIOPI_RT_API diopiError_t diopiGetStream(diopiContextHandle_t ctx, diopiStreamHandle_t* stream);
DIOPI_RT_API diopiError_t diopiRequireTensor(diopiContextHandle_t ctx, diopiTensorHandle_t* tensor,
                                             const diopiSize_t* size, const diopiSize_t* stride,
                                             const diopiDtype_t dtype, const diopiDevice_t device);
/* Vendor-side profiling hooks (the framework's profiler would open a range). */
DIOPI_RT_API diopiError_t diopiRecordStart(const char* record_name, void** record);
DIOPI_RT_API diopiError_t diopiRecordEnd(void** record);

#if defined(__cplusplus)
}
#endif

#endif /* DIOPI_SIM_DIOPIRT_H_ */
