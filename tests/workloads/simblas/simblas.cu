// simblas kernels and their driver-level launch path (see simblas.h for why it exists).
//
// Each kernel's CUfunction comes from the runtime (cudaGetFuncBySymbol, which also makes the
// primary context current, as cuBLAS relies on) and is launched with cuLaunchKernel from
// libcuda.so.1. The library links against the toolkit's libcuda stub; at run time the real
// driver, or devsim's libcuda.so.1, provides the symbols.
#include "simblas.h"

#include <cuda.h>

#include <atomic>

namespace simblas::kernels {

// Shared-memory tiled SGEMM, column-major: each TILE x TILE block computes one tile of C.
template <int TILE>
__global__ void sgemm_tiled(int m, int n, int k, float alpha, const float* a, int lda,
                            const float* b, int ldb, float beta, float* c, int ldc) {
  __shared__ float a_tile[TILE][TILE];
  __shared__ float b_tile[TILE][TILE];
  int row = blockIdx.x * TILE + threadIdx.x;
  int col = blockIdx.y * TILE + threadIdx.y;
  float sum = 0.0f;
  for (int t = 0; t < k; t += TILE) {
    int a_col = t + threadIdx.y, b_row = t + threadIdx.x;
    a_tile[threadIdx.y][threadIdx.x] = (row < m && a_col < k) ? a[row + a_col * lda] : 0.0f;
    b_tile[threadIdx.y][threadIdx.x] = (b_row < k && col < n) ? b[b_row + col * ldb] : 0.0f;
    __syncthreads();
    for (int i = 0; i < TILE; ++i) sum += a_tile[i][threadIdx.x] * b_tile[threadIdx.y][i];
    __syncthreads();
  }
  if (row < m && col < n) c[row + col * ldc] = alpha * sum + beta * c[row + col * ldc];
}

}  // namespace simblas::kernels

// A C-linkage kernel, as some vendor libraries have: its name is not mangled.
extern "C" __global__ void simblas_saxpy_kernel(int n, float alpha, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = alpha * x[i] + y[i];
}

namespace simblas {
namespace {

constexpr int kGemmTile = 16;
constexpr int kSaxpyBlock = 256;

std::atomic<int> last_driver_error{0};

// Looks the CUfunction up once per kernel; a failed lookup is retried on the next call.
class DriverFunction {
 public:
  explicit DriverFunction(const void* host_stub) : host_stub_(host_stub) {}

  CUfunction get() {
    CUfunction cached = cached_.load(std::memory_order_acquire);
    if (cached != nullptr) return cached;
    cudaFunction_t function = nullptr;
    if (cudaGetFuncBySymbol(&function, host_stub_) != cudaSuccess) return nullptr;
    cached_.store(function, std::memory_order_release);
    return function;
  }

 private:
  const void* host_stub_;
  std::atomic<CUfunction> cached_{nullptr};
};

DriverFunction gemm_function{reinterpret_cast<const void*>(&kernels::sgemm_tiled<kGemmTile>)};
DriverFunction saxpy_function{reinterpret_cast<const void*>(&simblas_saxpy_kernel)};

simblasStatus_t launch(DriverFunction& kernel, dim3 grid, dim3 block, cudaStream_t stream,
                       void** params) {
  CUfunction function = kernel.get();
  if (function == nullptr) return SIMBLAS_STATUS_NOT_FOUND;
  CUresult result = cuLaunchKernel(function, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                   0, stream, params, nullptr);
  if (result == CUDA_SUCCESS) return SIMBLAS_STATUS_SUCCESS;
  last_driver_error.store(static_cast<int>(result), std::memory_order_relaxed);
  return SIMBLAS_STATUS_LAUNCH_FAILED;
}

unsigned blocks_for(int count, int per_block) {
  return static_cast<unsigned>((count + per_block - 1) / per_block);
}

}  // namespace
}  // namespace simblas

extern "C" {

simblasStatus_t simblasSgemm(int m, int n, int k, float alpha, const float* A, int lda,
                             const float* B, int ldb, float beta, float* C, int ldc,
                             cudaStream_t stream) {
  using namespace simblas;
  if (m <= 0 || n <= 0 || k <= 0 || lda < m || ldb < k || ldc < m) return SIMBLAS_STATUS_INVALID_VALUE;
  void* params[] = {&m, &n, &k, &alpha, &A, &lda, &B, &ldb, &beta, &C, &ldc};
  dim3 grid(blocks_for(m, kGemmTile), blocks_for(n, kGemmTile));
  return launch(gemm_function, grid, dim3(kGemmTile, kGemmTile), stream, params);
}

simblasStatus_t simblasSaxpy(int n, float alpha, const float* x, float* y, cudaStream_t stream) {
  using namespace simblas;
  if (n <= 0) return SIMBLAS_STATUS_INVALID_VALUE;
  void* params[] = {&n, &alpha, &x, &y};
  return launch(saxpy_function, dim3(blocks_for(n, kSaxpyBlock)), dim3(kSaxpyBlock), stream, params);
}

simblasStatus_t simblasWorkspaceCreate(size_t bytes, void** workspace) {
  if (workspace == nullptr || bytes == 0) return SIMBLAS_STATUS_INVALID_VALUE;
  CUdeviceptr pointer = 0;
  const CUresult result = cuMemAlloc(&pointer, bytes);
  if (result != CUDA_SUCCESS) {
    simblas::last_driver_error.store(int(result), std::memory_order_relaxed);
    return SIMBLAS_STATUS_LAUNCH_FAILED;
  }
  *workspace = reinterpret_cast<void*>(pointer);
  return SIMBLAS_STATUS_SUCCESS;
}

simblasStatus_t simblasWorkspaceDestroy(void* workspace) {
  const CUresult result = cuMemFree(reinterpret_cast<CUdeviceptr>(workspace));
  if (result == CUDA_SUCCESS) return SIMBLAS_STATUS_SUCCESS;
  simblas::last_driver_error.store(int(result), std::memory_order_relaxed);
  return SIMBLAS_STATUS_LAUNCH_FAILED;
}

const char* simblasGetStatusString(simblasStatus_t status) {
  switch (status) {
    case SIMBLAS_STATUS_SUCCESS: return "SIMBLAS_STATUS_SUCCESS";
    case SIMBLAS_STATUS_INVALID_VALUE: return "SIMBLAS_STATUS_INVALID_VALUE";
    case SIMBLAS_STATUS_NOT_FOUND: return "SIMBLAS_STATUS_NOT_FOUND";
    case SIMBLAS_STATUS_LAUNCH_FAILED: return "SIMBLAS_STATUS_LAUNCH_FAILED";
  }
  return "SIMBLAS_STATUS_UNKNOWN";
}

int simblasGetLastDriverError(void) {
  return simblas::last_driver_error.load(std::memory_order_relaxed);
}

}  // extern "C"
