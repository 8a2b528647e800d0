// Stream-ordered pools, unified memory and frees of pinned memory, on the model linked
// directly (DEVSIM_MEMORY_MB=256, DEVSIM_BW_HTOD_GBPS=1 in this test's environment).
#include <catch2/catch.hpp>
#include <cuda.h>

#include <chrono>
#include <thread>

#include "model_test_support.h"

using namespace devsim_test;

namespace {

constexpr size_t kMiB = 1 << 20;

uint64_t attr(cudaMemPool_t pool, cudaMemPoolAttr a) {
  uint64_t value = 0;
  REQUIRE(cudaMemPoolGetAttribute(pool, a, &value) == cudaSuccess);
  return value;
}

void set_threshold(cudaMemPool_t pool, uint64_t bytes) {
  REQUIRE(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &bytes) == cudaSuccess);
}

size_t free_device_bytes() {
  size_t free_bytes = 0, total = 0;
  REQUIRE(cudaMemGetInfo(&free_bytes, &total) == cudaSuccess);
  return free_bytes;
}

cudaMemPool_t default_pool() {
  cudaMemPool_t pool = nullptr;
  REQUIRE(cudaDeviceGetDefaultMemPool(&pool, 0) == cudaSuccess);
  return pool;
}

// Opens a gate from another thread once `ms` have passed, so a host call that must wait for
// the gated work is seen to return only after that work finished.
std::thread open_later(Gate& gate, int ms) {
  return std::thread([&gate, ms] {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    gate.open();
  });
}

bool copy_done_with_correlation(uint32_t correlation_id) {
  for (const auto& op : tracer().ops()) {
    if (op.kind == devsim::OpKind::Memcpy && op.correlation_id == correlation_id) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("a block freed on a stream is reused by the next allocation on that stream", "[devsim][pool]") {
  cudaStream_t s;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  cudaMemPool_t pool = default_pool();
  const size_t before = free_device_bytes();
  void *a = nullptr, *b = nullptr;
  REQUIRE(cudaMallocAsync(&a, kMiB, s) == cudaSuccess);
  CHECK(attr(pool, cudaMemPoolAttrUsedMemCurrent) == kMiB);
  CHECK(before - free_device_bytes() == kMiB);  // pool memory counts as used device memory
  REQUIRE(cudaFreeAsync(a, s) == cudaSuccess);
  CHECK(attr(pool, cudaMemPoolAttrUsedMemCurrent) == 0);
  CHECK(attr(pool, cudaMemPoolAttrReservedMemCurrent) == kMiB);
  REQUIRE(cudaMallocAsync(&b, kMiB, s) == cudaSuccess);
  CHECK(b == a);
  CHECK(attr(pool, cudaMemPoolAttrReservedMemCurrent) == kMiB);
  REQUIRE(cudaFreeAsync(b, s) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  // Release threshold 0 (the default): the synchronize gave everything back.
  CHECK(attr(pool, cudaMemPoolAttrReservedMemCurrent) == 0);
  CHECK(free_device_bytes() == before);
  cudaStreamDestroy(s);
}

TEST_CASE("another stream reuses a block only once its free has happened on the device", "[devsim][pool]") {
  cudaStream_t s1, s2;
  REQUIRE(cudaStreamCreate(&s1) == cudaSuccess);
  REQUIRE(cudaStreamCreate(&s2) == cudaSuccess);
  cudaMemPool_t pool = default_pool();
  set_threshold(pool, UINT64_MAX);  // keep freed blocks across synchronisations
  Gate gate;
  gate.enqueue_on(s1);
  void *a = nullptr, *b = nullptr, *c = nullptr;
  REQUIRE(cudaMallocAsync(&a, kMiB, s1) == cudaSuccess);
  REQUIRE(cudaFreeAsync(a, s1) == cudaSuccess);  // queued behind the gate
  REQUIRE(cudaMallocAsync(&b, kMiB, s2) == cudaSuccess);
  CHECK(b != a);
  CHECK(attr(pool, cudaMemPoolAttrReservedMemCurrent) == 2 * kMiB);
  gate.open();
  REQUIRE(cudaStreamSynchronize(s1) == cudaSuccess);
  REQUIRE(cudaMallocAsync(&c, kMiB, s2) == cudaSuccess);
  CHECK(c == a);
  CHECK(attr(pool, cudaMemPoolAttrUsedMemHigh) == 2 * kMiB);
  REQUIRE(cudaFreeAsync(b, s2) == cudaSuccess);
  REQUIRE(cudaFreeAsync(c, s2) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s2) == cudaSuccess);
  CHECK(attr(pool, cudaMemPoolAttrReservedMemCurrent) == 2 * kMiB);
  REQUIRE(cudaMemPoolTrimTo(pool, kMiB) == cudaSuccess);
  CHECK(attr(pool, cudaMemPoolAttrReservedMemCurrent) == kMiB);
  REQUIRE(cudaMemPoolTrimTo(pool, 0) == cudaSuccess);
  CHECK(attr(pool, cudaMemPoolAttrReservedMemCurrent) == 0);
  uint64_t zero = 0;
  REQUIRE(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero) == cudaSuccess);
  CHECK(attr(pool, cudaMemPoolAttrUsedMemHigh) == 0);
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &zero) == cudaErrorInvalidValue);
  set_threshold(pool, 0);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

