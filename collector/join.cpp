#include "collector/join.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "collector/annotations.h"
#include "collector/names.h"
#include "collector/collectives.h"
#include "collector/flat_map.h"
#include "collector/graph_captures.h"
#include "collector/host_id_map.h"
#include "collector/huge_pages.h"
#include "collector/join_names.h"
#include "collector/shapes.h"

namespace profagent::collector {
namespace {

bool encloses(const HostRecord& outer, const HostRecord& inner) {
  return outer.start_ns <= inner.start_ns && inner.end_ns <= outer.end_ns;
}

class Joiner {
 public:
  Joiner(JoinInput&& input, Trace& trace) : in_(std::move(input)), trace_(trace) {}

  JoinCounts run() {
    build_host_records();
    add_driver_calls();
    want_linked_hosts();
    sort_and_nest();  // indexes the linked host records on its way
    link_device_records();
    counts_.graph_replays_without_capture = attribute_graph_replays(trace_, in_.window_end_ns).without_capture;
    assign_call_correlations();
    sort_device_records();
    name_streams();
    return counts_;
  }

 private:
  // Fills a fresh record in place: a HostRecord is large, moving each one would cost more than
  // filling it. Inline in its loop (once per host event; out of line it cost ~20 instructions
  // per event in calls and spills).
  [[gnu::always_inline]] void fill_host_record(HostRecord& r, const ThreadEvents& thread, const HostEvent& event) {
    r.start_ns = in_.converter.to_ns(event.start);
    r.end_ns = std::max(r.start_ns, in_.converter.to_ns(event.end));
    r.id = event.id;
    r.pid = thread.pid;
    r.tid = thread.tid;
    r.kind = EventKind(event.kind);
    r.flags = event.flags;
    r.result = event.result;
    r.name = names_.name(event.name);
    r.arg0 = event.arg0;
    r.arg1 = event.arg1;
    if (event.flags & kFlagCallback) {  // recorded from CUPTI's callback (event.h: kFlagCallback)
      r.correlation = uint32_t(event.arg0);
      r.arg0 = event.arg1;
      r.arg1 = 0;
      return;
    }
    if (r.kind == EventKind::Launch) r.kernel_name = names_.kernel(event.arg0);
    if (r.kind == EventKind::Operator && event.arg0 != 0) {
      InputShapes shapes;
      read_shapes(event.arg0, in_.names, shapes.dims, shapes.types);
      if (!shapes.dims.empty() || !shapes.types.empty()) set_shapes(trace_, r, std::move(shapes));
    }
    if (r.kind == EventKind::Operator && (event.flags & kFlagCollective)) {
      CollectiveArgs args;
      if (take_collective(event.arg1, &args)) {
        r.collective = int32_t(trace_.collectives.size());
        trace_.collectives.push_back(args);
      }
    }
    // Most records have none: the call is skipped for them (the record's 0 is "none").
    if (event.flags & kFlagAnnotated) r.annotation = add_annotation(trace_, event, in_.names, labels_);
  }

  // A stack tag follows its event on the same thread (event.h): it names the last record's
  // stack. The id is the raw interned one here; the window's symbolisation renumbers it.
  // The program names streams by their handle (nvtxNameCudaStream); the trace's rows are device
  // stream ids: a launch, copy or set issued on a named stream tells which id is that stream.
  void name_streams() {
    if (labels_.streams.empty()) return;
    std::map<uint32_t, std::string> names;
    for (const DeviceRecord& d : trace_.device) {
      if (d.host < 0 || size_t(d.host) >= trace_.host.size()) continue;
      const HostRecord& call = trace_.host[size_t(d.host)];
      const bool on_stream = call.kind == EventKind::Launch || call.kind == EventKind::Memcpy || call.kind == EventKind::Memset;
      if (!on_stream || (call.flags & kFlagCallback)) continue;
      if (auto found = labels_.streams.find(call.arg1); found != labels_.streams.end()) names[d.stream] = found->second;
    }
    trace_.stream_names.assign(names.begin(), names.end());
  }

