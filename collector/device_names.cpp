#include "collector/device_names.h"

namespace profagent::collector {
namespace {

// Indexed by CUpti_ActivityMemcpyKind (cupti_activity.h), spelled as Kineto spells them.
const char* copy_kind_name(uint32_t kind) {
  static const char* const kNames[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                       "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
  return kind < std::size(kNames) ? kNames[kind] : "Unknown";
}

// Indexed by CUpti_ActivityMemoryKind.
const char* memory_kind_name(uint32_t kind) {
  static const char* const kNames[] = {"Unknown", "Pageable", "Pinned",        "Device",
                                       "Array",   "Managed",  "Device Static", "Managed Static"};
  return kind < std::size(kNames) ? kNames[kind] : "Unknown";
}

}  // namespace

std::string memcpy_name(uint32_t copy_kind, uint32_t src_kind, uint32_t dst_kind) {
  return std::string("Memcpy ") + copy_kind_name(copy_kind) + " (" + memory_kind_name(src_kind) +
         " -> " + memory_kind_name(dst_kind) + ")";
}

std::string memset_name(uint32_t memory_kind) {
  return std::string("Memset (") + memory_kind_name(memory_kind) + ")";
}

std::string sync_name(uint32_t sync_type) {
  switch (sync_type) {  // CUpti_ActivitySynchronizationType
    case 1: return "Event Sync";
    case 2: return "Stream Wait Event";
    case 3: return "Stream Sync";
    case 4: return "Context Sync";
    default: return "Unknown Sync";
  }
}

}  // namespace profagent::collector
