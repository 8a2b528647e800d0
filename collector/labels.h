// Names the program gives to its threads, NVTX categories and CUDA streams through NVTX's
// naming calls (api.h: name_os_thread, name_category, name_stream). A process-wide table
// behind one leaf lock: naming calls are rare, and windows read a copy.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "collector/event.h"

namespace profagent::collector {

struct Labels {
  std::map<uint32_t, std::string> threads;                     // OS tid -> name
  std::map<std::pair<NameId, uint32_t>, std::string> categories;  // (domain, category) -> name
  std::map<uint64_t, std::string> streams;                     // stream handle -> name
};

Labels labels_snapshot();

}  // namespace profagent::collector