  // A thread's events may come in two lists (a streamed window's tail: what its segments held,
  // then the rest), the tag first in the second: its call is then the first list's last record.
  void attach_stack(const HostEvent& tag, size_t thread_last) {
    if (!trace_.host.empty() && trace_.host.back().id == tag.id) {
      trace_.host.back().stack = uint32_t(tag.arg0);
    } else if (thread_last < trace_.host.size() && trace_.host[thread_last].id == tag.id) {
      trace_.host[thread_last].stack = uint32_t(tag.arg0);
    } else {
      ++counts_.orphan_stacks;
    }
  }

  // What the join learns from each record it adds to trace_.host, while the record is at hand
  // (no pass over a million records later): whether they are still in host_before order, and
  // the CUDA calls among them.
  void note_added() {
    const size_t n = trace_.host.size();
    if (host_sorted_ && n > 1 && host_before(trace_.host[n - 1], trace_.host[n - 2])) host_sorted_ = false;
    counts_.cuda_calls += is_cuda_call(trace_.host[n - 1].kind);
  }

  void build_host_records() {
    size_t total = 0;
    for (const ThreadEvents& thread : in_.threads) total += thread.events.size();
    reserve_on_huge_pages(trace_.host, total);  // hundreds of MB in a big window
    std::map<std::pair<uint32_t, uint32_t>, size_t> last_of_thread;  // (pid, tid) -> its last record so far
    // A copy of it starts each record: cheaper than value-initialising one, whose names' default
    // constructors each look up the name table.
    static const HostRecord blank{};
    for (const ThreadEvents& thread : in_.threads) {
      const auto last = last_of_thread.try_emplace({thread.pid, thread.tid}, SIZE_MAX).first;
      const size_t records_before = trace_.host.size();
      for (const HostEvent& event : thread.events) {
        if (EventKind(event.kind) == EventKind::StackTag) {
          attach_stack(event, last->second);
          continue;
        }
        fill_host_record(trace_.host.emplace_back(blank), thread, event);
        note_added();
      }
      if (trace_.host.size() > records_before) last->second = trace_.host.size() - 1;
    }
    in_.threads = {};  // the raw events are done with: their pages serve what comes next
  }

  // A driver call made inside a recorded runtime call is that call's own doing: skip it. The
  // call's link names it (CUPTI linked the driver call to the id the runtime call pushed)...
  bool linked_to_recorded_call(const DeviceRecord& call) const {
    auto link = links().find(call.correlation);
    if (link == links().end()) return false;
    const EventKind* kind = kind_by_id_.find(link->second);
    return kind != nullptr && !is_scope(*kind);
  }

  // ... or, without a link, time containment. Recorded runtime calls on one thread never
  // overlap (only the outermost is recorded), so the candidate is the last one starting before
  // the call. Indexed at the first call that needs it: with CUPTI's links every driver call
  // inside a hooked call is known by its link, and the index (every runtime call) is not needed.
  bool inside_recorded_runtime_call(const DeviceRecord& call) {
    if (!runtime_calls_indexed_) index_runtime_calls(), runtime_calls_indexed_ = true;
    auto thread = runtime_calls_by_tid_.find(call.tid);
    if (thread == runtime_calls_by_tid_.end()) return false;
    const auto& calls = thread->second;
    auto after = std::upper_bound(calls.begin(), calls.end(), std::pair(call.start_ns, UINT64_MAX));
    return after != calls.begin() && std::prev(after)->second >= call.end_ns;
  }

  // The recorded calls only: not the driver calls add_driver_calls() has added by then.
  void index_runtime_calls() {
    for (size_t i = 0; i < recorded_host_records_; ++i) {
      const HostRecord& r = trace_.host[i];
      if (!is_scope(r.kind)) runtime_calls_by_tid_[r.tid].emplace_back(r.start_ns, r.end_ns);
    }
    // Each thread's calls come in commit order, sorted already but for scopes and stragglers.
    for (auto& [tid, calls] : runtime_calls_by_tid_) {
      if (!std::is_sorted(calls.begin(), calls.end())) std::sort(calls.begin(), calls.end());
    }
  }

  void index_kinds() {
    for (const HostRecord& r : trace_.host) kind_by_id_.try_emplace(r.id, r.kind);
  }

