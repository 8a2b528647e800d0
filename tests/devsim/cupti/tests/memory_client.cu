// A CUPTI client of the memory record kinds, linked like any profiler against NVIDIA's
// libcupti.so.13 and run on the simulated device through LD_LIBRARY_PATH.
//
//   memory_client memory  a known sequence of cudaMalloc / cudaMallocHost / cudaMallocManaged /
//                         cudaMallocAsync / pool allocations and frees; every MEMORY2 and
//                         MEMORY_POOL field is checked against what the program did and the
//                         correlation ids against the API callbacks; MEMORY2 enabled midway gives
//                         only later records and disabling it stops them
//   memory_client peer    (DEVSIM_DEVICE_COUNT=2) peer access errors, cudaMemcpyPeer without and
//                         with peer access: bytes arrive, MEMCPY2 records of kind PTOP, and the
//                         direct copy is faster than the one staged through host memory
//
// Prints one "PASS <what>" or "FAIL <what>" line per check and "memory_client: PASSED" at the end.
#include <cuda_runtime.h>
#include <cupti.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <vector>

namespace {

int g_failures = 0;
std::mutex g_mutex;
std::vector<CUpti_ActivityMemory4> g_memory;
std::vector<CUpti_ActivityMemoryPool3> g_pools;
std::vector<CUpti_ActivityMemcpyPtoP4> g_peer_copies;
size_t g_plain_memcpys = 0;
struct Exit {
  std::string function;
  uint32_t correlation_id;
};
// Leaked: nvcc's exit-time unregistration is a runtime call whose callback may come after
// static destructors ran.
std::vector<Exit>& g_exits = *new std::vector<Exit>;
constexpr size_t kBufferSize = 1 << 20;

void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
  if (!ok) ++g_failures;
}

#define CUDA_OK(call) check((call) == cudaSuccess, #call)
#define CUPTI_OK(call) check((call) == CUPTI_SUCCESS, #call)

uint64_t CUPTIAPI client_clock() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferSize));
  *size = kBufferSize;
}

void keep_record(CUpti_Activity* record) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_MEMORY2: g_memory.push_back(*reinterpret_cast<CUpti_ActivityMemory4*>(record)); break;
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
      g_pools.push_back(*reinterpret_cast<CUpti_ActivityMemoryPool3*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      g_peer_copies.push_back(*reinterpret_cast<CUpti_ActivityMemcpyPtoP4*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY: ++g_plain_memcpys; break;
    default: break;
  }
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_size) {
  std::lock_guard<std::mutex> lock(g_mutex);
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) keep_record(record);
  std::free(buffer);
}

void CUPTIAPI api_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data) {
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API || info->callbackSite != CUPTI_API_EXIT) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_exits.push_back(Exit{info->functionName, info->correlationId});
}

// The correlation id of the nth (0-based) call of a runtime function, from its exit callback.
uint32_t callback_id(const std::string& function, int nth) {
  for (const Exit& e : g_exits) {
    if (e.function == function && nth-- == 0) return e.correlation_id;
  }
  return 0;
}

void start_tracing() {
  CUPTI_OK(cuptiActivityRegisterTimestampCallback(client_clock));
  CUPTI_OK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
  CUpti_SubscriberHandle subscriber = nullptr;
  CUPTI_OK(cuptiSubscribe(&subscriber, api_callback, nullptr));
  CUPTI_OK(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API));
}

// What one MEMORY2 record must say.
struct Expected {
  const char* function;
  int nth_call;
  CUpti_ActivityMemoryOperationType operation;
  CUpti_ActivityMemoryKind kind;
  const void* address;
  uint64_t bytes;
  uint32_t stream_id;  // CUPTI_INVALID_STREAM_ID for synchronous calls
  cudaMemPool_t pool;  // nullptr: not a pool allocation
  uint64_t release_threshold;
};

