// Parsing of CUPTI activity buffers into neutral DeviceBatch records (CUDA 13 record layouts:
// CUpti_ActivityKernel10, Memcpy6, Memset4, Synchronization2, API, ExternalCorrelation).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "collector/cupti_api.h"
#include "collector/cupti_memory.h"
#include "collector/device_backend.h"
#include "collector/interned_name.h"

namespace profagent::collector {

class CuptiRecordParser {
 public:
  // offset_ns: CUPTI timestamp minus agent clock (0 when CUPTI uses our timestamp callback).
  CuptiRecordParser(const CuptiApi& api, int64_t offset_ns) : api_(api), offset_ns_(offset_ns) {}

  // Room in `out` for the links `bytes` of records can hold at most, before the first parse:
  // at the exit flush a million links would otherwise grow by doubling, first-touching fresh
  // memory each time (capacity never used is never touched).
  static void reserve_links(size_t bytes, DeviceBatch& out);
  void parse(uint8_t* buffer, size_t valid_bytes, DeviceBatch& out);
  // Hands the allocation records of every buffer parsed to the ledger, in time order (one
  // buffer's records are in order, records of different buffers interleave).
  void book_memory() noexcept;

 private:
  uint64_t to_agent_ns(uint64_t cupti_ns) const;
  template <typename Record>
  DeviceRecord& add_device_op(DeviceKind kind, const Record& op, DeviceBatch& out);
  void add_kernel(const CUpti_ActivityKernel10& kernel, DeviceBatch& out);
  void add_memcpy(const CUpti_ActivityMemcpy6& copy, DeviceBatch& out);
  void add_peer_copy(const CUpti_ActivityMemcpyPtoP4& copy, DeviceBatch& out);
  void add_memset(const CUpti_ActivityMemset4& set, DeviceBatch& out);
  void add_sync(const CUpti_ActivitySynchronization2& sync, DeviceBatch& out);
  void add_driver_call(const CUpti_ActivityAPI& call, DeviceBatch& out);
  void add_memory(const CUpti_ActivityMemory4& record);
  void add_memory_pool(const CUpti_ActivityMemoryPool3& record);
  InternedName driver_function_name(uint32_t cbid);
  InternedName kernel_name(const char* name);

  // An allocation record (MEMORY2) or a pool's size (MEMORY_POOL, or a pool allocation's).
  struct MemoryNote {
    uint64_t ns = 0;
    bool is_pool = false;
    DeviceMemoryEvent memory;
    PoolReservation pool;
  };

  const CuptiApi& api_;
  int64_t offset_ns_;
  std::map<uint32_t, InternedName> driver_names_;
  InternedName last_kernel_name_;  // kernel_name()
  std::vector<MemoryNote> memory_;
};

}  // namespace profagent::collector