  // The DRIVER records that no recorded call explains: not recorded by the CUPTI callback (with
  // this correlation id), not linked to a recorded runtime call. Usually none (a library's
  // launches): the tables the rest of add_driver_calls needs are then never built.
  std::vector<const DeviceRecord*> unexplained_driver_calls() {
    std::vector<const DeviceRecord*> calls;
    if (std::none_of(in_.device.begin(), in_.device.end(),
                     [](const DeviceRecord& d) { return d.kind == DeviceKind::DriverApi; })) {
      return calls;
    }
    index_kinds();
    FlatSet<uint32_t> recorded;  // by the CUPTI callback, with this correlation id
    for (const HostRecord& r : trace_.host) {
      if (r.flags & kFlagCallback) recorded.insert(r.correlation);
    }
    for (const DeviceRecord& call : in_.device) {
      if (call.kind != DeviceKind::DriverApi || recorded.count(call.correlation)) continue;
      if (!linked_to_recorded_call(call)) calls.push_back(&call);
    }
    return calls;
  }

  // DRIVER records of launch/copy/set calls that enqueued work no hooked call explains.
  void add_driver_calls() {
    recorded_host_records_ = trace_.host.size();
    const std::vector<const DeviceRecord*> calls = unexplained_driver_calls();
    if (calls.empty()) return;
    FlatMap<uint32_t, DeviceKind> work_by_correlation;
    work_by_correlation.reserve(in_.device.size());  // one table (its pages touched only where used)
    for (const DeviceRecord& d : in_.device) {
      if (about(d.kind).work) {
        work_by_correlation.try_emplace(d.correlation, d.kind);
      }
    }
    HostIdMap<size_t> scope_by_id;
    for (size_t i = 0; i < trace_.host.size(); ++i) {
      if (is_scope(trace_.host[i].kind)) scope_by_id.try_emplace(trace_.host[i].id, i);
    }
    for (const DeviceRecord* call : calls) {
      auto work = work_by_correlation.find(call->correlation);
      if (work == work_by_correlation.end() || inside_recorded_runtime_call(*call)) continue;
      HostRecord r;
      r.start_ns = call->start_ns;
      r.end_ns = std::max(call->start_ns, call->end_ns);
      r.pid = call->pid;
      r.tid = call->tid;
      r.kind = about(work->second).issued_by;
      r.flags = kFlagDriverApi | kFlagAsync;
      r.name = call->name;
      r.correlation = call->correlation;
      clamp_into_scope(r, scope_by_id);
      trace_.host.push_back(std::move(r));
      note_added();
    }
  }

  // CUPTI's driver records are on our clock only to within the alignment offset, so a call
  // made inside an operator may seem to end a little after it. The pushed external id says
  // which scope (on the same thread) issued it: the call is clamped into that scope, so it
  // nests there and the scope's CUDA time includes its work.
  void clamp_into_scope(HostRecord& r, const HostIdMap<size_t>& scope_by_id) const {
    auto link = links().find(r.correlation);
    if (link == links().end()) return;
    const size_t* scope = scope_by_id.find(link->second);
    if (scope == nullptr) return;
    const HostRecord& s = trace_.host[*scope];
    if (s.tid != r.tid || s.pid != r.pid) return;
    r.start_ns = std::clamp(r.start_ns, s.start_ns, s.end_ns);
    r.end_ns = std::clamp(r.end_ns, r.start_ns, s.end_ns);
  }

  // Only Operator/Range/Step records can enclose others (only the outermost runtime call is
  // recorded; driver calls inside one are dropped), so only they go on the stack: runs of
  // zero-length runtime calls with equal timestamps never chain into a deep stack.
  void sort_and_nest() {
    sort_host_records();
    std::vector<int64_t> scopes;
    const bool index = !in_.device.empty();  // host-only: nothing to link
    for (size_t i = 0; i < trace_.host.size(); ++i) {
      HostRecord& r = trace_.host[i];
      if (index) index_host_record(r, i);
      if (i > 0 && trace_.host[i - 1].tid != r.tid) scopes.clear();
      while (!scopes.empty() && !encloses(trace_.host[scopes.back()], r)) scopes.pop_back();
      r.parent = scopes.empty() ? kNoIndex : scopes.back();
      r.external_id = is_scope(r.kind) || scopes.empty() ? r.id : trace_.host[scopes.back()].id;
      if (r.flags & kFlagDriverApi) {  // the pushed id names its scope even across threads
        auto link = links().find(r.correlation);
        if (link != links().end()) r.external_id = link->second;
      }
      // An NVTX start/end range may span several threads' work: it encloses nothing.
      const bool start_end = r.kind == EventKind::Range && (r.flags & kFlagRangeStartEnd);
      if (is_scope(r.kind) && !start_end) scopes.push_back(int64_t(i));
    }
  }