void check_memory_record(const CUpti_ActivityMemory4& r, const Expected& e, uint64_t before, uint64_t after) {
  const std::string what = std::string(e.function) + "#" + std::to_string(e.nth_call) + " ";
  check(r.memoryOperationType == e.operation, what + "operation type");
  check(r.memoryKind == e.kind, what + "memory kind " + std::to_string(r.memoryKind));
  check(r.address == reinterpret_cast<uintptr_t>(e.address), what + "address == the returned pointer");
  check(r.bytes == e.bytes, what + "bytes " + std::to_string(r.bytes));
  check(r.correlationId != 0 && r.correlationId == callback_id(e.function, e.nth_call),
        what + "correlation id == the API callback's");
  check(r.streamId == e.stream_id, what + "stream id " + std::to_string(r.streamId));
  check(r.isAsync == (e.stream_id != CUPTI_INVALID_STREAM_ID), what + "isAsync");
  check(r.deviceId == 0 && r.contextId != CUPTI_INVALID_CONTEXT_ID, what + "device and context");
  check(r.processId == uint32_t(getpid()), what + "process id");
  check(r.PC == 0 && r.name == nullptr, what + "PC 0, no name");
  check(r.timestamp >= before && r.timestamp <= after, what + "timestamp within the calls");
  const auto& pool = r.memoryPoolConfig;
  if (e.pool == nullptr) {
    check(pool.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID, what + "no pool");
    return;
  }
  check(pool.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL, what + "pool type LOCAL");
  check(pool.address == reinterpret_cast<uintptr_t>(e.pool), what + "pool address == the pool handle");
  check(pool.releaseThreshold == e.release_threshold, what + "pool release threshold");
  check(pool.pool.size >= pool.utilizedSize && pool.pool.size >= e.bytes, what + "pool size covers the block");
}

uint64_t pool_attr(cudaMemPool_t pool, cudaMemPoolAttr attr) {
  uint64_t value = 0;
  CUDA_OK(cudaMemPoolGetAttribute(pool, attr, &value));
  return value;
}

void check_pool_record(const CUpti_ActivityMemoryPool3& r, CUpti_ActivityMemoryPoolOperationType op,
                       cudaMemPool_t pool, const char* function, uint64_t size) {
  const std::string what = std::string("MEMORY_POOL ") + function + " ";
  check(r.memoryPoolOperationType == op, what + "operation");
  check(r.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL, what + "type LOCAL");
  check(r.address == reinterpret_cast<uintptr_t>(pool), what + "address == the pool handle");
  check(r.correlationId == callback_id(function, 0), what + "correlation id == the API callback's");
  check(r.deviceId == 0 && r.processId == uint32_t(getpid()), what + "device and process");
  check(r.size == size, what + "size " + std::to_string(r.size));
  check(r.isManagedPool == 0, what + "not a managed pool");
}

