#include "exporters/summaries/streamed_memory.h"

#include "exporters/stack_text.h"
#include "exporters/trace_figures.h"

namespace profagent::exporters {
namespace {

// The innermost operator or range around a call (its parents are in the same segment: a
// segment holds each scope with everything it encloses).
std::string scope_around(const Trace& t, const HostRecord& call) {
  int64_t at = call.parent;
  while (valid_index(at, t.host.size()) && !is_named_scope(t.host[std::size_t(at)].kind)) at = t.host[std::size_t(at)].parent;
  return valid_index(at, t.host.size()) ? t.host[std::size_t(at)].name.str() : std::string();
}

}  // namespace

void MemoryCallsFold::want(std::vector<MemoryRecord> records) {
  for (MemoryRecord& r : records) {
    if (r.event_id != 0) waiting_[r.event_id].push_back(std::move(r));
  }
}

std::vector<MemoryRecord> MemoryCallsFold::add(const Trace& segment) {
  std::vector<MemoryRecord> joined;
  if (waiting_.empty()) return joined;
  for (std::size_t i = 0; i < segment.host.size(); ++i) {
    const HostRecord& h = segment.host[i];
    const auto found = waiting_.find(h.id);
    if (found == waiting_.end()) continue;
    for (MemoryRecord& r : found->second) {
      r.host = int64_t(i);
      joined.push_back(std::move(r));
    }
    waiting_.erase(found);
    const std::vector<uint32_t>* stack = stack_of(segment, h);
    calls_[h.id] = {h.start_ns, h.name.str(), scope_around(segment, h), stack ? call_site(segment, *stack) : std::string()};
  }
  return joined;
}

void MemoryCallsFold::complete(Trace& tail) const {
  if (calls_.empty() || !tail.memory.enabled) return;
  std::unordered_map<std::string, uint32_t> site_ids;  // 1 + index into tail.memory.call_sites
  for (MemoryRecord& r : tail.memory.records) {
    const auto found = r.host == kNoIndex && r.event_id != 0 ? calls_.find(r.event_id) : calls_.end();
    if (found == calls_.end() || found->second.call_site.empty()) continue;
    auto [id, added] = site_ids.try_emplace(found->second.call_site, uint32_t(tail.memory.call_sites.size() + 1));
    if (added) tail.memory.call_sites.push_back(found->second.call_site);
    r.call_site = id->second;
  }
  for (LiveAllocation& a : tail.memory.live) {
    const auto found = a.event_id != 0 ? calls_.find(a.event_id) : calls_.end();
    if (found == calls_.end()) continue;
    a.call_ns = found->second.start_ns;
    if (a.call_site.empty()) a.call_site = found->second.call_site;
  }
}

uint64_t MemoryCallsFold::unplaced(const Trace& tail) const {
  uint64_t count = 0;
  for (const auto& [id, records] : waiting_) {
    if (calls_.contains(id)) for (const MemoryRecord& r : records) count += !r.failed;
  }
  for (const MemoryRecord& r : tail.memory.records) count += !r.failed && r.from_device && r.event_id == 0 && r.host == kNoIndex;
  return count;
}

}  // namespace profagent::exporters
