// Builds the real CUDA 13 activity record structs from what the device model reports
// (devsim_trace.h). Pure functions: timestamps are converted by the caller-supplied map, so
// unit tests can check every field.
#pragma once

#include "../core/devsim_trace.h"

#include <cupti_activity.h>

#include <cstddef>
#include <cstdint>
#include <functional>

namespace profagent::devsim_cupti {

// Monotonic ns -> record timestamp domain.
using TimeMap = std::function<uint64_t(uint64_t)>;

// Size of the record struct written for a kind, 0 for kinds devsim never writes. This is what
// cuptiActivityGetNextRecord steps by (inline: it runs twice per record a client reads).
inline size_t record_size(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return sizeof(CUpti_ActivityMemoryPool3);
    default: return 0;
  }
}

// Kernel names live in records until the client has read them; devsim keeps its own copy for
// the life of the process, as CUPTI keeps names in its own tables.
const char* intern_name(const char* name);

struct KernelOptions {
  CUpti_ActivityKind kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;  // or KERNEL
  bool latency_timestamps = false;  // cuptiActivityEnableLatencyTimestamps: queued/submitted
};

CUpti_ActivityKernel10 kernel_record(const devsim::OpRecord& op, const KernelOptions& options,
                                     const TimeMap& time);
CUpti_ActivityMemcpy6 memcpy_record(const devsim::OpRecord& op, const TimeMap& time);
CUpti_ActivityMemset4 memset_record(const devsim::OpRecord& op, const TimeMap& time);
// RUNTIME or DRIVER record of a finished call; thread_id as cuptiSetThreadIdType chose.
CUpti_ActivityAPI api_record(const devsim::ApiCall& call, uint32_t thread_id, const TimeMap& time);
// A peer-to-peer copy (copy kind PTOP) as CUPTI_ACTIVITY_KIND_MEMCPY2 reports it.
CUpti_ActivityMemcpyPtoP4 peer_memcpy_record(const devsim::OpRecord& op, const TimeMap& time);
CUpti_ActivityMemory4 memory_record(const devsim::MemoryRecord& memory, uint32_t process_id, const TimeMap& time);
CUpti_ActivityMemoryPool3 memory_pool_record(const devsim::MemoryPoolRecord& pool, uint32_t process_id,
                                             const TimeMap& time);
CUpti_ActivitySynchronization2 sync_record(const devsim::SyncRecord& sync, const TimeMap& time);
CUpti_ActivityExternalCorrelation external_correlation_record(
    CUpti_ExternalCorrelationKind kind, uint64_t external_id, uint32_t correlation_id);

}  // namespace profagent::devsim_cupti
