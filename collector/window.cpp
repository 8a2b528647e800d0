// Freezing a window: cut, flush the device backend, join, and build the Trace (session.h).
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "collector/clock.h"
#include "collector/cpu_times.h"
#include "collector/device_pool.h"
#include "collector/graph_captures.h"
#include "collector/huge_pages.h"
#include "collector/join.h"
#include "collector/log.h"
#include "collector/memory_ledger.h"
#include "collector/memory_room.h"
#include "collector/labels.h"
#include "collector/names.h"
#include "collector/process_info.h"
#include "collector/session_state.h"
#include "collector/stack_symbols.h"
#include "collector/window_limits.h"
#include "collector/window_memory.h"

namespace profagent::collector {

// Flushes (unless `flush` is false) and drains the device backend without any collector lock
// (the flush runs CUPTI's completed callback; parsing calls CUPTI), then puts the records into
// the pool.
void collect_device_records(Session& s, bool flush) {
  DeviceBackend* backend = g_active_device_backend.load();
  if (!backend) return;
  s.drains_in_flight.fetch_add(1);
  if (flush && g_device_tracing.load()) backend->flush();
  DeviceBatch batch = backend->drain();
  {
    std::lock_guard lock(s.mutex);
    s.pool.absorb(std::move(batch), s.cuts, clock::monotonic_ns());
  }
  s.drains_in_flight.fetch_sub(1);
}

void wait_for_drains_in_flight(Session& s, uint64_t deadline_ns) {
  while (s.drains_in_flight.load() != 0 && clock::monotonic_ns() < deadline_ns) sched_yield();
}

namespace {

// Asked once (devices do not change) and outside every lock: these are CUDA calls.
const PlatformInfo& platform(Session& s) {
  {
    std::lock_guard lock(s.mutex);
    if (s.platform_known) return s.platform;
  }
  if (!s.options.platform_info || !cuda_used() || s.forked_child.load()) return s.platform;
  PlatformInfo info;
  {
    AgentBusy busy;  // the agent's own CUDA calls are not the program's
    try {
      info = s.options.platform_info();
    } catch (...) {
      static SwallowedSite site{"the CUDA platform query failed; devices are missing from the trace"};
      note_swallowed(site);
    }
  }
  std::lock_guard lock(s.mutex);
  if (!s.platform_known) s.platform = std::move(info), s.platform_known = true;
  return s.platform;
}

std::vector<std::pair<uint32_t, std::string>> thread_names(
    const std::vector<ThreadEvents>& threads) {
  std::map<uint32_t, std::string> names;
  for (const ThreadEvents& thread : threads) names[thread.tid] = thread.name;
  // A name the program gave with nvtxNameOsThread wins over the kernel's (15 bytes at most).
  for (const auto& [tid, name] : labels_snapshot().threads) {
    if (auto found = names.find(tid); found != names.end()) found->second = name;
  }
  return {names.begin(), names.end()};
}

void fill_metadata(const Session& s, const PlatformInfo& platform, Trace& trace) {
  trace.process = read_process_info();
  trace.unix_offset_ns = clock::unix_offset_ns();
  trace.devices = platform.devices;
  trace.cuda_runtime_version = platform.cuda_runtime_version;
  trace.cuda_driver_version = platform.cuda_driver_version;
  if (s.options.config_pairs) trace.config = s.options.config_pairs();
  if (!s.options.activity_cuda) {
    trace.device_backend = "none (PROFAGENT_ACTIVITIES excludes cuda)";
  } else if (s.backend) {
    trace.device_backend = s.backend->status();
    trace.cupti_version = s.backend->version();
  } else {
    trace.device_backend = cuda_used() ? "none (device backend not started)"
                                       : "none (CUDA was not used)";
  }
}

void drop_host_side(Trace& trace) {  // PROFAGENT_ACTIVITIES without cpu
  trace.host.clear();
  for (DeviceRecord& record : trace.device) record.host = kNoIndex;
  for (MemoryRecord& record : trace.memory.records) record.host = kNoIndex;
}

}  // namespace

void split_at_cut(std::vector<ThreadEvents>& threads, uint64_t cut,
                  std::vector<ThreadEvents>& carried) {
  auto in_window = [cut](const HostEvent& e) { return e.end <= cut; };
  for (ThreadEvents& thread : threads) {
    // Usually every event is in: find that out without stable_partition's buffer (a copy of
    // the whole thread's events).
    auto first_later = std::find_if_not(thread.events.begin(), thread.events.end(), in_window);
    if (first_later == thread.events.end()) continue;
    move_events_from(thread, std::stable_partition(first_later, thread.events.end(), in_window), carried);
  }
}

ThreadEvents& move_events_from(ThreadEvents& thread, std::vector<HostEvent>::iterator from,
                               std::vector<ThreadEvents>& into) {
  ThreadEvents& next = into.emplace_back();
  next.tid = thread.tid, next.pid = thread.pid, next.name = thread.name;
  next.events.assign(from, thread.events.end());
  thread.events.erase(from, thread.events.end());
  return next;
}

std::vector<std::pair<uint32_t, std::string>> window_thread_names(const std::vector<ThreadEvents>& threads) {
  return thread_names(threads);
}

void describe_window(Session& s, Trace& trace) {
  std::vector<std::pair<uint32_t, std::string>> thread_names = std::move(trace.process.thread_names);
  fill_metadata(s, platform(s), trace);
  trace.process.thread_names = std::move(thread_names);
}

// A window cut but not joined yet: its host events (still raw) and where it lies in time.
struct CutWindow {
  Trace trace;
  std::vector<ThreadEvents> threads;
  clock::TickConverter converter;
  uint32_t cut = 0;  // Session::cuts after this cut
  MemoryCut memory;  // the window's allocations (PROFAGENT_PROFILE_MEMORY)
};

namespace {

// The CPU times of the window the cut ends: from the last cut to this one. Two threads cutting
// at once may take the freeze lock in the other order than they read the times; then this
// window's end is older than its start and is not given (the Device Summary says n/a).
void set_cpu_times(Session& s, const CpuTimes& at_cut, Trace& trace) {
  if (s.window_start_deferred) {
    s.window_start_cpu = complete_deferred_start(s.window_start_cpu);
    s.window_start_deferred = false;
  }
  trace.cpu_start = s.window_start_cpu;
  trace.cpu_end = at_cut;
  if (at_cut.ns < s.window_start_cpu.ns) trace.cpu_end.valid = false;
  else s.window_start_cpu = at_cut;
}

// The cut itself: everything that must happen at the boundary (host buffers drained, events
// split at the cut). No CUDA or CUPTI call: device records are claimed by the join. Returns
// nullptr for a discarded window.
CutWindow* cut_part(Session& s, bool keep) {
  // Read before any lock (a file read); the boundary it marks is the cut just below.
  const CpuTimes cpu_at_cut = read_cpu_times();
  std::lock_guard freeze_lock(s.freeze_mutex);
  // Just before the host cut: the allocations booked by now, with the totals they left.
  MemoryCut memory = cut_memory(keep);
  uint64_t cut = now();
  clock::add_anchor();
  DrainResult host = drain_all();

  std::lock_guard lock(s.mutex);
  std::vector<ThreadEvents> threads = std::move(s.carried);
  s.carried.clear();
  // A streamed window: what its segments held back is joined with its tail.
  StreamedWindow streamed;
  DropCounters limited;
  if (s.stream.cuts == s.cuts) {
    threads.insert(threads.end(), std::make_move_iterator(s.stream.held.begin()),
                   std::make_move_iterator(s.stream.held.end()));
    streamed = s.stream.written;
    limited = s.stream.limited;
  }
  s.stream = StreamState{};
  threads.insert(threads.end(), std::make_move_iterator(host.threads.begin()),
                 std::make_move_iterator(host.threads.end()));
  split_at_cut(threads, cut, s.carried);

  auto window = std::make_unique<CutWindow>();
  Trace& trace = window->trace;
  window->converter = clock::converter();
  window->cut = ++s.cuts;
  trace.window = keep ? ++s.window : s.window;  // discarded (warmup) cuts are no window
  trace.start_ns = window->converter.to_ns(s.window_start_ticks);
  trace.end_ns = window->converter.to_ns(cut);
  s.window_start_ticks = cut;
  set_cpu_times(s, cpu_at_cut, trace);
  trace.drops.host_events = host.dropped;
  trace.streamed = streamed;
  if (keep && streamed.segments > 0) s.stream_unexported = trace.window;
  // What the size limits left out of its segments; the tail's join adds its own.
  trace.drops.shorter_than_min_duration = limited.shorter_than_min_duration;
  trace.drops.over_max_events = limited.over_max_events;
  trace.drops.over_max_events_device_records = limited.over_max_events_device_records;
  const BufferReservation reservation = buffer_reservation();
  trace.drops.host_buffer_requested_bytes = reservation.requested;
  trace.drops.host_buffer_reserved_bytes = reservation.reserved;
  if (!keep) return nullptr;
  trace.process.thread_names = thread_names(threads);
  window->threads = std::move(threads);
  window->memory = std::move(memory);
  return window.release();
}

// The window's host events that device records may link to, and those that expect one.
struct WindowIds {
  HostIdMap<EventKind> kinds;
  HostIdSet expected;
  FlatSet<uint32_t> expected_callback_calls;  // by CUPTI correlation (event.h)
};

WindowIds window_ids(const std::vector<ThreadEvents>& threads) {
  WindowIds ids;
  for (const ThreadEvents& thread : threads) {
    for (const HostEvent& event : thread.events) {
      const EventKind kind = EventKind(event.kind);
      if (kind == EventKind::Runtime || kind == EventKind::Alloc || kind == EventKind::Free ||
          kind == EventKind::StackTag) {
        continue;
      }
      ids.kinds.try_emplace(event.id, kind);
      if (!expects_device_work(event)) continue;
      // A call the CUPTI callback recorded is known by its own correlation id, which its work
      // carries whatever external id CUPTI links it to (the range around it, usually).
      if (event.flags & kFlagCallback) {
        ids.expected_callback_calls.insert(uint32_t(event.arg0));
      } else {
        ids.expected.insert(event.id);
      }
    }
  }
  return ids;
}

// A call recorded by the CUPTI callback carries its own CUPTI correlation id (event.h:
// kFlagCallback), where a hooked call pushed its id for CUPTI to link. Its link is made here,
// before the claim, so its device work is claimed as a hooked call's is (and its DRIVER record
// is known as that call's, never a second row) — unless CUPTI linked the correlation to the
// range or operator around the call: that link names the work's scope (its External id) and
// is kept, whichever of the two arrives first.
void link_callback_calls(Session& s, const CutWindow& window) {
  std::lock_guard lock(s.mutex);
  const uint64_t now_ns = clock::monotonic_ns();
  for (const ThreadEvents& thread : window.threads) {
    for (const HostEvent& event : thread.events) {
      if (!(event.flags & kFlagCallback)) continue;
      s.pool.links.try_emplace(uint32_t(event.arg0), DevicePool::Link{event.id, window.cut, now_ns});
    }
  }
}

bool issuers_known(Session& s) {
  std::lock_guard lock(s.mutex);
  return s.backend != nullptr && s.backend->issuers_known();
}

uint64_t elapsed_since(uint64_t start_ns) { return clock::monotonic_ns() - start_ns; }

// Waits with a short back-off (0.1 ms doubling to 20 ms, never past the deadline).
void back_off(uint64_t& pause_ns, uint64_t deadline_ns) {
  const uint64_t now_ns = clock::monotonic_ns();
  if (now_ns >= deadline_ns) return;
  const uint64_t sleep_ns = std::min(pause_ns, deadline_ns - now_ns);
  const timespec pause{time_t(sleep_ns / 1'000'000'000), long(sleep_ns % 1'000'000'000)};
  nanosleep(&pause, nullptr);
  pause_ns = std::min<uint64_t>(pause_ns * 2, 20'000'000);
}

bool device_can_deliver(const Session& s) {
  return g_device_tracing.load() && g_active_device_backend.load() != nullptr && !s.forked_child.load();
}

// Device work of the window not in its records, less what the device library said it dropped
// (those are counted as dropped already, and will never come). Under the session mutex.
uint64_t unexplained_missing(const Session& s, const WindowClaim& claim) {
  const uint64_t missing = claim.missing();
  return missing > s.pool.dropped ? missing - s.pool.dropped : 0;
}

// Claims the window's device records until none of its device work is missing or the wait
// bound passed: each poll forces the backend to flush what completed. Returns the records
// still missing (and not explained by the device library's drops).
uint64_t claim_device_records(Session& s, WindowClaim& claim) {
  const uint64_t start_ns = clock::monotonic_ns();
  const uint64_t deadline_ns = start_ns + uint64_t(s.options.window_wait_ms) * 1'000'000;
  const bool can_wait = device_can_deliver(s) && s.options.window_wait_ms > 0;
  uint64_t pause_ns = 100'000;
  for (;;) {
    collect_device_records(s, true);
    uint64_t missing = 0;
    {
      std::lock_guard lock(s.mutex);
      claim.claim(s.pool);
      missing = unexplained_missing(s, claim);
    }
    if (missing == 0 || !can_wait || clock::monotonic_ns() >= deadline_ns) break;
    back_off(pause_ns, deadline_ns);
  }
  wait_for_drains_in_flight(s, deadline_ns + kDrainInFlightWaitNs);
  std::lock_guard lock(s.mutex);
  claim.claim(s.pool);
  return device_can_deliver(s) ? unexplained_missing(s, claim) : 0;
}

// Every link the pool holds, also of calls that queued no device work: the join gives each
// recorded call its own CUPTI correlation id from them (links of other windows' calls match no
// host event of this one and are ignored).
std::vector<ExternalLink> call_links(Session& s) {
  std::lock_guard lock(s.mutex);
  std::vector<ExternalLink> links;
  reserve_on_huge_pages(links, s.pool.links.size());
  s.pool.links.for_each([&](uint32_t correlation, const DevicePool::Link& link) {
    links.push_back({correlation, link.external_id});
  });
  return links;
}

// The join: on the agent's exporter thread (or at exit), after any later cuts.
Trace join_part(Session& s, CutWindow& window) {
  Trace& trace = window.trace;
  const uint64_t wait_start = clock::monotonic_ns();
  link_callback_calls(s, window);
  WindowIds ids = window_ids(window.threads);
  WindowClaim claim(std::move(ids.kinds), std::move(ids.expected), std::move(ids.expected_callback_calls),
                    trace.start_ns, trace.end_ns, window.cut);
  claim.issuers_known = issuers_known(s);
  const uint64_t late = claim_device_records(s, claim);
  trace.join_wait_ns = elapsed_since(wait_start);
  std::vector<ExternalLink> links = call_links(s);  // before old links are forgotten
  apply_window_limits(s.options.limits, window.threads, claim.records, window.converter, trace.drops,
                      trace.streamed.host_events);
  // Under a memory limit, only what the join and the writers can hold is joined.
  fit_window_in_memory(window.threads, claim.records, window.converter, memory_room(), trace.drops);
  uint64_t forgotten = 0;
  {
    std::lock_guard lock(s.mutex);
    trace.drops.device_records = s.pool.dropped;
    s.pool.dropped = 0;
    // Twice the wait bound: a call held up that long inside the agent is not expected.
    forgotten = s.pool.forget_before(window.cut, clock::monotonic_ns(), 2 * uint64_t(s.options.window_wait_ms) * 1'000'000);
  }
  log_format(LogLevel::Debug, "window %u: join waited %.3f ms for device work (%llu missing); %llu earlier records dropped",
             trace.window, double(trace.join_wait_ns) / 1e6, (unsigned long long)late,
             (unsigned long long)(forgotten + claim.dropped_earlier));
  describe_window(s, trace);
  JoinInput input{std::move(window.threads), names_snapshot(), kernel_names_snapshot(), window.converter,
                  std::move(claim.records), &claim.links, std::move(links)};
  input.window_end_ns = trace.end_ns;
  JoinCounts counts = join(std::move(input), trace);
  symbolize_window_stacks(trace);
  trace.drops.stacks_lost += counts.orphan_stacks;
  trace.drops.unmatched_device_records = counts.unmatched;
  trace.drops.graph_replays_without_capture = counts.graph_replays_without_capture;
  trace.agent_cost.cupti_calls = counts.cuda_calls;  // kept if the host side is left out below
  trace.drops.graph_nodes_not_kept = graph_nodes_not_kept();
  trace.drops.late_device_records = late + counts.late + trace.streamed.written_without_device_record;
  absorb_device_memory(window.memory, trace.start_ns, trace.end_ns);
  finish_memory(std::move(window.memory), window.converter, trace);
  if (!s.options.activity_cpu) drop_host_side(trace);
  return std::move(trace);
}

}  // namespace

Trace freeze_window() noexcept {
  return finish_window(cut_window());
}

CutWindow* cut_window() noexcept {
  try {
    return cut_part(session(), true);
  } catch (...) {
    static CappedSite cuts_lost;  // may recur at every step boundary
    log_capped(cuts_lost, LogLevel::Error, "out of memory while cutting a window; it is lost");
    return nullptr;
  }
}

// Out of memory in the join despite fit_window_in_memory's estimate: what is left of the window
// is its frame (number, span, drops) with every event left out and counted, so a trace that says
// so is still written. Frees what the join had built first.
Trace what_is_left(CutWindow& window) noexcept {
  uint64_t host_events = 0;
  for (const ThreadEvents& thread : window.threads) host_events += thread.events.size();
  Trace& trace = window.trace;
  window.threads = {};
  trace.host = {}, trace.device = {}, trace.stacks = {};
  trace.memory.records = {}, trace.memory.live = {};
  window.memory = {};
  trace.drops.left_out_host_events += host_events;
  trace.device_backend = "none (out of memory while joining the window: every event is left out)";
  static CappedSite joins_lost;  // may recur at every window
  char message[160];
  std::snprintf(message, sizeof message,
                "out of memory while joining window %u: its events are left out, the trace has its frame only",
                trace.window);
  log_capped(joins_lost, LogLevel::Error, message);
  return std::move(trace);
}

Trace finish_window(CutWindow* cut) noexcept {
  std::unique_ptr<CutWindow> window(cut);
  if (!window) {  // the cut itself ran out of memory (said there)
    Trace lost;
    lost.device_backend = "none (out of memory while cutting the window)";
    return lost;
  }
  try {
    return join_part(session(), *window);
  } catch (...) {
    return what_is_left(*window);
  }
}

void discard_window() noexcept {
  try {
    cut_part(session(), false);
  } catch (...) {
    static SwallowedSite site{"out of memory while discarding warmup data; it stays in the next window"};
    note_swallowed(site);
  }
}

void poll_device() noexcept {
  try {
    // Hooked allocation calls wait for their records (memory_ledger.h): have them come.
    collect_device_records(session(), memory_tracking() && device_memory_records_wanted());
  } catch (...) {
    static SwallowedSite site{"out of memory while reading device records; some are lost"};
    note_swallowed(site);
  }
}

}  // namespace profagent::collector
