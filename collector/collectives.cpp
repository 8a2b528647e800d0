#include "collector/collectives.h"

#include <atomic>
#include <mutex>
#include <unordered_map>

#include "collector/api.h"

namespace profagent::collector {
namespace {

struct Store {
  std::mutex mutex;  // leaf lock: nothing is called while it is held
  std::unordered_map<uint64_t, CollectiveArgs> pending;
  uint64_t next_handle = 1;
};

Store& store() {
  static Store* s = new Store;  // leaked: hooks may run during static destruction
  return *s;
}

std::atomic<uint64_t> g_dropped{0};
std::atomic<int32_t> g_comm_rank{-1};
std::atomic<int32_t> g_comm_size{0};
std::atomic<bool> g_nccl_seen{false};

}  // namespace

uint64_t record_collective(const CollectiveArgs& args) noexcept {
  try {
    Store& s = store();
    std::lock_guard lock(s.mutex);
    if (s.pending.size() >= kMaxPendingCollectives) {
      g_dropped.fetch_add(1, std::memory_order_relaxed);
      return 0;
    }
    const uint64_t handle = s.next_handle++;
    s.pending.emplace(handle, args);
    return handle;
  } catch (...) {  // out of memory: the call is recorded without its arguments, counted
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
}

bool take_collective(uint64_t handle, CollectiveArgs* out) noexcept {
  Store& s = store();
  std::lock_guard lock(s.mutex);
  auto found = s.pending.find(handle);
  if (found == s.pending.end()) return false;
  *out = found->second;
  s.pending.erase(found);
  return true;
}

uint64_t dropped_collectives() noexcept { return g_dropped.load(std::memory_order_relaxed); }

void note_communicator(int rank, int nranks) noexcept {
  g_nccl_seen.store(true, std::memory_order_relaxed);
  int32_t unset = -1;
  if (g_comm_rank.compare_exchange_strong(unset, rank)) g_comm_size.store(nranks);
}

void apply_communicator_rank(ProcessInfo& info) noexcept {
  if (!g_nccl_seen.load(std::memory_order_relaxed)) return;
  info.backend = "nccl";
  const int32_t rank = g_comm_rank.load(), size = g_comm_size.load();
  if (!info.rank_from_environment && rank >= 0) {
    info.rank = rank;
    info.world_size = size;
  }
}

}  // namespace profagent::collector
