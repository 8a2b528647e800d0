#include "collector/segment_stream.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>
#include <utility>

#include "collector/api.h"
#include "collector/clock.h"
#include "collector/device_pool.h"
#include "collector/flat_map.h"
#include "collector/join.h"
#include "collector/window_limits.h"
#include "collector/log.h"
#include "collector/names.h"
#include "collector/segment_split.h"
#include "collector/session_state.h"
#include "collector/stack_symbols.h"
#include "collector/stacks.h"

namespace profagent::collector {

StreamTurn issue_stream_ticket() noexcept;  // a friend of StreamTurn (segment_stream.h)

namespace {

// The streamed window's stacks: used by cut_segment and adopt_streamed_stacks only, by the
// holder of the turn (StreamTurn), one thread at a time and in the order of the cuts.
StreamedStacks& streamed_stacks() {
  static StreamedStacks* stacks = new StreamedStacks;  // leaked: the exit flush may run late
  return *stacks;
}

// The tickets (StreamTurn). Why turns rather than one lock around cut, symbolise and append:
// a cut flushes CUPTI and symbolising calls the loader (dladdr, libdw, the first dlopen of the
// DWARF helper), and no agent lock may be held across those (a waiter for a turn holds no lock
// and gives up after a bound); and why not one cutting thread: the exit flush must stream the
// last chunks even when the agent's thread is gone or stuck. One cut at a time rather than
// tickets at the take: two segments joined at once would double what streaming holds.
// `mutex` is a leaf (taken under the freeze lock and the session mutex to issue a ticket) and
// is never held across anything but the bookkeeping; waiting on `done_changed` releases it.
struct Turns {
  std::mutex mutex;
  std::condition_variable done_changed;
  uint64_t issued = 0;             // tickets given out (the last one's number)
  uint64_t done = 0;               // every ticket up to this one is done
  std::set<uint64_t> done_early;   // done while an earlier one was not (its holder gave up waiting)
};
Turns& turns() {
  static Turns* t = new Turns;  // leaked: the exit flush may run late
  return *t;
}

// Host ids whose device work is in the pool (under the session mutex), built at the first
// call that asks (a walk over the pool's records): a cut with no final call that expects
// device work, an empty one above all, never builds it.
class ServedIds {
 public:
  explicit ServedIds(const DevicePool& pool) : pool_(pool) {}
  bool contains(uint64_t id) {
    if (!built_) build();
    return served_.count(id) != 0;
  }

