#include "exporters/trace_links.h"

#include <algorithm>
#include <string_view>
#include <tuple>
#include <unordered_map>

namespace profagent::exporters {
namespace {

bool is_scope(EventKind k) { return k == EventKind::Operator || k == EventKind::Range || k == EventKind::Step; }

bool issues_work(EventKind k) { return k == EventKind::Launch || k == EventKind::Memcpy || k == EventKind::Memset; }

bool is_device_work(DeviceKind k) { return k == DeviceKind::Kernel || k == DeviceKind::Memcpy || k == DeviceKind::Memset; }

bool is_event_record(const HostRecord& h) {
  return h.kind == EventKind::Runtime && std::string_view(h.name).substr(0, 15) == "cudaEventRecord";
}

// The runtime's special stream handles (0 default, cudaStreamLegacy, cudaStreamPerThread) name
// a different stream per thread under per-thread default streams: keyed with the thread.
constexpr uint64_t kLastSpecialStreamHandle = 2;

std::pair<uint64_t, uint32_t> stream_key(uint64_t handle, uint32_t tid) {
  return {handle, handle <= kLastSpecialStreamHandle ? tid : 0};
}

}  // namespace

TraceLinks::TraceLinks(const Trace& trace) : t_(trace) {
  assign_call_correlations();
  index_event_records();
  index_stream_ids();
  collect_device_spans();
}

void TraceLinks::assign_call_correlations() {
  for (const HostRecord& h : t_.host) {
    if (h.correlation != 0) used_.push_back(h.correlation);
  }
  for (const DeviceRecord& d : t_.device) {
    if (d.correlation != 0) used_.push_back(d.correlation);
  }
  std::sort(used_.begin(), used_.end());
  used_.erase(std::unique(used_.begin(), used_.end()), used_.end());
  next_ = used_.empty() ? 1 : uint64_t(used_.back()) + 1;
  call_correlation_.assign(t_.host.size(), 0);
  for (std::size_t i = 0; i < t_.host.size(); ++i) {
    const HostRecord& h = t_.host[i];
    if (is_scope(h.kind)) continue;
    call_correlation_[i] = h.correlation != 0 ? h.correlation : next_free();
  }
}

// Ids above the largest one in use first; past 2^32 - 1 (a process that made billions of
// calls) the gaps below it, so an id never leaves 32 bits and never repeats one in use.
uint32_t TraceLinks::next_free() {
  for (uint64_t tries = 0; tries <= UINT32_MAX; ++tries) {
    if (next_ > UINT32_MAX) next_ = 1;
    const auto candidate = uint32_t(next_++);
    if (!std::binary_search(used_.begin(), used_.end(), candidate)) return candidate;
  }
  return 0;  // every 32-bit id is in use: cannot happen with fewer than 4 billion records
}

void TraceLinks::index_event_records() {
  for (std::size_t i = 0; i < t_.host.size(); ++i) {
    const HostRecord& h = t_.host[i];
    if (is_event_record(h)) records_.push_back({h.arg0, {h.start_ns, i}});
  }
  std::sort(records_.begin(), records_.end());
}

void TraceLinks::index_stream_ids() {
  for (const DeviceRecord& d : t_.device) {
    if (!is_device_work(d.kind) || d.host < 0) continue;
    const HostRecord& h = t_.host[std::size_t(d.host)];
    if (issues_work(h.kind) && !(h.flags & kFlagDriverApi)) streams_.push_back({stream_key(h.arg1, h.tid), d.stream});
  }
  std::sort(streams_.begin(), streams_.end());
  streams_.erase(std::unique(streams_.begin(), streams_.end(),
                             [](const auto& a, const auto& b) { return a.first == b.first; }),
                 streams_.end());
}

int64_t TraceLinks::stream_id_of(uint64_t handle, uint32_t tid) const {
  const auto key = stream_key(handle, tid);
  auto it = std::lower_bound(streams_.begin(), streams_.end(), key,
                             [](const auto& e, const auto& k) { return e.first < k; });
  if (it != streams_.end() && it->first == key) return it->second;
  // The legacy default stream is one stream for every thread: any thread's use tells its id.
  it = std::lower_bound(streams_.begin(), streams_.end(), std::pair(handle, uint32_t{0}),
                        [](const auto& e, const auto& k) { return e.first < k; });
  if (handle <= kLastSpecialStreamHandle && it != streams_.end() && it->first.first == handle) return it->second;
  return kUnknown;
}

EventWait TraceLinks::event_wait(const DeviceRecord& sync) const {
  EventWait wait;
  if (sync.host < 0) return wait;
  const HostRecord& caller = t_.host[std::size_t(sync.host)];
  if (caller.kind != EventKind::Sync) return wait;
  const uint64_t event = caller.arg1;
  // The last record of the event that started before the wait did.
  auto it = std::upper_bound(records_.begin(), records_.end(),
                             std::pair(event, std::pair(caller.start_ns, SIZE_MAX)));
  if (it == records_.begin() || std::prev(it)->first != event) return wait;
  const std::size_t record = std::prev(it)->second.second;
  wait.record_correlation = call_correlation_[record];
  wait.stream = stream_id_of(t_.host[record].arg1, t_.host[record].tid);
  return wait;
}

void TraceLinks::collect_device_spans() {
  struct Key {
    std::size_t scope;
    uint32_t device, stream;
    bool operator==(const Key& o) const { return scope == o.scope && device == o.device && stream == o.stream; }
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const { return k.scope * 1000003u ^ (uint64_t(k.device) << 32 | k.stream); }
  };
  std::unordered_map<Key, std::size_t, KeyHash> index;
  for (const DeviceRecord& d : t_.device) {
    if (!is_device_work(d.kind) || d.host < 0) continue;
    for (int64_t s = d.host; s >= 0; s = t_.host[std::size_t(s)].parent) {
      if (!is_scope(t_.host[std::size_t(s)].kind)) continue;
      auto [it, inserted] = index.try_emplace(Key{std::size_t(s), d.device, d.stream}, spans_.size());
      if (inserted) {
        spans_.push_back({std::size_t(s), d.device, d.stream, d.start_ns, d.end_ns});
      } else {
        DeviceSpan& span = spans_[it->second];
        span.start_ns = std::min(span.start_ns, d.start_ns);
        span.end_ns = std::max(span.end_ns, d.end_ns);
      }
    }
  }
  std::sort(spans_.begin(), spans_.end(), [](const DeviceSpan& a, const DeviceSpan& b) {
    return std::tuple(a.device, a.stream, a.start_ns, UINT64_MAX - a.end_ns, a.scope) <
           std::tuple(b.device, b.stream, b.start_ns, UINT64_MAX - b.end_ns, b.scope);
  });
}

}  // namespace profagent::exporters