TEST_CASE("created pools, the current pool and pool access", "[devsim][pool]") {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool = nullptr, current = nullptr;
  REQUIRE(cudaMemPoolCreate(&pool, &props) == cudaSuccess);
  CHECK(pool != default_pool());
  REQUIRE(cudaDeviceSetMemPool(0, pool) == cudaSuccess);
  REQUIRE(cudaDeviceGetMemPool(&current, 0) == cudaSuccess);
  CHECK(current == pool);
  cudaMemLocation location{cudaMemLocationTypeDevice, 0};
  REQUIRE(cudaMemGetMemPool(&current, &location, cudaMemAllocationTypePinned) == cudaSuccess);
  CHECK(current == pool);
  void* p = nullptr;
  REQUIRE(cudaMallocAsync(&p, 4096, nullptr) == cudaSuccess);  // from the current pool
  CHECK(attr(pool, cudaMemPoolAttrUsedMemCurrent) == 4096);
  cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
  REQUIRE(cudaMemPoolGetAccess(&flags, pool, &location) == cudaSuccess);
  CHECK(flags == cudaMemAccessFlagsProtReadWrite);
  REQUIRE(cudaFreeAsync(p, nullptr) == cudaSuccess);
  CHECK(cudaMemPoolDestroy(default_pool()) == cudaErrorInvalidValue);
  REQUIRE(cudaMemPoolDestroy(pool) == cudaSuccess);
  REQUIRE(cudaDeviceGetMemPool(&current, 0) == cudaSuccess);
  CHECK(current == default_pool());  // destroying the current pool restores the default
  CHECK(cudaMallocFromPoolAsync(&p, 4096, pool, nullptr) == cudaErrorInvalidValue);
  CHECK(cudaFreeAsync(&flags, nullptr) == cudaErrorInvalidValue);  // not a pool allocation
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
}

TEST_CASE("cudaFreeHost waits for queued copies from the pinned buffer", "[devsim][pool]") {
  tracer().clear();
  cudaStream_t s;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  void *pinned = nullptr, *dev = nullptr;
  REQUIRE(cudaMallocHost(&pinned, kMiB) == cudaSuccess);
  REQUIRE(cudaMalloc(&dev, kMiB) == cudaSuccess);
  Gate gate;
  gate.enqueue_on(s);
  REQUIRE(cudaMemcpyAsync(dev, pinned, kMiB, cudaMemcpyHostToDevice, s) == cudaSuccess);
  const uint32_t copy_id = tracer().calls("cudaMemcpyAsync").back().correlation_id;
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);  // the queued copy outlives its stream
  std::thread opener = open_later(gate, 20);
  REQUIRE(cudaFreeHost(pinned) == cudaSuccess);
  CHECK(copy_done_with_correlation(copy_id));
  opener.join();
  cudaFree(dev);
}

TEST_CASE("cudaHostUnregister waits for queued copies from the registered range", "[devsim][pool]") {
  tracer().clear();
  cudaStream_t s;
  REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  std::vector<unsigned char> host(kMiB, 5);
  void* dev = nullptr;
  REQUIRE(cudaHostRegister(host.data(), kMiB, 0) == cudaSuccess);
  REQUIRE(cudaMalloc(&dev, kMiB) == cudaSuccess);
  Gate gate;
  gate.enqueue_on(s);
  REQUIRE(cudaMemcpyAsync(dev, host.data(), kMiB, cudaMemcpyHostToDevice, s) == cudaSuccess);
  const uint32_t copy_id = tracer().calls("cudaMemcpyAsync").back().correlation_id;
  std::thread opener = open_later(gate, 20);
  REQUIRE(cudaHostUnregister(host.data()) == cudaSuccess);
  CHECK(copy_done_with_correlation(copy_id));
  opener.join();
  cudaStreamDestroy(s);
  cudaFree(dev);
}

