#include "collector/interval_peek.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "collector/api.h"
#include "collector/clock.h"
#include "collector/device_pool.h"
#include "collector/join.h"
#include "collector/log.h"
#include "collector/names.h"
#include "collector/segment_stream.h"
#include "collector/session_state.h"

namespace profagent::collector {
namespace {

// What the interval's device records may link to: its host events' ids, and the CUPTI
// correlations of the calls the CUPTI callback recorded (event.h: kFlagCallback).
struct IntervalIds {
  std::unordered_set<uint64_t> hosts;
  std::unordered_map<uint32_t, uint64_t> callback_calls;  // correlation -> host event id
};

IntervalIds interval_ids(const std::vector<ThreadEvents>& threads) {
  IntervalIds ids;
  for (const ThreadEvents& thread : threads) {
    for (const HostEvent& event : thread.events) {
      ids.hosts.insert(event.id);
      if (event.flags & kFlagCallback) ids.callback_calls.emplace(uint32_t(event.arg0), event.id);
    }
  }
  return ids;
}

// Copies of the pool's links and records that belong to the interval's calls (the pool keeps
// them for the window's join). `served`: the host ids whose work came.
struct IntervalDevice {
  FlatMap<uint32_t, uint64_t> links;
  std::vector<ExternalLink> call_links;
  std::vector<DeviceRecord> records;
  std::unordered_set<uint64_t> served;
};

IntervalDevice copy_device_records(Session& s, const IntervalIds& ids) {
  IntervalDevice device;
  std::lock_guard lock(s.mutex);
  for (const auto& [correlation, link] : s.pool.links) {
    if (!ids.hosts.count(link.external_id)) continue;
    device.links.emplace(correlation, link.external_id);
    device.call_links.push_back({correlation, link.external_id});
  }
  // A range CUPTI linked the call's work to names that work's scope, as in the window's join.
  for (const auto& [correlation, id] : ids.callback_calls) {
    if (device.links.try_emplace(correlation, id).second) device.call_links.push_back({correlation, id});
  }
  for (const DeviceRecord& record : s.pool.records) {
    if (record.kind == DeviceKind::DriverApi) continue;
    auto link = device.links.find(record.correlation);
    if (link == device.links.end()) continue;
    device.records.push_back(record);
    if (about(record.kind).work) device.served.insert(link->second);
  }
  return device;
}

bool device_can_deliver(const Session& s) {
  return g_device_tracing.load() && g_active_device_backend.load() != nullptr && !s.forked_child.load();
}

// Moves the calls of threads[first..] that queued device work without a record yet into
// `held` (a launch is written with its kernel, an interval later). Returns the earliest end
// of a call held (~0: none).
uint64_t hold_calls_without_work(std::vector<ThreadEvents>& threads, size_t first, const IntervalDevice& device,
                                 std::vector<ThreadEvents>& held) {
  uint64_t earliest_end = ~uint64_t{0};
  for (size_t i = first; i < threads.size(); ++i) {
    ThreadEvents& thread = threads[i];
    auto served = [&](const HostEvent& e) {
      if (!expects_device_work(e)) return true;
      if (!(e.flags & kFlagCallback)) return device.served.count(e.id) != 0;
      auto link = device.links.find(uint32_t(e.arg0));
      return link != device.links.end() && device.served.count(link->second) != 0;
    };
    auto waiting = std::stable_partition(thread.events.begin(), thread.events.end(), served);
    if (waiting == thread.events.end()) continue;
    for (const HostEvent& e : move_events_from(thread, waiting, held).events) earliest_end = std::min(earliest_end, e.end);
  }
  return earliest_end;
}

// Keeps the device records and links of the calls still in `threads`: those of a call held or
// carried come with it, later (a record without its call would be written twice).
void keep_device_of(const std::vector<ThreadEvents>& threads, IntervalDevice& device) {
  const IntervalIds kept = interval_ids(threads);
  for (auto link = device.links.begin(); link != device.links.end();) {
    link = kept.hosts.count(link->second) ? std::next(link) : device.links.erase(link);
  }
  std::erase_if(device.call_links, [&](const ExternalLink& link) { return !kept.hosts.count(link.external_id); });
  std::erase_if(device.records, [&](const DeviceRecord& record) { return !device.links.count(record.correlation); });
}

// The host events committed since the last peek, under the freeze lock (no cut meanwhile).
// False when no window is being recorded.
bool take_interval(Session& s, IntervalCursor& cursor, PeekedInterval& out, std::vector<ThreadEvents>& fresh,
                   uint64_t& start_ticks, uint64_t& through_ticks, clock::TickConverter& converter) {
  std::lock_guard freeze_lock(s.freeze_mutex);
  if (state() != RecordState::Record) return false;
  // Bounded like a streamed window's segment: the memory of an interval's join stays a constant,
  // and a partial trace that lags catches up over the next intervals.
  const size_t budget = StreamLimits{}.segment_events;
  // Before the peek: a call that returned by this instant was committed before the buffers are
  // read. (Read after them, a whole call could begin and end between the read and the instant,
  // missing from an interval that claims it: reliability.partial_sigkill saw one under load.)
  through_ticks = now();
  DrainResult host = peek_all(budget);
  for (const ThreadEvents& thread : host.threads) {  // a thread cut short: its events up to here
    if (thread.events.size() >= budget) through_ticks = std::min(through_ticks, thread.events.back().end);
  }
  clock::add_anchor();
  converter = clock::converter();
  std::lock_guard lock(s.mutex);
  if (s.cuts != cursor.cuts) {  // a window was cut since: what was held is in its own trace
    cursor.cuts = s.cuts;
    cursor.held.clear();
    cursor.carried.clear();
    out.new_window = true;
  }
  out.trace.window = s.window + 1;
  start_ticks = s.window_start_ticks;
  fresh = std::move(host.threads);
  return true;
}

// The last tick whose time in ns is before `ticks`' (a counter's tick is shorter than a ns:
// the interval's end, in ns, must be before the held call's end, not equal to it).
uint64_t last_tick_before(const clock::TickConverter& converter, uint64_t ticks) {
  const uint64_t ns = converter.to_ns(ticks);
  uint64_t before = ticks == 0 ? 0 : ticks - 1;
  for (int step = 0; step < 64 && before > 0 && converter.to_ns(before) >= ns; ++step) --before;
  return before;
}

// The interval's calls with their device records: the calls held at the last peek first,
// neither held nor carried again (a kernel that never ends cannot stall the partial trace);
// then the events carried from it (they ended after its end) and the fresh ones, less those
// held now (their record has not come) and those that ended after the interval's end, which
// moves back to just before the earliest call held now ended.
std::vector<ThreadEvents> settle_interval(Session& s, IntervalCursor& cursor, std::vector<ThreadEvents> fresh,
                                          const clock::TickConverter& converter, uint64_t& through_ticks,
                                          IntervalDevice& device) {
  std::vector<ThreadEvents> threads = std::move(cursor.held);
  cursor.held.clear();
  const size_t first_fresh = threads.size();
  threads.insert(threads.end(), std::make_move_iterator(cursor.carried.begin()),
                 std::make_move_iterator(cursor.carried.end()));
  cursor.carried.clear();
  threads.insert(threads.end(), std::make_move_iterator(fresh.begin()), std::make_move_iterator(fresh.end()));
  device = copy_device_records(s, interval_ids(threads));
  if (device_can_deliver(s)) {
    const uint64_t earliest_held_end = hold_calls_without_work(threads, first_fresh, device, cursor.held);
    if (earliest_held_end != ~uint64_t{0}) {
      through_ticks = std::min(through_ticks, last_tick_before(converter, earliest_held_end));
    }
  }
  std::vector<ThreadEvents> later(std::make_move_iterator(threads.begin() + ptrdiff_t(first_fresh)),
                                  std::make_move_iterator(threads.end()));
  threads.resize(first_fresh);
  split_at_cut(later, through_ticks, cursor.carried);
  threads.insert(threads.end(), std::make_move_iterator(later.begin()), std::make_move_iterator(later.end()));
  if (!cursor.held.empty() || !cursor.carried.empty()) keep_device_of(threads, device);
  return threads;
}

void peek(IntervalCursor& cursor, PeekedInterval& out) {
  Session& s = session();
  out = PeekedInterval{};
  if (!s.started.load()) return;
  std::vector<ThreadEvents> fresh;
  uint64_t start_ticks = 0, through_ticks = 0;
  clock::TickConverter converter;
  if (!take_interval(s, cursor, out, fresh, start_ticks, through_ticks, converter)) return;
  out.recording = true;
  // After the peek: the records of every call in it that completed are in the flush (no lock
  // held: the flush is a CUPTI call) or in a drain the periodic poll took just before it,
  // waited for (else its launches would be held, and the interval end before them).
  collect_device_records(s, true);
  wait_for_drains_in_flight(s, clock::monotonic_ns() + kDrainInFlightWaitNs);
  IntervalDevice device;
  std::vector<ThreadEvents> threads = settle_interval(s, cursor, std::move(fresh), converter, through_ticks, device);
  Trace& trace = out.trace;
  trace.start_ns = converter.to_ns(start_ticks);
  trace.end_ns = converter.to_ns(through_ticks);
  trace.process.thread_names = window_thread_names(threads);
  describe_window(s, trace);
  for (const ThreadEvents& thread : threads) out.events += thread.events.size();
  JoinInput input{std::move(threads), names_snapshot(), kernel_names_snapshot(), converter,
                  std::move(device.records), &device.links, std::move(device.call_links)};
  join(std::move(input), trace);
  for (HostRecord& record : trace.host) record.stack = 0;  // stacks are symbolised for the final trace only
}

}  // namespace

bool peek_interval(IntervalCursor& cursor, PeekedInterval& out) noexcept {
  try {
    peek(cursor, out);
    return true;
  } catch (...) {
    static CappedSite peeks_lost;  // may recur at every interval
    log_capped(peeks_lost, LogLevel::Warn, "out of memory while looking at the window being recorded: "
                                           "the partial trace misses an interval");
    out = PeekedInterval{};
    return false;
  }
}

}  // namespace profagent::collector
