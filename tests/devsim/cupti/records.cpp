#include "records.h"

#include <atomic>
#include <mutex>
#include <string>
#include <unordered_set>

namespace profagent::devsim_cupti {

static_assert(sizeof(CUpti_ActivityKernel10) % 8 == 0, "records are 8-byte multiples");
static_assert(sizeof(CUpti_ActivityMemcpy6) % 8 == 0);
static_assert(sizeof(CUpti_ActivityMemset4) % 8 == 0);
static_assert(sizeof(CUpti_ActivityAPI) % 8 == 0);
static_assert(sizeof(CUpti_ActivitySynchronization2) % 8 == 0);
static_assert(sizeof(CUpti_ActivityExternalCorrelation) % 8 == 0);
static_assert(sizeof(CUpti_ActivityMemcpyPtoP4) % 8 == 0);
static_assert(sizeof(CUpti_ActivityMemory4) % 8 == 0);
static_assert(sizeof(CUpti_ActivityMemoryPool3) % 8 == 0);

const char* intern_name(const char* name) {
  if (name == nullptr) return nullptr;
  // Leaked on purpose: clients may read names from buffers they drain at exit.
  static auto* names = new std::unordered_set<std::string>();
  static auto* mutex = new std::mutex();
  std::lock_guard lock(*mutex);
  return names->emplace(name).first->c_str();
}

namespace {

// Each launch gets its own grid id, as on hardware.
int64_t next_grid_id() {
  static std::atomic<int64_t> counter{0};
  return ++counter;
}

void fill_kernel_geometry(const devsim::OpRecord& op, CUpti_ActivityKernel10& r) {
  r.gridX = op.grid[0];
  r.gridY = op.grid[1];
  r.gridZ = op.grid[2];
  r.blockX = op.block[0];
  r.blockY = op.block[1];
  r.blockZ = op.block[2];
  r.registersPerThread = op.registers_per_thread;
  r.staticSharedMemory = op.static_shared_memory;
  r.dynamicSharedMemory = op.dynamic_shared_memory;
  r.sharedMemoryExecuted = static_cast<uint32_t>(op.static_shared_memory + op.dynamic_shared_memory);
}

// The fields every device-operation record (kernel, memcpy, peer memcpy, memset) carries under
// the same names.
template <typename Record>
void fill_op_fields(const devsim::OpRecord& op, const TimeMap& time, Record& r) {
  r.start = time(op.start_ns);
  r.end = time(op.end_ns);
  r.deviceId = op.device_id;
  r.contextId = op.context_id;
  r.streamId = op.stream_id;
  r.correlationId = op.correlation_id;
  r.graphNodeId = op.graph_node_id;
  r.graphId = op.graph_id;
}

// The fields both copy records (MEMCPY and the peer MEMCPY2) carry under the same names.
template <typename Record>
void fill_copy_fields(const devsim::OpRecord& op, const TimeMap& time, Record& r) {
  r.copyKind = op.copy_kind;
  r.srcKind = op.src_kind;
  r.dstKind = op.dst_kind;
  r.flags = op.is_async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
  r.bytes = op.bytes;
  fill_op_fields(op, time, r);
}

}  // namespace

CUpti_ActivityKernel10 kernel_record(const devsim::OpRecord& op, const KernelOptions& options,
                                     const TimeMap& time) {
  CUpti_ActivityKernel10 r{};
  r.kind = options.kind;
  fill_op_fields(op, time, r);
  r.completed = r.end;  // no child kernels: completion is the kernel's own end
  fill_kernel_geometry(op, r);
  r.gridId = next_grid_id();
  r.name = intern_name(op.name);
  // Real CUPTI reports queued/submitted only after cuptiActivityEnableLatencyTimestamps(1);
  // otherwise CUPTI_TIMESTAMP_UNKNOWN (0).
  r.queued = options.latency_timestamps ? time(op.queued_ns) : 0;
  r.submitted = options.latency_timestamps ? time(op.submitted_ns) : 0;
  r.launchType = op.launch_type;
  r.shmemLimitConfig = CUPTI_FUNC_SHMEM_LIMIT_DEFAULT;
  return r;
}

CUpti_ActivityMemcpy6 memcpy_record(const devsim::OpRecord& op, const TimeMap& time) {
  CUpti_ActivityMemcpy6 r{};
  r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  fill_copy_fields(op, time, r);
  // devsim gives one correlation id per public call, so the runtime's equals the driver's.
  r.runtimeCorrelationId = op.correlation_id;
  r.copyCount = 1;
  return r;
}

CUpti_ActivityMemset4 memset_record(const devsim::OpRecord& op, const TimeMap& time) {
  CUpti_ActivityMemset4 r{};
  r.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  r.value = op.memset_value;
  r.bytes = op.bytes;
  fill_op_fields(op, time, r);
  r.flags = op.is_async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
  r.memoryKind = op.memory_kind;
  return r;
}

CUpti_ActivityMemcpyPtoP4 peer_memcpy_record(const devsim::OpRecord& op, const TimeMap& time) {
  CUpti_ActivityMemcpyPtoP4 r{};
  r.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  fill_copy_fields(op, time, r);
  r.srcDeviceId = op.src_device_id;
  r.srcContextId = op.src_device_id + 1;  // one primary context per device, uid = ordinal + 1
  r.dstDeviceId = op.dst_device_id;
  r.dstContextId = op.dst_device_id + 1;
  return r;
}

CUpti_ActivityMemory4 memory_record(const devsim::MemoryRecord& m, uint32_t process_id, const TimeMap& time) {
  CUpti_ActivityMemory4 r{};
  r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  r.memoryOperationType = m.operation;
  r.memoryKind = m.memory_kind;
  r.correlationId = m.correlation_id;
  r.address = m.address;
  r.bytes = m.bytes;
  r.timestamp = time(m.timestamp_ns);
  r.PC = 0;  // devsim does not unwind the caller
  r.processId = process_id;
  r.deviceId = m.device_id;
  r.contextId = m.context_id;
  r.streamId = m.stream_id;
  r.name = nullptr;  // only device variables have names
  r.isAsync = m.is_async;
  r.memoryPoolConfig.memoryPoolType = m.pool_type;
  if (m.pool_type != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID) {
    r.memoryPoolConfig.address = m.pool_address;
    r.memoryPoolConfig.releaseThreshold = m.pool_release_threshold;
    r.memoryPoolConfig.pool.size = m.pool_size;
    r.memoryPoolConfig.utilizedSize = m.pool_utilized_size;
  }
  r.source = nullptr;  // cuptiActivityEnableAllocationSource is not modelled
  return r;
}

CUpti_ActivityMemoryPool3 memory_pool_record(const devsim::MemoryPoolRecord& p, uint32_t process_id,
                                             const TimeMap& time) {
  CUpti_ActivityMemoryPool3 r{};
  r.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
  r.memoryPoolOperationType = p.operation;
  r.memoryPoolType = p.pool_type;
  r.correlationId = p.correlation_id;
  r.processId = process_id;
  r.deviceId = p.device_id;
  r.minBytesToKeep = p.operation == CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED ? p.min_bytes_to_keep : 0;
  r.address = p.address;
  r.size = p.size;
  r.releaseThreshold = p.release_threshold;
  r.timestamp = time(p.timestamp_ns);
  r.utilizedSize = p.utilized_size;
  r.isManagedPool = 0;  // devsim's pools hold device memory
  return r;
}

CUpti_ActivityAPI api_record(const devsim::ApiCall& call, uint32_t thread_id, const TimeMap& time) {
  CUpti_ActivityAPI r{};
  r.kind = call.domain == devsim::ApiDomain::Runtime ? CUPTI_ACTIVITY_KIND_RUNTIME
                                                     : CUPTI_ACTIVITY_KIND_DRIVER;
  r.cbid = call.cbid;
  r.start = time(call.start_ns);
  r.end = time(call.end_ns);
  r.processId = call.process_id;
  r.threadId = thread_id;
  r.correlationId = call.correlation_id;
  r.returnValue = static_cast<uint32_t>(call.result);
  return r;
}

CUpti_ActivitySynchronization2 sync_record(const devsim::SyncRecord& sync, const TimeMap& time) {
  CUpti_ActivitySynchronization2 r{};
  r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  r.type = sync.type;
  r.start = time(sync.start_ns);
  r.end = time(sync.end_ns);
  r.correlationId = sync.correlation_id;
  r.contextId = sync.context_id;
  r.streamId = sync.stream_id;
  r.cudaEventId = sync.event_id;
  r.cudaEventSyncId = sync.event_sync_id;
  r.returnValue = 0;
  return r;
}

CUpti_ActivityExternalCorrelation external_correlation_record(
    CUpti_ExternalCorrelationKind kind, uint64_t external_id, uint32_t correlation_id) {
  CUpti_ActivityExternalCorrelation r{};
  r.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  r.externalKind = kind;
  r.externalId = external_id;
  r.correlationId = correlation_id;
  return r;
}

}  // namespace profagent::devsim_cupti