  static bool device_before(const DeviceRecord& a, const DeviceRecord& b) { return a.start_ns < b.start_ns; }

  using HostKey = std::tuple<uint32_t, uint64_t, uint64_t, int, uint64_t>;
  static HostKey host_key(const HostRecord& r) {
    return {r.tid, r.start_ns, UINT64_MAX - r.end_ns, nesting_rank(r.kind), r.id};
  }

  // host_key(a) < host_key(b), deciding on the first field that differs (mostly tid or start)
  // without computing the others.
  static bool host_before(const HostRecord& a, const HostRecord& b) {
    if (a.tid != b.tid) return a.tid < b.tid;
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    if (a.end_ns != b.end_ns) return a.end_ns > b.end_ns;  // longest first
    const int rank_a = nesting_rank(a.kind), rank_b = nesting_rank(b.kind);
    if (rank_a != rank_b) return rank_a < rank_b;
    return a.id < b.id;
  }

  using SortKey = std::pair<HostKey, uint32_t>;

  // Sorts [begin, end) by insertion, moving at most `budget` keys (less what it moved): false
  // when that was not enough (the range is then partly sorted).
  template <typename Key>
  static bool insertion_sort(Key* begin, Key* end, size_t& budget) {
    for (Key* at = begin + (begin != end); at < end; ++at) {
      if (!(*at < at[-1])) continue;
      Key held = *at;
      Key* to = at;
      for (; to != begin && held < to[-1]; --to) {
        if (budget-- == 0) return *to = held, false;
        *to = to[-1];
      }
      *to = held;
    }
    return true;
  }

  // The records come thread by thread, each in commit order: a scope right after what it
  // encloses, so it only moves back past its own children. Each thread's run is sorted by
  // insertion (moves bounded: a few per record), then the runs are put in thread order. False
  // when that did not sort them (moves over the bound, a thread in two runs): std::sort then.
  static bool sort_thread_runs(std::vector<SortKey>& keys) {
    size_t budget = 8 * keys.size() + 1024;
    std::vector<std::pair<size_t, size_t>> runs;  // [begin, end) of one thread's keys
    for (size_t begin = 0, end = 0; begin < keys.size(); begin = end) {
      const uint32_t tid = std::get<0>(keys[begin].first);
      for (end = begin + 1; end < keys.size() && std::get<0>(keys[end].first) == tid; ++end) {}
      if (!insertion_sort(keys.data() + begin, keys.data() + end, budget)) return false;
      runs.emplace_back(begin, end);
    }
    auto by_first_key = [&](const auto& a, const auto& b) { return keys[a.first] < keys[b.first]; };
    if (!std::is_sorted(runs.begin(), runs.end(), by_first_key)) {
      std::sort(runs.begin(), runs.end(), by_first_key);
      std::vector<SortKey> ordered;
      ordered.reserve(keys.size());
      for (const auto& [begin, end] : runs) ordered.insert(ordered.end(), keys.begin() + ptrdiff_t(begin), keys.begin() + ptrdiff_t(end));
      keys.swap(ordered);
    }
    return std::is_sorted(keys.begin(), keys.end());
  }

