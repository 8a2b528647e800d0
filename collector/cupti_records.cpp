#include "collector/cupti_records.h"

#include <algorithm>
#include <cstring>

#include "collector/cupti_status.h"
#include "collector/device_names.h"
#include "collector/huge_pages.h"
#include "collector/memory_ledger.h"

namespace profagent::collector {

uint64_t CuptiRecordParser::to_agent_ns(uint64_t cupti_ns) const {
  if (cupti_ns == 0) return 0;  // CUPTI_TIMESTAMP_UNKNOWN
  return uint64_t(int64_t(cupti_ns) - offset_ns_);
}

// The fields every device-operation record (kernel, memcpy, memset) carries, under the same
// names in each CUPTI struct.
template <typename Record>
DeviceRecord& CuptiRecordParser::add_device_op(DeviceKind kind, const Record& op, DeviceBatch& out) {
  DeviceRecord& r = out.records.emplace_back();
  r.kind = kind;
  r.start_ns = to_agent_ns(op.start);
  r.end_ns = to_agent_ns(op.end);
  r.device = op.deviceId;
  r.context = op.contextId;
  r.stream = op.streamId;
  r.correlation = op.correlationId;
  r.graph_id = op.graphId;
  r.graph_node_id = op.graphNodeId;
  return r;
}

void CuptiRecordParser::reserve_links(size_t bytes, DeviceBatch& out) {
  reserve_on_huge_pages(out.links, out.links.size() + bytes / sizeof(CUpti_ActivityExternalCorrelation));
}

void CuptiRecordParser::parse(uint8_t* buffer, size_t valid_bytes, DeviceBatch& out) {
  CUpti_Activity* record = nullptr;
  // The end of the buffer is CUPTI_ERROR_MAX_LIMIT_REACHED: expected, so checked quietly.
  while (CUPTI_CALL_QUIET(api_, get_next_record, buffer, valid_bytes, &record) && record) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        add_kernel(*reinterpret_cast<CUpti_ActivityKernel10*>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        add_memcpy(*reinterpret_cast<CUpti_ActivityMemcpy6*>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY2:
        add_peer_copy(*reinterpret_cast<CUpti_ActivityMemcpyPtoP4*>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        add_memset(*reinterpret_cast<CUpti_ActivityMemset4*>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        add_sync(*reinterpret_cast<CUpti_ActivitySynchronization2*>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_DRIVER:
        add_driver_call(*reinterpret_cast<CUpti_ActivityAPI*>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_MEMORY2:
        add_memory(*reinterpret_cast<CUpti_ActivityMemory4*>(record));
        break;
      case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
        add_memory_pool(*reinterpret_cast<CUpti_ActivityMemoryPool3*>(record));
        break;
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto& link = *reinterpret_cast<CUpti_ActivityExternalCorrelation*>(record);
        // Only our kind: CUSTOM0/1 belong to Kineto if the framework's profiler is active.
        if (link.externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2) {
          out.links.push_back(ExternalLink{link.correlationId, link.externalId});
        }
        break;
      }
      case CUPTI_ACTIVITY_KIND_RUNTIME:  // enabled for its external correlations; hooks time calls
      default:
        break;
    }
  }
}

void CuptiRecordParser::add_kernel(const CUpti_ActivityKernel10& kernel, DeviceBatch& out) {
  DeviceRecord& r = add_device_op(DeviceKind::Kernel, kernel, out);
  r.queued_ns = to_agent_ns(kernel.queued);
  r.name = kernel_name(kernel.name);  // mangled; demangled by the join
  r.grid[0] = kernel.gridX, r.grid[1] = kernel.gridY, r.grid[2] = kernel.gridZ;
  r.block[0] = kernel.blockX, r.block[1] = kernel.blockY, r.block[2] = kernel.blockZ;
  r.registers_per_thread = kernel.registersPerThread;
  r.shared_memory = uint32_t(kernel.staticSharedMemory + kernel.dynamicSharedMemory);
}

void CuptiRecordParser::add_memcpy(const CUpti_ActivityMemcpy6& copy, DeviceBatch& out) {
  DeviceRecord& r = add_device_op(DeviceKind::Memcpy, copy, out);
  r.bytes = copy.bytes;
  r.name = memcpy_name(copy.copyKind, copy.srcKind, copy.dstKind);
}

// A copy between two devices: drawn on the row of the device that ran it (deviceId), named
// as Kineto names it ("Memcpy PtoP (Device -> Device)").
void CuptiRecordParser::add_peer_copy(const CUpti_ActivityMemcpyPtoP4& copy, DeviceBatch& out) {
  DeviceRecord& r = add_device_op(DeviceKind::Memcpy, copy, out);
  r.bytes = copy.bytes;
  r.name = memcpy_name(copy.copyKind, copy.srcKind, copy.dstKind);
}

void CuptiRecordParser::add_memset(const CUpti_ActivityMemset4& set, DeviceBatch& out) {
  DeviceRecord& r = add_device_op(DeviceKind::Memset, set, out);
  r.bytes = set.bytes;
  r.name = memset_name(set.memoryKind);
}

void CuptiRecordParser::add_sync(const CUpti_ActivitySynchronization2& sync, DeviceBatch& out) {
  DeviceRecord& r = out.records.emplace_back();
  r.kind = DeviceKind::Sync;
  r.start_ns = to_agent_ns(sync.start);
  r.end_ns = to_agent_ns(sync.end);
  r.context = sync.contextId;
  r.stream = sync.streamId;  // CUPTI_SYNCHRONIZATION_INVALID_VALUE when not applicable
  r.correlation = sync.correlationId;
  r.sync_type = uint32_t(sync.type);
  r.event_id = sync.cudaEventId;
  r.name = sync_name(r.sync_type);
}

void CuptiRecordParser::add_driver_call(const CUpti_ActivityAPI& call, DeviceBatch& out) {
  DeviceRecord& r = out.records.emplace_back();
  r.kind = DeviceKind::DriverApi;
  r.start_ns = to_agent_ns(call.start);
  r.end_ns = to_agent_ns(call.end);
  r.correlation = call.correlationId;
  r.pid = call.processId;
  r.tid = call.threadId;
  r.cbid = call.cbid;
  r.name = driver_function_name(call.cbid);
}

// Allocation records go to the ledger after the drain's last buffer (book_memory).
void CuptiRecordParser::add_memory(const CUpti_ActivityMemory4& record) {
  MemoryNote note;
  if (!memory_event_of(record, offset_ns_, &note.memory)) return;
  note.ns = note.memory.ns;
  memory_.push_back(note);
  if (note.memory.pool_address != 0 && !note.memory.release) {
    note.is_pool = true;
    note.pool = {note.memory.pool_address, note.memory.device, note.memory.pool_size, note.memory.ns};
    memory_.push_back(note);
  }
}

void CuptiRecordParser::add_memory_pool(const CUpti_ActivityMemoryPool3& record) {
  MemoryNote note;
  if (!pool_reservation_of(record, offset_ns_, &note.pool)) return;
  note.ns = note.pool.ns;
  note.is_pool = true;
  memory_.push_back(note);
}

// No collector lock is held here (drain's caller holds none).
void CuptiRecordParser::book_memory() noexcept {
  std::stable_sort(memory_.begin(), memory_.end(), [](const MemoryNote& a, const MemoryNote& b) { return a.ns < b.ns; });
  for (const MemoryNote& note : memory_) {
    if (note.is_pool) note_pool_reservation(note.pool);
    else note_device_memory(note.memory);
  }
  memory_.clear();
}

// A launch loop's records name one kernel after another of the same name: the last one is
// reused when the text is equal (compared, not trusted by pointer: a module's names may be
// freed and their memory reused), which costs less than hashing it again.
InternedName CuptiRecordParser::kernel_name(const char* name) {
  if (name == nullptr) return {};
  if (std::strcmp(name, last_kernel_name_.c_str()) != 0) last_kernel_name_ = name;
  return last_kernel_name_;
}

// Interned once per callback id: a driver record then costs no hash of its name.
InternedName CuptiRecordParser::driver_function_name(uint32_t cbid) {
  auto [it, inserted] = driver_names_.try_emplace(cbid);
  if (!inserted) return it->second;
  const char* name = nullptr;
  // Optional, and unknown ids are expected (a driver newer than this CUPTI): quiet.
  if (api_.get_callback_name && CUPTI_CALL_QUIET(api_, get_callback_name, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) &&
      name) {
    it->second = name;
  } else {
    it->second = "cuDriverApi#" + std::to_string(cbid);
  }
  return it->second;
}

}  // namespace profagent::collector
