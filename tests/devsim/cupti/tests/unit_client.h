// A minimal activity-buffer client for the unit tests: hands out heap buffers, copies the
// records of completed buffers out, and remembers on which thread buffers came back.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace unit_client {

struct Collected {
  std::vector<std::vector<uint8_t>> records;  // each record's bytes
  std::vector<size_t> valid_sizes;
  std::vector<std::thread::id> completion_threads;
};

inline std::mutex g_mutex;
inline Collected g_collected;
inline size_t g_buffer_size = 1 << 16;
inline size_t g_max_records = 0;
inline bool g_decline = false;
inline size_t g_misalign = 0;  // hand out buffers starting this many bytes past alignment

inline void CUPTIAPI request(uint8_t** buffer, size_t* size, size_t* max_records) {
  if (g_decline) {
    *buffer = nullptr;
    *size = 0;
    return;
  }
  *buffer = static_cast<uint8_t*>(std::malloc(g_buffer_size + 8)) + g_misalign;
  *size = g_buffer_size;
  *max_records = g_max_records;
}

inline void CUPTIAPI complete(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_size) {
  std::lock_guard lock(g_mutex);
  g_collected.valid_sizes.push_back(valid_size);
  g_collected.completion_threads.push_back(std::this_thread::get_id());
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(record);
    size_t size = 0;
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: size = sizeof(CUpti_ActivityKernel10); break;
      case CUPTI_ACTIVITY_KIND_MEMCPY: size = sizeof(CUpti_ActivityMemcpy6); break;
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER: size = sizeof(CUpti_ActivityAPI); break;
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: size = sizeof(CUpti_ActivityExternalCorrelation); break;
      case CUPTI_ACTIVITY_KIND_MEMCPY2: size = sizeof(CUpti_ActivityMemcpyPtoP4); break;
      case CUPTI_ACTIVITY_KIND_MEMORY2: size = sizeof(CUpti_ActivityMemory4); break;
      case CUPTI_ACTIVITY_KIND_MEMORY_POOL: size = sizeof(CUpti_ActivityMemoryPool3); break;
      default: size = sizeof(CUpti_Activity); break;
    }
    g_collected.records.emplace_back(bytes, bytes + size);
  }
  std::free(buffer - g_misalign);
}

inline Collected take() {
  std::lock_guard lock(g_mutex);
  Collected out = std::move(g_collected);
  g_collected = Collected{};
  return out;
}

template <typename Record>
Record as(const std::vector<uint8_t>& bytes) {
  Record record{};
  std::memcpy(&record, bytes.data(), std::min(bytes.size(), sizeof(Record)));
  return record;
}

inline CUpti_ActivityKind kind_of(const std::vector<uint8_t>& bytes) {
  return as<CUpti_Activity>(bytes).kind;
}

}  // namespace unit_client