  // Sorts (tid, start, longest first, widest scope first) through a permutation: records are
  // large, keys are small.
  void sort_host_records() {
    // One thread's events come in commit (end) order: flat calls are usually sorted already,
    // and then the check made while they were added is all it costs (no key vector).
    if (host_sorted_) return;
    std::vector<SortKey> keys;  // the record's index breaks ties
    keys.reserve(trace_.host.size());
    for (size_t i = 0; i < trace_.host.size(); ++i) keys.emplace_back(host_key(trace_.host[i]), uint32_t(i));
    if (!sort_thread_runs(keys)) std::sort(keys.begin(), keys.end());
    std::vector<uint32_t> source(keys.size());  // sorted position -> current position
    for (size_t i = 0; i < keys.size(); ++i) source[i] = keys[i].second;
    keys = {};
    permute_in_place(trace_.host, source);
  }

  // By start, equal starts in link order (a stable sort), through a permutation as above.
  // CUPTI delivers each stream's records in order, so often nothing moves at all; what does
  // move moves little (a synchronisation's record comes after the work it waited for, which
  // started after it): insertion first, with a bound, as for the host records.
  void sort_device_records() {
    if (device_sorted_) return;
    std::vector<std::pair<uint64_t, uint32_t>> keys;
    keys.reserve(trace_.device.size());
    for (size_t i = 0; i < trace_.device.size(); ++i) keys.emplace_back(trace_.device[i].start_ns, uint32_t(i));
    size_t budget = 8 * keys.size() + 1024;
    if (!insertion_sort(keys.data(), keys.data() + keys.size(), budget)) std::sort(keys.begin(), keys.end());
    std::vector<uint32_t> source(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) source[i] = keys[i].second;
    keys = {};
    permute_in_place(trace_.device, source);
  }

  // Applies `source` (destination index -> source index) cycle by cycle: no second vector of
  // large records. A finished position gets source[i] = i.
  template <typename Record>
  static void permute_in_place(std::vector<Record>& records, std::vector<uint32_t>& source) {
    for (size_t start = 0; start < records.size(); ++start) {
      if (source[start] == start) continue;
      Record held = std::move(records[start]);
      size_t at = start;
      while (source[at] != start) {
        const size_t from = source[at];
        records[at] = std::move(records[from]);
        source[at] = uint32_t(at);
        at = from;
      }
      records[at] = std::move(held);
      source[at] = uint32_t(at);
    }
  }

  // Only the ids some device record links to are indexed: a window of a million host calls
  // and a few device records must not hash them all. sort_and_nest indexes the records, once
  // sorted (index_host_record). The same walk finds each context's device (name_record: a
  // synchronisation's record has none).
  void want_linked_hosts() {
    for (const DeviceRecord& d : in_.device) {
      if (about(d.kind).work) device_by_context_.try_emplace(d.context, d.device);
      if (d.kind == DeviceKind::DriverApi) continue;
      auto link = links().find(d.correlation);
      if (link != links().end()) index_by_id_.try_emplace(link->second, kNoIndex);
    }
  }

  void index_host_record(const HostRecord& r, size_t i) {
    if (r.flags & (kFlagDriverApi | kFlagCallback)) {  // known by their own correlation id
      driver_by_correlation_[r.correlation] = int64_t(i);
    } else if (r.id != 0) {
      if (int64_t* wanted = index_by_id_.find(r.id)) *wanted = int64_t(i);
    }
  }

  // The host record that issued `d`: kNoIndex if none is known, -2 if it is outside the window.
  int64_t issuer_of(const DeviceRecord& d) const {
    auto driver = driver_by_correlation_.find(d.correlation);
    if (driver != driver_by_correlation_.end()) return driver->second;
    auto link = links().find(d.correlation);
    if (link == links().end()) return kNoIndex;
    const int64_t* host = index_by_id_.find(link->second);
    return host == nullptr || *host == kNoIndex ? -2 : *host;
  }

  void name_record(DeviceRecord& d) {
    if (d.kind == DeviceKind::Kernel) {
      d.name = names_.demangled(d.name);
      if (d.name.empty() && d.host >= 0) d.name = trace_.host[d.host].kernel_name;
    }
    if (d.kind == DeviceKind::Sync) {
      auto device = device_by_context_.find(d.context);
      if (device != device_by_context_.end()) d.device = device->second;
    }
  }

