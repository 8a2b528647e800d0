#include "exporters/trace_links.h"

#include <algorithm>
#include <string_view>
#include <tuple>

#include "exporters/trace_figures.h"

namespace profagent::exporters {
namespace {

bool issues_work(EventKind k) { return k == EventKind::Launch || k == EventKind::Memcpy || k == EventKind::Memset; }

// Whether a host record is a cudaEventRecord call (or its _WithFlags/_ptsz forms): the name is
// looked at once per run of records with the same name, not once per call.
class EventRecordNames {
 public:
  bool operator()(const HostRecord& h) {
    if (h.kind != EventKind::Runtime) return false;
    if (h.name.id() != last_id_) last_id_ = h.name.id(), last_is_ = std::string_view(h.name).starts_with("cudaEventRecord");
    return last_is_;
  }

 private:
  uint32_t last_id_ = UINT32_MAX;
  bool last_is_ = false;
};

// The runtime's special stream handles (0 default, cudaStreamLegacy, cudaStreamPerThread) name
// a different stream per thread under per-thread default streams: keyed with the thread.
constexpr uint64_t kLastSpecialStreamHandle = 2;

std::pair<uint64_t, uint32_t> stream_key(uint64_t handle, uint32_t tid) {
  return {handle, handle <= kLastSpecialStreamHandle ? tid : 0};
}

}  // namespace

TraceLinks::TraceLinks(const Trace& trace, uint32_t fresh_from) : t_(trace), fresh_from_(fresh_from) {
  walk_host_records();
  index_stream_ids();
  collect_device_spans();
}

// One pass over the host records (a window's largest array: each pass costs milliseconds per
// million records) finds the largest id in use, the calls without one, the event records and
// the earliest start; the calls without an id are then given fresh ones in record order.
void TraceLinks::walk_host_records() {
  const std::size_t n = t_.host.size();
  uint32_t largest = 0;
  call_correlation_.assign(n, 0);
  std::vector<bool> wants_fresh(n, false);
  EventRecordNames event_record;
  for (std::size_t i = 0; i < n; ++i) {
    const HostRecord& h = t_.host[i];
    earliest_ns_ = std::min(earliest_ns_, h.start_ns);
    largest = std::max(largest, h.correlation);
    if (event_record(h)) records_.push_back({h.arg0, {h.start_ns, i}});
    if (is_scope(h.kind)) continue;
    if (h.correlation != 0) call_correlation_[i] = h.correlation;
    else wants_fresh[i] = true;
  }
  for (const DeviceRecord& d : t_.device) {
    earliest_ns_ = std::min(earliest_ns_, d.start_ns);
    largest = std::max(largest, d.correlation);
  }
  std::sort(records_.begin(), records_.end());
  next_ = std::max<uint64_t>(uint64_t(largest) + 1, fresh_from_);
  for (std::size_t i = 0; i < n; ++i) {
    if (wants_fresh[i]) call_correlation_[i] = next_free();
  }
}

// Ids above the largest one in use first; past 2^32 - 1 (a process that made billions of
// calls) the gaps below it, so an id never leaves 32 bits and never repeats one in use. The
// sorted list of ids in use is only built for that rare case.
uint32_t TraceLinks::next_free_wrapped() {
  if (!wrapped_) wrapped_ = true, index_used_ids();
  for (uint64_t tries = 0; tries <= UINT32_MAX; ++tries) {
    if (next_ > UINT32_MAX) next_ = 1;
    const auto candidate = uint32_t(next_++);
    if (!std::binary_search(used_.begin(), used_.end(), candidate)) {
      used_.insert(std::upper_bound(used_.begin(), used_.end(), candidate), candidate);
      return candidate;
    }
  }
  return 0;  // every 32-bit id is in use: cannot happen with fewer than 4 billion records
}

void TraceLinks::index_used_ids() {
  for (const HostRecord& h : t_.host) {
    if (h.correlation != 0) used_.push_back(h.correlation);
  }
  for (const DeviceRecord& d : t_.device) {
    if (d.correlation != 0) used_.push_back(d.correlation);
  }
  for (uint32_t id : call_correlation_) {
    if (id != 0) used_.push_back(id);
  }
  std::sort(used_.begin(), used_.end());
  used_.erase(std::unique(used_.begin(), used_.end()), used_.end());
}

void TraceLinks::index_stream_ids() {
  for (const DeviceRecord& d : t_.device) {
    if (!about(d.kind).work || d.host < 0) continue;
    const HostRecord& h = t_.host[std::size_t(d.host)];
    if (!issues_work(h.kind) || (h.flags & kFlagDriverApi)) continue;
    // Work on one stream comes in runs: a repeat of the entry before adds nothing to the sort.
    const std::pair<std::pair<uint64_t, uint32_t>, uint32_t> entry{stream_key(h.arg1, h.tid), d.stream};
    if (streams_.empty() || streams_.back() != entry) streams_.push_back(entry);
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

// One entry per (device record, enclosing scope), sorted so each scope's work on one row is a
// run, runs merged: no hash map over a million device records.
void TraceLinks::collect_device_spans() {
  std::vector<DeviceSpan> parts;
  for (const DeviceRecord& d : t_.device) {
    if (!about(d.kind).work || d.host < 0) continue;
    for (int64_t s = d.host; s >= 0; s = t_.host[std::size_t(s)].parent) {
      if (is_scope(t_.host[std::size_t(s)].kind)) parts.push_back({std::size_t(s), d.device, d.stream, d.start_ns, d.end_ns});
    }
  }
  auto row_and_scope = [](const DeviceSpan& a, const DeviceSpan& b) {
    return std::tie(a.device, a.stream, a.scope) < std::tie(b.device, b.stream, b.scope);
  };
  std::sort(parts.begin(), parts.end(), row_and_scope);
  for (const DeviceSpan& part : parts) {
    if (!spans_.empty() && !row_and_scope(spans_.back(), part)) {
      spans_.back().start_ns = std::min(spans_.back().start_ns, part.start_ns);
      spans_.back().end_ns = std::max(spans_.back().end_ns, part.end_ns);
    } else {
      spans_.push_back(part);
    }
  }
  std::sort(spans_.begin(), spans_.end(), [](const DeviceSpan& a, const DeviceSpan& b) {
    return std::tuple(a.device, a.stream, a.start_ns, UINT64_MAX - a.end_ns, a.scope) <
           std::tuple(b.device, b.stream, b.start_ns, UINT64_MAX - b.end_ns, b.scope);
  });
}

}  // namespace profagent::exporters
