#include "collector/labels.h"

#include <mutex>

#include "collector/api.h"

namespace profagent::collector {
namespace {

std::mutex g_mutex;  // leaf lock
Labels* g_labels = nullptr;  // leaked: read by a freeze that may run during exit

template <typename Key>
void set(std::map<Key, std::string> Labels::*which, const Key& key, std::string_view name) noexcept {
  try {
    std::lock_guard lock(g_mutex);
    if (g_labels == nullptr) g_labels = new Labels;
    (g_labels->*which)[key] = std::string(name);
  } catch (...) {
    static SwallowedSite site{"remembering a name the program gave (NVTX) failed: it is not shown"};
    note_swallowed(site);
  }
}

}  // namespace

void name_os_thread(uint32_t tid, std::string_view name) noexcept { set(&Labels::threads, tid, name); }

void name_category(NameId domain, uint32_t category, std::string_view name) noexcept {
  set(&Labels::categories, std::pair<NameId, uint32_t>(domain, category), name);
}

void name_stream(uint64_t stream, std::string_view name) noexcept { set(&Labels::streams, stream, name); }

Labels labels_snapshot() {
  std::lock_guard lock(g_mutex);
  return g_labels != nullptr ? *g_labels : Labels{};
}

}  // namespace profagent::collector