 private:
  void build() {
    built_ = true;
    for (const DeviceRecord& record : pool_.records) {
      if (!about(record.kind).work) continue;
      auto link = pool_.links.find(record.correlation);
      if (link != pool_.links.end()) served_.insert(link->second.external_id);
    }
  }
  const DevicePool& pool_;
  bool built_ = false;
  HostIdSet served_;
};

// The host id a call's device work links to: its own id, or for a call the CUPTI callback
// recorded, what its correlation is linked to (its own id unless CUPTI linked the range around it).
uint64_t work_link(const HostEvent& e, const DevicePool& pool) {
  if (!(e.flags & kFlagCallback)) return e.id;
  auto link = pool.links.find(uint32_t(e.arg0));
  return link == pool.links.end() ? e.id : link->second.external_id;
}

// A final call whose device record has not come holds its thread from its start, for a few
// segments; then it goes without (counted).
void wait_for_device_work(Candidates& c, StreamState& stream, const DevicePool& pool,
                          ServedIds& served, const StreamLimits& limits,
                          HostIdSet& given_up) {
  for (const HostEvent& e : c.thread.events) {
    if (e.start >= c.bound) continue;
    if (!expects_device_work(e)) continue;
    if (served.contains(work_link(e, pool))) {
      stream.waiting_device.erase(e.id);
      continue;
    }
    uint32_t& waited = stream.waiting_device[e.id];
    if (++waited <= limits.device_wait_segments) {
      c.bound = std::min(c.bound, e.start);
    } else {
      stream.waiting_device.erase(e.id);
      given_up.insert(work_link(e, pool));
      ++stream.written.written_without_device_record;
    }
  }
}

size_t count_events(const std::vector<ThreadEvents>& threads) {
  size_t n = 0;
  for (const ThreadEvents& t : threads) n += t.events.size();
  return n;
}

// The final events' device records, their links and every call's own correlation, moved out of
// the pool (links of calls that went without their record stay: a record coming later is then
// known as theirs, and dropped with the window's late ones).
struct SegmentDevice {
  std::vector<DeviceRecord> records;
  FlatMap<uint32_t, uint64_t> links;
  std::vector<ExternalLink> call_links;
};

// Ids of final events, among which every one some link in the pool names (callback-recorded
// calls' own correlations added to the links first, as window.cpp links them). Nothing for a
// cut that takes no final event or a pool without links (a host-only window); else the smaller
// side is hashed: the links' ids when they are fewer (a host-only window's few), else the
// events' (a full pool: the cut costs what it takes, plus one lookup per link in claim_device).
FlatSet<uint64_t> final_ids(DevicePool& pool, const std::vector<ThreadEvents>& final_threads, uint32_t cuts) {
  FlatSet<uint64_t> ids;
  const size_t events = count_events(final_threads);
  if (events == 0) return ids;
  const uint64_t now_ns = clock::monotonic_ns();
  for (const ThreadEvents& t : final_threads) {
    for (const HostEvent& e : t.events) {
      if (!(e.flags & kFlagCallback) || EventKind(e.kind) == EventKind::StackTag) continue;
      pool.links.try_emplace(uint32_t(e.arg0), DevicePool::Link{e.id, cuts, now_ns});
    }
  }
  if (pool.links.empty()) return ids;
  FlatSet<uint64_t> named;  // the links' ids, when they are the fewer
  const bool by_links = pool.links.size() < events;
  if (by_links) {
    named.reserve(pool.links.size());
    for (const auto& link : pool.links) named.insert(link.second.external_id);
  } else {
    ids.reserve(events);
  }
  for (const ThreadEvents& t : final_threads) {
    for (const HostEvent& e : t.events) {
      if (EventKind(e.kind) != EventKind::StackTag && (!by_links || named.count(e.id))) ids.insert(e.id);
    }
  }
  return ids;
}

// One walk over the pool's links (a lookup each) when some event is final, and one over its
// records when some link was claimed.
SegmentDevice claim_device(DevicePool& pool, const std::vector<ThreadEvents>& final_threads,
                           const HostIdSet& given_up, uint32_t cuts) {
  SegmentDevice device;
  const FlatSet<uint64_t> ids = final_ids(pool, final_threads, cuts);
  if (ids.empty()) return device;
  for (auto link = pool.links.begin(); link != pool.links.end();) {
    if (!ids.count(link->second.external_id)) {
      ++link;
      continue;
    }
    device.links.emplace(link->first, link->second.external_id);
    device.call_links.push_back({link->first, link->second.external_id});
    link = given_up.count(link->second.external_id) ? std::next(link) : pool.links.erase(link);
  }
  if (device.links.empty()) return device;
  size_t kept = 0;
  for (size_t i = 0; i < pool.records.size(); ++i) {
    DeviceRecord& record = pool.records[i];
    if (device.links.count(record.correlation)) {
      device.records.push_back(std::move(record));
      continue;
    }
    if (kept != i) {
      pool.records[kept] = std::move(record);
      pool.arrivals[kept] = pool.arrivals[i];
    }
    ++kept;
  }
  pool.records.resize(kept);
  pool.arrivals.resize(kept);
  return device;
}

// Where the threads stand after a segment (StreamedWindow::complete_before_ns), in ticks: the
// marks of the take (thread_buffer.h TakenThread) and the events held, per thread against the
// scope it has open.
struct ThreadMarks {
  uint64_t all = ~uint64_t{0};
  uint64_t but_scopes = ~uint64_t{0};
  uint64_t read_at = 0;
};

using OpenScopes = std::map<std::pair<uint32_t, uint32_t>, uint64_t>;  // (pid, tid) -> its open scope's start

ThreadMarks take_marks(const TakenChunks& taken, OpenScopes& open) {
  ThreadMarks marks;
  marks.read_at = taken.read_at;
  for (const TakenThread& t : taken.threads) {
    const uint64_t scope = t.exited ? ~uint64_t{0} : t.outermost_scope_start;
    marks.all = std::min({marks.all, t.not_taken_start, scope});
    marks.but_scopes = std::min(marks.but_scopes, t.not_taken_start);
    if (scope != ~uint64_t{0}) open[{t.events.pid, t.events.tid}] = scope;
  }
  return marks;
}

void add_held_marks(const std::vector<ThreadEvents>& held, const OpenScopes& open, ThreadMarks& marks) {
  for (const ThreadEvents& t : held) {
    auto it = open.find({t.pid, t.tid});
    const uint64_t scope = it == open.end() ? ~uint64_t{0} : it->second;
    for (const HostEvent& e : t.events) {
      const EventKind kind = EventKind(e.kind);
      if (kind == EventKind::Step || kind == EventKind::StackTag) continue;
      marks.all = std::min(marks.all, e.start);
      if (e.start < scope) marks.but_scopes = std::min(marks.but_scopes, e.start);
    }
  }
}

// A thread's stores (its call or scope mark) become visible a store buffer's drain after it
// made them at most (an interrupt or a switch drains it): what it starts after the take's clock
// reading less this is seen.
constexpr uint64_t kMarkVisibleNs = 1'000'000;

void set_marks(const ThreadMarks& marks, const clock::TickConverter& converter, StreamedWindow& out) {
  const uint64_t read_at_ns = converter.to_ns(marks.read_at);
  const uint64_t cap = read_at_ns > kMarkVisibleNs ? read_at_ns - kMarkVisibleNs : 0;
  auto ns = [&](uint64_t ticks) { return ticks >= marks.read_at ? cap : std::min(cap, converter.to_ns(ticks)); };
  out.complete_before_ns = ns(marks.all);
  out.complete_but_scopes_before_ns = ns(marks.but_scopes);
}

// What one segment takes and decides under the locks; joined after they are released.
struct SegmentInput {
  std::vector<ThreadEvents> threads;
  SegmentDevice device;
  clock::TickConverter converter;
  uint64_t start_ticks = 0;
  uint64_t through_ticks = 0;
  ThreadMarks marks;
};

// The window being recorded is not streamed yet: the last streamed window is not exported
// (streamed_window_exported). Under the freeze lock: no cut meanwhile.
bool waits_for_export(Session& s) {
  std::lock_guard lock(s.mutex);
  return s.stream.cuts != s.cuts && s.stream_unexported != 0;
}

// Under the freeze lock (no cut meanwhile) and the session mutex. False when no window is
// being recorded, or it waits for the last streamed window's export.
bool take_segment(Session& s, const StreamLimits& limits, StreamedSegment& out, SegmentInput& in) {
  std::lock_guard freeze_lock(s.freeze_mutex);
  if (state() != RecordState::Record || waits_for_export(s)) return false;
  TakenChunks taken = take_closed_chunks(limits.segment_events);
  in.through_ticks = now();
  clock::add_anchor();
  in.converter = clock::converter();
  std::lock_guard lock(s.mutex);
  if (s.stream.cuts != s.cuts) {
    s.stream = StreamState{};
    s.stream.cuts = s.cuts;
    // What the last cut carried (committed before it, ended after it) is this window's first:
    // joined by its segments as if held, not left to its tail (no mark covers them: the
    // summaries' folds would make their steps without them).
    s.stream.held = std::move(s.carried);
    s.carried.clear();
    out.first_of_window = true;
  }
  out.trace.window = s.window + 1;
  out.chunks = taken.chunks;
  in.start_ticks = s.window_start_ticks;
  OpenScopes open_scopes;
  in.marks = take_marks(taken, open_scopes);
  std::vector<Candidates> all = gather_candidates(std::move(s.stream.held), std::move(taken));
  s.stream.held.clear();
  ServedIds served(s.pool);
  const bool device_delivers = g_device_tracing.load() && g_active_device_backend.load() != nullptr;
  HostIdSet given_up;
  for (Candidates& c : all) {
    if (stacks_on() && !c.thread.events.empty() && EventKind(c.thread.events.back().kind) != EventKind::StackTag) {
      c.bound = std::min(c.bound, c.thread.events.back().start);  // its stack tag may come next
    }
    hold_enclosing_scopes(c);
    const uint64_t scopes_bound = c.bound;
    if (device_delivers) wait_for_device_work(c, s.stream, s.pool, served, limits, given_up);
    if (c.bound != scopes_bound) hold_enclosing_scopes(c);  // a launch waiting for its record lowered it
  }
  std::vector<ThreadEvents> held;
  split_candidates(all, in.threads, held);
  const size_t held_count = count_events(held);
  if (held_count > limits.held_events) {  // a scope open too long: written without it (counted)
    s.stream.written.written_before_scope_end += held_count;
    in.threads.insert(in.threads.end(), std::make_move_iterator(held.begin()), std::make_move_iterator(held.end()));
    held.clear();
  }
  out.held_events = count_events(held);
  add_held_marks(held, open_scopes, in.marks);
  s.stream.held = std::move(held);
  in.device = claim_device(s.pool, in.threads, given_up, s.cuts);
  // PROFAGENT_MIN_DURATION_US and PROFAGENT_MAX_EVENTS as for a whole window, the events
  // kept by earlier segments counted: under the lock, as the counts below (a cut may come).
  apply_window_limits(s.options.limits, in.threads, in.device.records, in.converter, s.stream.limited,
                      s.stream.written.host_events);
  ++s.stream.written.segments;
  // Counted here: the window may be cut while this segment is joined and written.
  for (const ThreadEvents& t : in.threads) {
    s.stream.written.host_events += size_t(std::count_if(t.events.begin(), t.events.end(), [](const HostEvent& e) {
      return EventKind(e.kind) != EventKind::StackTag;
    }));
  }
  s.stream.written.device_records += in.device.records.size();
  return true;
}

void segment(const StreamLimits& limits, StreamedSegment& out) {
  Session& s = session();
  out = StreamedSegment{};
  if (!s.started.load()) return;
  // The turn first: one cut at a time (one segment's events in memory), in the order of the
  // tickets, and none after a window's end took its own (StreamTurn). Not come in time: nothing
  // is taken (the chunks stay for a later segment or the cut).
  out.turn = issue_stream_ticket();
  if (!out.turn.wait()) return;
  // Before the take, without a lock (a CUPTI call): the records of what completed by now.
  collect_device_records(s, true);
  SegmentInput in;
  if (!take_segment(s, limits, out, in)) return;
  out.recording = true;
  Trace& trace = out.trace;
  trace.start_ns = in.converter.to_ns(in.start_ticks);
  trace.end_ns = in.converter.to_ns(in.through_ticks);
  set_marks(in.marks, in.converter, trace.streamed);
  trace.process.thread_names = window_thread_names(in.threads);
  describe_window(s, trace);
  JoinInput input{std::move(in.threads), names_snapshot(), kernel_names_snapshot(), in.converter,
                  std::move(in.device.records), &in.device.links, std::move(in.device.call_links)};
  input.window_end_ns = trace.end_ns;
  const JoinCounts counts = join(std::move(input), trace);
  if (counts.orphan_stacks != 0) count_lost_stacks(counts.orphan_stacks);  // in the window's stacks_lost
  streamed_stacks().symbolize_segment(trace);  // in turn, no lock held (the loader is called)
}

}  // namespace

bool cut_segment(const StreamLimits& limits, StreamedSegment& out) noexcept {
  try {
    segment(limits, out);
    return true;
  } catch (...) {
    static CappedSite segments_lost;  // may recur at every segment
    log_capped(segments_lost, LogLevel::Warn, "out of memory while streaming the window being recorded: "
                                              "a segment's events are missing from its trace");
    out = StreamedSegment{};
    return false;
  }
}

StreamTurn issue_stream_ticket() noexcept {
  Turns& t = turns();
  StreamTurn turn;
  std::lock_guard lock(t.mutex);
  turn.ticket_ = ++t.issued;
  return turn;
}

StreamTurn take_stream_turn() noexcept {
  StreamTurn turn = issue_stream_ticket();
  turn.wait();
  return turn;
}

StreamTurn::StreamTurn(StreamTurn&& other) noexcept
    : ticket_(std::exchange(other.ticket_, 0)), held_(std::exchange(other.held_, false)) {}

StreamTurn& StreamTurn::operator=(StreamTurn&& other) noexcept {
  if (this != &other) {
    end();
    ticket_ = std::exchange(other.ticket_, 0);
    held_ = std::exchange(other.held_, false);
  }
  return *this;
}

bool StreamTurn::wait() noexcept {
  if (ticket_ == 0) return false;
  if (held_) return true;
  Turns& t = turns();
  std::unique_lock lock(t.mutex);
  held_ = t.done_changed.wait_for(lock, std::chrono::milliseconds(kStreamTurnWaitMs),
                                  [&] { return t.done + 1 >= ticket_; });
  lock.unlock();
  if (!held_) {
    static CappedSite gave_up;
    log_capped(gave_up, LogLevel::Warn, "streaming: a segment waited a minute for the one before it; its events "
                                        "are left to a later segment or the window's end");
  }
  return held_;
}

void StreamTurn::end() noexcept {
  if (ticket_ == 0) return;
  Turns& t = turns();
  {
    std::lock_guard lock(t.mutex);
    if (ticket_ == t.done + 1) {
      t.done = ticket_;
      for (auto next = t.done_early.begin(); next != t.done_early.end() && *next == t.done + 1;) {
        t.done = *next;
        next = t.done_early.erase(next);
      }
    } else {
      try {
        t.done_early.insert(ticket_);  // a holder that gave up waiting: done once those before it are
      } catch (...) {
        t.done = std::max(t.done, ticket_);  // out of memory: let the later ones go rather than wait
      }
    }
  }
  t.done_changed.notify_all();
  ticket_ = 0;
  held_ = false;
}

void adopt_streamed_stacks(Trace& tail, const StreamTurn& turn) noexcept {
  if (turn.held()) {
    streamed_stacks().adopt_tail(tail);
  } else {
    symbolize_stacks_alone(tail);
  }
}

void streamed_window_exported(uint32_t window) noexcept {
  Session& s = session();
  std::lock_guard lock(s.mutex);
  if (s.stream_unexported <= window) s.stream_unexported = 0;
}

uint32_t streamed_window() noexcept {
  Session& s = session();
  std::lock_guard lock(s.mutex);
  return s.stream.cuts == s.cuts && s.stream.written.segments > 0 ? s.window + 1 : 0;
}

}  // namespace profagent::collector