int run_memory() {
  start_tracing();
  CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY_POOL));
  void* early = nullptr;  // allocated before MEMORY2 is on: only its release is recorded
  CUDA_OK(cudaMalloc(&early, 4096));
  const uint64_t before = client_clock();
  CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2));

  void *device = nullptr, *pinned = nullptr, *managed = nullptr, *async_block = nullptr, *pool_block = nullptr;
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreate(&stream));
  uint32_t stream_id = 0;
  CUPTI_OK(cuptiGetStreamId(nullptr, reinterpret_cast<CUstream>(stream), &stream_id));
  cudaMemPool_t default_pool = nullptr, pool = nullptr;
  CUDA_OK(cudaDeviceGetDefaultMemPool(&default_pool, 0));
  CUDA_OK(cudaMalloc(&device, 1 << 20));
  CUDA_OK(cudaMallocHost(&pinned, 65536));
  CUDA_OK(cudaMallocManaged(&managed, 8192, cudaMemAttachGlobal));
  CUDA_OK(cudaMallocAsync(&async_block, 4096, stream));
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  CUDA_OK(cudaMemPoolCreate(&pool, &props));
  uint64_t threshold = 1 << 20;
  CUDA_OK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  CUDA_OK(cudaMallocFromPoolAsync(&pool_block, 8192, pool, stream));
  check(pool_attr(pool, cudaMemPoolAttrUsedMemCurrent) == 8192, "pool used == the live block");
  CUDA_OK(cudaFreeAsync(async_block, stream));
  CUDA_OK(cudaFreeAsync(pool_block, stream));
  CUDA_OK(cudaStreamSynchronize(stream));
  check(pool_attr(pool, cudaMemPoolAttrReservedMemCurrent) == 8192, "below its threshold the pool keeps its block");
  check(pool_attr(default_pool, cudaMemPoolAttrReservedMemCurrent) == 0,
        "the default pool (threshold 0) released its block at the synchronize");
  CUDA_OK(cudaMemPoolTrimTo(pool, 0));
  check(pool_attr(pool, cudaMemPoolAttrReservedMemCurrent) == 0, "trimmed to 0");
  CUDA_OK(cudaMemPoolDestroy(pool));
  CUDA_OK(cudaFree(device));
  CUDA_OK(cudaFreeHost(pinned));
  CUDA_OK(cudaFree(managed));
  CUDA_OK(cudaFree(early));
  const uint64_t after = client_clock();
  CUPTI_OK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMORY2));
  void* late = nullptr;  // after the disable: no record
  CUDA_OK(cudaMalloc(&late, 4096));
  CUDA_OK(cudaFree(late));
  CUPTI_OK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));

  const auto A = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  const auto R = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  const auto D = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  const uint32_t none = CUPTI_INVALID_STREAM_ID;
  const Expected expected[] = {
      {"cudaMalloc", 1, A, D, device, 1 << 20, none, nullptr, 0},
      {"cudaMallocHost", 0, A, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, pinned, 65536, none, nullptr, 0},
      {"cudaMallocManaged", 0, A, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, managed, 8192, none, nullptr, 0},
      {"cudaMallocAsync", 0, A, D, async_block, 4096, stream_id, default_pool, 0},
      {"cudaMallocFromPoolAsync", 0, A, D, pool_block, 8192, stream_id, pool, threshold},
      {"cudaFreeAsync", 0, R, D, async_block, 4096, stream_id, default_pool, 0},
      {"cudaFreeAsync", 1, R, D, pool_block, 8192, stream_id, pool, threshold},
      {"cudaFree", 0, R, D, device, 1 << 20, none, nullptr, 0},
      {"cudaFreeHost", 0, R, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, pinned, 65536, none, nullptr, 0},
      {"cudaFree", 1, R, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, managed, 8192, none, nullptr, 0},
      {"cudaFree", 2, R, D, early, 4096, none, nullptr, 0},
  };
  const size_t count = sizeof(expected) / sizeof(expected[0]);
  std::lock_guard<std::mutex> lock(g_mutex);
  check(g_memory.size() == count, "MEMORY2 records: " + std::to_string(g_memory.size()) + " (want " +
                                      std::to_string(count) + ": none before the enable or after the disable)");
  for (size_t i = 0; i < count && i < g_memory.size(); ++i) check_memory_record(g_memory[i], expected[i], before, after);
  check(g_pools.size() == 3, "MEMORY_POOL records: created, trimmed, destroyed");
  if (g_pools.size() == 3) {
    check_pool_record(g_pools[0], CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED, pool, "cudaMemPoolCreate", 0);
    check_pool_record(g_pools[1], CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED, pool, "cudaMemPoolTrimTo", 0);
    check(g_pools[1].minBytesToKeep == 0 && g_pools[1].releaseThreshold == threshold, "trim record: bound and threshold");
    check_pool_record(g_pools[2], CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED, pool, "cudaMemPoolDestroy", 0);
  }
  return 0;
}

// Fills a device buffer of `device` with a byte pattern through a host copy.
void fill(void* dst, size_t bytes, unsigned char seed) {
  std::vector<unsigned char> host(bytes);
  for (size_t i = 0; i < bytes; ++i) host[i] = static_cast<unsigned char>(seed + i * 7);
  CUDA_OK(cudaMemcpy(dst, host.data(), bytes, cudaMemcpyHostToDevice));
}