TEST_CASE("managed memory: advice, prefetch timing and range attributes", "[devsim][managed]") {
  void* managed = nullptr;
  REQUIRE(cudaMallocManaged(&managed, kMiB, cudaMemAttachGlobal) == cudaSuccess);
  cudaStream_t s;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  cudaMemLocation gpu{cudaMemLocationTypeDevice, 0}, host{cudaMemLocationTypeHost, 0};
  int value = -7;
  REQUIRE(cudaMemRangeGetAttribute(&value, sizeof value, cudaMemRangeAttributeLastPrefetchLocation, managed, kMiB) ==
          cudaSuccess);
  CHECK(value == cudaInvalidDeviceId);
  REQUIRE(cudaMemAdvise(managed, kMiB, cudaMemAdviseSetReadMostly, gpu) == cudaSuccess);
  REQUIRE(cudaMemAdvise(managed, kMiB, cudaMemAdviseSetPreferredLocation, gpu) == cudaSuccess);
  REQUIRE(cudaMemAdvise(managed, kMiB, cudaMemAdviseSetAccessedBy, host) == cudaSuccess);
  cudaEvent_t e0, e1, e2;
  cudaEventCreate(&e0), cudaEventCreate(&e1), cudaEventCreate(&e2);
  REQUIRE(cudaEventRecord(e0, s) == cudaSuccess);
  REQUIRE(cudaMemPrefetchAsync(managed, kMiB, gpu, 0, s) == cudaSuccess);
  REQUIRE(cudaEventRecord(e1, s) == cudaSuccess);
  REQUIRE(cudaMemPrefetchAsync(managed, kMiB, gpu, 0, s) == cudaSuccess);  // already there
  REQUIRE(cudaEventRecord(e2, s) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  float moved_ms = 0, again_ms = 0;
  cudaEventElapsedTime(&moved_ms, e0, e1);
  cudaEventElapsedTime(&again_ms, e1, e2);
  CHECK(moved_ms >= 1.048f);  // 1 MiB at DEVSIM_BW_HTOD_GBPS=1
  CHECK(again_ms < moved_ms / 4);
  int read_mostly = 0, preferred = -7, accessed[2] = {-7, -7}, prefetched = -7;
  cudaMemRangeGetAttribute(&read_mostly, sizeof(int), cudaMemRangeAttributeReadMostly, managed, kMiB);
  cudaMemRangeGetAttribute(&preferred, sizeof(int), cudaMemRangeAttributePreferredLocation, managed, kMiB);
  cudaMemRangeGetAttribute(accessed, sizeof accessed, cudaMemRangeAttributeAccessedBy, managed, kMiB);
  cudaMemRangeGetAttribute(&prefetched, sizeof(int), cudaMemRangeAttributeLastPrefetchLocation, managed, kMiB);
  CHECK(read_mostly == 1);
  CHECK(preferred == 0);
  CHECK(accessed[0] == cudaCpuDeviceId);
  CHECK(accessed[1] == cudaInvalidDeviceId);
  CHECK(prefetched == 0);
  std::vector<float> plain(16);
  CHECK(cudaMemPrefetchAsync(plain.data(), 64, gpu, 0, s) == cudaErrorInvalidValue);
  CHECK(cudaMemAdvise(plain.data(), 64, cudaMemAdviseSetReadMostly, gpu) == cudaErrorInvalidValue);
  CHECK(cudaMemPrefetchAsync(managed, kMiB, cudaMemLocation{cudaMemLocationTypeDevice, 9}, 0, s) ==
        cudaErrorInvalidDevice);
  CHECK(cudaMemPrefetchAsync(managed, 2 * kMiB, gpu, 0, s) == cudaErrorInvalidValue);  // past the allocation
  CHECK(cudaStreamAttachMemAsync(s, managed, 0, cudaMemAttachSingle) == cudaSuccess);
  CHECK(cudaStreamAttachMemAsync(s, managed, 64, cudaMemAttachSingle) == cudaErrorInvalidValue);
  CHECK(cudaStreamAttachMemAsync(s, plain.data(), 0, cudaMemAttachSingle) == cudaErrorInvalidValue);
  CHECK(cudaStreamAttachMemAsync(s, managed, 0, 8) == cudaErrorInvalidValue);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  cudaEventDestroy(e0), cudaEventDestroy(e1), cudaEventDestroy(e2);
  cudaStreamDestroy(s);
  cudaFree(managed);
}

TEST_CASE("driver-level stream-ordered allocation shares the runtime's pools", "[devsim][pool]") {
  CUdeviceptr a = 0, b = 0;
  REQUIRE(cuMemAllocAsync(&a, kMiB, nullptr) == CUDA_SUCCESS);
  CHECK(attr(default_pool(), cudaMemPoolAttrUsedMemCurrent) == kMiB);
  REQUIRE(cuMemFreeAsync(a, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuMemAllocAsync(&b, kMiB, nullptr) == CUDA_SUCCESS);
  CHECK(b == a);
  REQUIRE(cuMemFree(b) == CUDA_SUCCESS);  // a pool block freed the synchronous way
  CHECK(attr(default_pool(), cudaMemPoolAttrUsedMemCurrent) == 0);
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  CUmemoryPool pool = nullptr;
  REQUIRE(cuMemPoolCreate(&pool, &props) == CUDA_SUCCESS);
  REQUIRE(cuMemAllocFromPoolAsync(&a, 4096, pool, nullptr) == CUDA_SUCCESS);
  CHECK(attr(reinterpret_cast<cudaMemPool_t>(pool), cudaMemPoolAttrUsedMemCurrent) == 4096);
  REQUIRE(cuMemFreeAsync(a, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(attr(default_pool(), cudaMemPoolAttrReservedMemCurrent) == 0);
}