  void link_device_records() {
    // The kept records are compacted within in_.device, which then becomes trace_.device: no
    // second vector of device records. Their order is checked on the way (sort_device_records).
    size_t kept = 0;
    for (size_t i = 0; i < in_.device.size(); ++i) {
      if (!link_device_record(in_.device[i])) continue;
      if (kept != i) in_.device[kept] = std::move(in_.device[i]);
      if (kept > 0 && device_before(in_.device[kept], in_.device[kept - 1])) device_sorted_ = false;
      ++kept;
    }
    in_.device.erase(in_.device.begin() + ptrdiff_t(kept), in_.device.end());
    if (trace_.device.empty()) {
      trace_.device = std::move(in_.device);
    } else {
      trace_.device.insert(trace_.device.end(), std::make_move_iterator(in_.device.begin()),
                           std::make_move_iterator(in_.device.end()));
      device_sorted_ = std::is_sorted(trace_.device.begin(), trace_.device.end(), device_before);
    }
  }

  // Links one record to its issuer; false if it is not kept.
  bool link_device_record(DeviceRecord& d) {
    if (d.kind == DeviceKind::DriverApi) return false;  // became host records, or not needed
    int64_t issuer = issuer_of(d);
    if (issuer == -2) {
      ++counts_.late;
      return false;
    }
    if (issuer == kNoIndex) ++counts_.unmatched;
    d.host = issuer;
    if (issuer >= 0) {
      HostRecord& host = trace_.host[issuer];
      d.external_id = host.external_id;
      if (!is_scope(host.kind) && host.correlation == 0) host.correlation = d.correlation;
    }
    name_record(d);
    return true;
  }

  // Calls without device work learn their correlation from the links of the window: the
  // smallest one linked to their id. With CUPTI on every recorded call has a link (in no
  // particular order), hence a table by host id rather than a hash node per link.
  void assign_call_correlations() {
    auto wants_one = [](const HostRecord& r) { return r.correlation == 0 && !is_scope(r.kind) && r.id != 0; };
    // Launches have theirs from their work: then no table of every link is built.
    if (in_.call_links.empty() || std::none_of(trace_.host.begin(), trace_.host.end(), wants_one)) return;
    HostIdMap<uint32_t> first_by_id;
    for (const ExternalLink& link : in_.call_links) {
      auto [first, inserted] = first_by_id.try_emplace(link.external_id, link.correlation);
      if (!inserted) *first = std::min(*first, link.correlation);
    }
    in_.call_links = {};
    for (HostRecord& r : trace_.host) {
      if (!wants_one(r)) continue;
      if (const uint32_t* first = first_by_id.find(r.id)) r.correlation = *first;
    }
  }

  const FlatMap<uint32_t, uint64_t>& links() const { return links_; }
  static const FlatMap<uint32_t, uint64_t>& no_links() {
    static const auto* none = new FlatMap<uint32_t, uint64_t>;  // leaked: exit-safe
    return *none;
  }

  JoinInput in_;
  // Chosen once: links() is asked several times per device record.
  const FlatMap<uint32_t, uint64_t>& links_ = in_.links ? *in_.links : no_links();
  Trace& trace_;
  JoinCounts counts_;
  Labels labels_ = labels_snapshot();  // NVTX category names
  JoinNames names_{in_.names, in_.kernel_names};  // after in_, whose snapshots it reads
  HostIdMap<EventKind> kind_by_id_;
  HostIdMap<int64_t> index_by_id_;  // linked id -> host index (or kNoIndex)
  FlatMap<uint32_t, int64_t> driver_by_correlation_;
  FlatMap<uint32_t, uint32_t> device_by_context_;
  std::unordered_map<uint32_t, std::vector<std::pair<uint64_t, uint64_t>>> runtime_calls_by_tid_;
  bool runtime_calls_indexed_ = false;
  size_t recorded_host_records_ = 0;  // trace_.host's records before the driver calls were added
  bool host_sorted_ = true;  // trace_.host in host_before order so far (note_added)
  bool device_sorted_ = true;  // trace_.device by start, as link_device_records found it
};

}  // namespace

JoinCounts join(JoinInput&& input, Trace& trace) {
  return Joiner(std::move(input), trace).run();
}

}  // namespace profagent::collector