bool same_bytes(const void* a, const void* b, size_t bytes) {
  std::vector<unsigned char> ha(bytes), hb(bytes);
  cudaMemcpy(ha.data(), a, bytes, cudaMemcpyDeviceToHost);
  cudaMemcpy(hb.data(), b, bytes, cudaMemcpyDeviceToHost);
  return ha == hb;
}

void check_peer_errors() {
  CUDA_OK(cudaSetDevice(0));
  check(cudaDeviceDisablePeerAccess(1) == cudaErrorPeerAccessNotEnabled, "disable before enable: PeerAccessNotEnabled");
  check(cudaDeviceEnablePeerAccess(0, 0) == cudaErrorInvalidDevice, "enable access to itself: InvalidDevice");
  check(cudaDeviceEnablePeerAccess(7, 0) == cudaErrorInvalidDevice, "enable a missing device: InvalidDevice");
  check(cudaDeviceEnablePeerAccess(1, 1) == cudaErrorInvalidValue, "non-zero flags: InvalidValue");
}

int run_peer() {
  start_tracing();
  CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
  CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY2));
  check_peer_errors();
  const size_t bytes = 16 << 20;
  void *on0 = nullptr, *on1 = nullptr;
  CUDA_OK(cudaSetDevice(0));
  CUDA_OK(cudaMalloc(&on0, bytes));
  CUDA_OK(cudaSetDevice(1));
  CUDA_OK(cudaMalloc(&on1, bytes));
  CUDA_OK(cudaSetDevice(0));
  fill(on0, bytes, 3);
  CUDA_OK(cudaMemcpyPeer(on1, 1, on0, 0, bytes));  // staged through host
  check(same_bytes(on0, on1, bytes), "staged peer copy moved the bytes");
  CUDA_OK(cudaDeviceEnablePeerAccess(1, 0));
  check(cudaDeviceEnablePeerAccess(1, 0) == cudaErrorPeerAccessAlreadyEnabled, "second enable: PeerAccessAlreadyEnabled");
  fill(on0, bytes, 11);
  CUDA_OK(cudaMemcpyPeer(on1, 1, on0, 0, bytes));  // direct
  check(same_bytes(on0, on1, bytes), "direct peer copy moved the bytes");
  CUDA_OK(cudaDeviceDisablePeerAccess(1));
  CUPTI_OK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  std::lock_guard<std::mutex> lock(g_mutex);
  check(g_peer_copies.size() == 2, "two MEMCPY2 records: " + std::to_string(g_peer_copies.size()));
  if (g_peer_copies.size() != 2) return 0;
  for (int i = 0; i < 2; ++i) {
    const auto& r = g_peer_copies[i];
    check(r.copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_PTOP && r.bytes == bytes, "PTOP record of the copy's bytes");
    check(r.srcDeviceId == 0 && r.dstDeviceId == 1 && r.srcContextId != r.dstContextId, "source and destination devices");
    check(r.correlationId == callback_id("cudaMemcpyPeer", i), "correlation id == the cudaMemcpyPeer callback's");
  }
  const uint64_t staged = g_peer_copies[0].end - g_peer_copies[0].start;
  const uint64_t direct = g_peer_copies[1].end - g_peer_copies[1].start;
  std::printf("peer copy of %zu MiB: staged %.3f ms, direct %.3f ms\n", bytes >> 20, staged / 1e6, direct / 1e6);
  check(direct < staged, "the copy with peer access is faster than the staged one");
  check(g_plain_memcpys == 2 + 4, "the host copies are MEMCPY records, the peer copies are not");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "memory";
  if (mode == "memory") run_memory();
  else if (mode == "peer") run_peer();
  else check(false, "unknown mode " + mode);
  std::printf("memory_client: %s\n", g_failures == 0 ? "PASSED" : "FAILED");
  return g_failures == 0 ? 0 : 1;
}
