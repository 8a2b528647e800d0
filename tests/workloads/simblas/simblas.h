// simblas: a tiny BLAS-like library that launches its kernels the way cuBLAS and cuDNN do —
// through the driver API (cuLaunchKernel on a CUfunction), never through the runtime's exported
// launch symbols. A profiler that only interposes cudaLaunchKernel never sees these launches;
// it must attribute them from the device side (CUPTI records with the driver call's correlation
// id and the enclosing external correlation id).
//
// Matrices are column-major, as in BLAS. Every call is asynchronous on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIMBLAS_API __attribute__((visibility("default")))

typedef enum simblasStatus {
  SIMBLAS_STATUS_SUCCESS = 0,
  SIMBLAS_STATUS_INVALID_VALUE = 1,  // a size or leading dimension is out of range
  SIMBLAS_STATUS_NOT_FOUND = 2,      // cudaGetFuncBySymbol could not give the kernel's CUfunction
  SIMBLAS_STATUS_LAUNCH_FAILED = 3,  // cuLaunchKernel returned an error
} simblasStatus_t;

// C = alpha * A * B + beta * C with A m x k (lda >= m), B k x n (ldb >= k), C m x n (ldc >= m).
SIMBLAS_API simblasStatus_t simblasSgemm(int m, int n, int k, float alpha, const float* A, int lda,
                                         const float* B, int ldb, float beta, float* C, int ldc,
                                         cudaStream_t stream);

// y = alpha * x + y over n elements.
SIMBLAS_API simblasStatus_t simblasSaxpy(int n, float alpha, const float* x, float* y,
                                         cudaStream_t stream);

// A workspace of `bytes` device bytes allocated at the driver level (cuMemAlloc), as cuBLAS and
// cuDNN allocate theirs: a profiler that only interposes cudaMalloc never sees it. The calling
// thread's context must be current (any runtime call made it so). LAUNCH_FAILED: the driver
// refused (simblasGetLastDriverError says why).
SIMBLAS_API simblasStatus_t simblasWorkspaceCreate(size_t bytes, void** workspace);
SIMBLAS_API simblasStatus_t simblasWorkspaceDestroy(void* workspace);

SIMBLAS_API const char* simblasGetStatusString(simblasStatus_t status);

// The CUresult of the last failed driver call in this library (0 if none), for diagnostics.
SIMBLAS_API int simblasGetLastDriverError(void);

#ifdef __cplusplus
}
#endif
