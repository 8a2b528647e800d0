// Of the kind of CUDA's streamOrderedAllocation sample: every iteration allocates its buffers
// with cudaMallocAsync, stages data through them and frees them with cudaFreeAsync on the same
// stream. With the default pool's release threshold raised, the pool reuses the freed blocks:
// its reserved memory stays at one iteration's footprint however many iterations run. Then the
// same with a pool the program creates (cudaMallocFromPoolAsync), trimmed at the end, and the
// default threshold of 0 giving everything back at a synchronize.
#include "memory_check.h"

#include <cstdint>

__global__ void scale(const float* in, float* out, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * factor;
}

namespace {

constexpr int kIterations = 16;
constexpr size_t kBytes = 1 << 20;

uint64_t pool_attr(cudaMemPool_t pool, cudaMemPoolAttr attr) {
  uint64_t value = 0;
  cudaMemPoolGetAttribute(pool, attr, &value);
  return value;
}

// One iteration: in -> a (HtoD), a -> b (DtoD), kernel a -> scratch, b -> out (DtoH).
bool iteration(cudaMemPool_t pool, cudaStream_t s, const unsigned char* in, unsigned char* out) {
  void *a = nullptr, *b = nullptr, *scratch = nullptr;
  CHECK(cudaMallocFromPoolAsync(&a, kBytes, pool, s));
  CHECK(cudaMallocFromPoolAsync(&b, kBytes, pool, s));
  CHECK(cudaMallocFromPoolAsync(&scratch, kBytes, pool, s));
  CHECK(cudaMemcpyAsync(a, in, kBytes, cudaMemcpyHostToDevice, s));
  CHECK(cudaMemcpyAsync(b, a, kBytes, cudaMemcpyDeviceToDevice, s));
  const int n = kBytes / sizeof(float);
  scale<<<(n + 255) / 256, 256, 0, s>>>(static_cast<float*>(a), static_cast<float*>(scratch), 2.0f, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpyAsync(out, b, kBytes, cudaMemcpyDeviceToHost, s));
  CHECK(cudaFreeAsync(a, s));
  CHECK(cudaFreeAsync(b, s));
  CHECK(cudaFreeAsync(scratch, s));
  return true;
}

bool run_loop(cudaMemPool_t pool, cudaStream_t s, unsigned char* in, unsigned char* out, const char* which) {
  for (int i = 0; i < kIterations; ++i) {
    fill_pattern(in, kBytes, i);
    if (!iteration(pool, s, in, out)) return false;
    CHECK(cudaStreamSynchronize(s));  // in/out are reused by the next iteration
    EXPECT(has_pattern(out, kBytes, i), "%s iteration %d: bytes differ after the round trip", which, i);
  }
  const uint64_t high = pool_attr(pool, cudaMemPoolAttrReservedMemHigh);
  std::printf("%s pool: %d iterations of %zu MiB each, reserved high %.1f MiB, used now %llu bytes\n", which,
              kIterations, 3 * kBytes >> 20, high / 1048576.0,
              static_cast<unsigned long long>(pool_attr(pool, cudaMemPoolAttrUsedMemCurrent)));
  EXPECT(high >= 3 * kBytes && high < 2ull * 3 * kBytes, "%s pool: no reuse (reserved high %llu)", which,
         static_cast<unsigned long long>(high));
  EXPECT(pool_attr(pool, cudaMemPoolAttrUsedMemCurrent) == 0, "%s pool: memory still in use", which);
  return true;
}

bool default_pool_reuse(cudaStream_t s, unsigned char* in, unsigned char* out) {
  cudaMemPool_t pool;
  CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
  uint64_t keep = UINT64_MAX;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  if (!run_loop(pool, s, in, out, "default")) return false;
  EXPECT(pool_attr(pool, cudaMemPoolAttrReservedMemCurrent) >= 3 * kBytes, "default pool: kept nothing");
  uint64_t release_all = 0;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &release_all));
  CHECK(cudaStreamSynchronize(s));
  const uint64_t reserved = pool_attr(pool, cudaMemPoolAttrReservedMemCurrent);
  std::printf("default pool after a synchronize with release threshold 0: reserved %llu bytes\n",
              static_cast<unsigned long long>(reserved));
  EXPECT(reserved == 0, "default pool: the synchronize released nothing");
  return true;
}

bool own_pool_reuse(cudaStream_t s, unsigned char* in, unsigned char* out) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool;
  CHECK(cudaMemPoolCreate(&pool, &props));
  uint64_t keep = UINT64_MAX;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  if (!run_loop(pool, s, in, out, "created")) return false;
  CHECK(cudaMemPoolTrimTo(pool, 0));
  EXPECT(pool_attr(pool, cudaMemPoolAttrReservedMemCurrent) == 0, "created pool: trim to 0 kept memory");
  std::printf("created pool trimmed to 0: reserved 0 bytes\n");
  CHECK(cudaMemPoolDestroy(pool));
  return true;
}

}  // namespace

int main() {
  int async_alloc = 0;
  cudaDeviceGetAttribute(&async_alloc, cudaDevAttrMemoryPoolsSupported, 0);
  if (!async_alloc) {
    std::printf("stream_ordered_alloc: memory pools not supported, nothing to do\n");
    return 0;
  }
  cudaStream_t s;
  unsigned char *in = nullptr, *out = nullptr;
  bool ok = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess &&
            cudaMallocHost(&in, kBytes) == cudaSuccess && cudaMallocHost(&out, kBytes) == cudaSuccess;
  ok = ok && default_pool_reuse(s, in, out) && own_pool_reuse(s, in, out);
  cudaFreeHost(in);
  cudaFreeHost(out);
  cudaStreamDestroy(s);
  std::printf("stream_ordered_alloc: %s\n", ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
}
