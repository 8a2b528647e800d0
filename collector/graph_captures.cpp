#include "collector/graph_captures.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "collector/api.h"
#include "collector/clock.h"

namespace profagent::collector {
namespace {

// A node made while something was recorded, waiting for the join of its window.
struct CreatedNote {
  uint64_t node = 0;
  uint64_t ns = 0;   // agent clock, inside the API call that made the node
  uint32_t tid = 0;  // OS thread id, as host records carry it
};

struct CaptureTable {
  std::mutex mutex;  // leaf: nothing is called with it held
  std::vector<CreatedNote> pending;
  std::unordered_map<uint64_t, uint64_t> origin_by_clone;
  std::unordered_map<uint64_t, uint64_t> scope_by_node;  // External id open at the node's making
  std::atomic<uint64_t> not_kept{0};
};

CaptureTable& table() {
  static auto* t = new CaptureTable;  // leaked: CUPTI may call back during exit
  return *t;
}

// Clone chains are short (a clone of a clone of a captured graph, instantiated): the bound
// only guards against a cycle that ids reused by a faulty driver could make.
constexpr int kMaxCloneHops = 16;

bool encloses(const HostRecord& r, uint64_t ns) { return r.start_ns <= ns && ns <= r.end_ns; }

// A start/end range may span several threads' work: like the nesting, it encloses nothing.
bool nests(const HostRecord& r) {
  return !(r.kind == EventKind::Range && (r.flags & kFlagRangeStartEnd));
}

// The External id open on `tid` at `ns`: that of the innermost record enclosing the moment
// (a runtime call's is its scope's, or its own outside any scope), 0 when none does. The last
// record of the thread starting at or before `ns` is that record or nested in a sibling of it:
// its parents are the scopes around it, innermost first.
uint64_t external_id_at(const Trace& trace, uint32_t tid, uint64_t ns) {
  const auto& host = trace.host;
  auto after = std::upper_bound(host.begin(), host.end(), std::pair(tid, ns), [](const auto& key, const HostRecord& r) {
    return key.first < r.tid || (key.first == r.tid && key.second < r.start_ns);
  });
  if (after == host.begin()) return 0;
  int64_t at = int64_t(std::prev(after) - host.begin());
  if (host[size_t(at)].tid != tid) return 0;
  for (int hops = 0; at >= 0 && size_t(at) < host.size() && hops < 256; ++hops) {
    const HostRecord& r = host[size_t(at)];
    if (nests(r) && encloses(r, ns)) return r.external_id;
    at = r.parent;
  }
  return 0;
}

void keep(std::unordered_map<uint64_t, uint64_t>& map, uint64_t key, uint64_t value, CaptureTable& t) {
  if (map.size() >= kMaxGraphNodes && map.find(key) == map.end()) {
    t.not_kept.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  map[key] = value;
}

// Notes made up to the window's end are resolved now, found or not: a later window does not
// hold their moment either.
void resolve_notes(CaptureTable& t, const Trace& trace, uint64_t window_end_ns) {
  auto still_pending = std::partition(t.pending.begin(), t.pending.end(),
                                      [&](const CreatedNote& n) { return n.ns > window_end_ns; });
  for (auto it = still_pending; it != t.pending.end(); ++it) {
    const uint64_t scope = external_id_at(trace, it->tid, it->ns);
    if (scope != 0) keep(t.scope_by_node, it->node, scope, t);
  }
  t.pending.erase(still_pending, t.pending.end());
}

uint64_t scope_of(const CaptureTable& t, uint64_t node) {
  for (int hops = 0; hops < kMaxCloneHops; ++hops) {
    if (auto found = t.scope_by_node.find(node); found != t.scope_by_node.end()) return found->second;
    auto origin = t.origin_by_clone.find(node);
    if (origin == t.origin_by_clone.end()) return 0;
    node = origin->second;
  }
  return 0;
}

}  // namespace

void note_graph_node_created(uint64_t node) noexcept {
  if (node == 0 || !recording()) return;  // nothing open would be in a trace
  const CreatedNote note{node, clock::monotonic_ns(), uint32_t(syscall(SYS_gettid))};
  CaptureTable& t = table();
  try {
    std::lock_guard lock(t.mutex);
    if (t.pending.size() >= kMaxGraphNodes) {
      t.not_kept.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    t.pending.push_back(note);
  } catch (...) {
    t.not_kept.fetch_add(1, std::memory_order_relaxed);
  }
}

void note_graph_node_cloned(uint64_t clone, uint64_t original) noexcept {
  if (clone == 0 || original == 0 || clone == original) return;
  CaptureTable& t = table();
  try {
    std::lock_guard lock(t.mutex);
    keep(t.origin_by_clone, clone, original, t);
  } catch (...) {
    t.not_kept.fetch_add(1, std::memory_order_relaxed);
  }
}

GraphReplayCounts attribute_graph_replays(Trace& trace, uint64_t window_end_ns) noexcept {
  GraphReplayCounts counts;
  CaptureTable& t = table();
  try {
    std::lock_guard lock(t.mutex);
    if (!t.pending.empty()) resolve_notes(t, trace, window_end_ns);
    for (DeviceRecord& d : trace.device) {
      if (d.graph_node_id == 0) continue;
      ++counts.replayed;
      const uint64_t scope = scope_of(t, d.graph_node_id);
      if (scope != 0) {
        d.external_id = scope;
      } else {
        ++counts.without_capture;
      }
    }
  } catch (...) {
    t.not_kept.fetch_add(1, std::memory_order_relaxed);
  }
  return counts;
}

uint64_t graph_nodes_not_kept() noexcept { return table().not_kept.load(std::memory_order_relaxed); }

void reset_graph_captures() noexcept {
  CaptureTable& t = table();
  std::lock_guard lock(t.mutex);
  t.pending.clear();
  t.origin_by_clone.clear();
  t.scope_by_node.clear();
  t.not_kept.store(0);
}

}  // namespace profagent::collector
