// Freezing a window: cut, flush the device backend, join, and build the Trace (session.h).
#include <algorithm>
#include <map>
#include <memory>
#include <unordered_set>

#include "collector/clock.h"
#include "collector/join.h"
#include "collector/log.h"
#include "collector/names.h"
#include "collector/process_info.h"
#include "collector/session_state.h"

namespace profagent::collector {
namespace {

// Events that ended by the cut belong to this window; those still running at the cut (they
// are committed when they end, so only a concurrent thread can show one) wait for the next.
void split_at_cut(std::vector<ThreadEvents>& threads, uint64_t cut,
                  std::vector<ThreadEvents>& carried) {
  auto in_window = [cut](const HostEvent& e) { return e.end <= cut; };
  for (ThreadEvents& thread : threads) {
    // Usually every event is in: find that out without stable_partition's buffer (a copy of
    // the whole thread's events).
    auto first_later = std::find_if_not(thread.events.begin(), thread.events.end(), in_window);
    if (first_later == thread.events.end()) continue;
    auto later = std::stable_partition(first_later, thread.events.end(), in_window);
    ThreadEvents& next = carried.emplace_back();
    next.tid = thread.tid, next.pid = thread.pid, next.name = thread.name;
    next.events.assign(later, thread.events.end());
    thread.events.erase(later, thread.events.end());
  }
}

// Called without any collector lock: the flush runs CUPTI's completed callback.
DeviceBatch collect_device_records() {
  DeviceBackend* backend = g_active_device_backend.load();
  if (!backend) return {};
  if (g_device_tracing.load()) backend->flush();
  return backend->drain();
}

PlatformInfo query_platform(const Session& s) {
  if (!s.options.platform_info || !cuda_used() || s.forked_child.load()) return {};
  AgentBusy busy;  // the agent's own CUDA calls are not the program's
  try {
    return s.options.platform_info();
  } catch (...) {
    return {};
  }
}

std::vector<std::pair<uint32_t, std::string>> thread_names(
    const std::vector<ThreadEvents>& threads) {
  std::map<uint32_t, std::string> names;
  for (const ThreadEvents& thread : threads) names[thread.tid] = thread.name;
  return {names.begin(), names.end()};
}

void absorb_device_batch(Session& s, DeviceBatch&& batch) {
  for (const ExternalLink& link : batch.links) s.links[link.correlation] = link.external_id;
  s.pending.append(std::move(batch));  // its links stay too: they name every call's correlation
}

// The links the join can use: those of this window's device records (it looks up nothing
// else). Copying the session's whole map would cost one node per CUDA call ever made that got
// no device work, which is most of them.
std::unordered_map<uint32_t, uint64_t> links_for(const Session& s,
                                                 const std::vector<DeviceRecord>& records) {
  std::unordered_map<uint32_t, uint64_t> links;
  links.reserve(records.size());
  for (const DeviceRecord& record : records) {
    for (const auto* generation : {&s.links, &s.older_links}) {
      auto link = generation->find(record.correlation);
      if (link == generation->end()) continue;
      links.emplace(link->first, link->second);
      break;
    }
  }
  return links;
}

// At each cut the links received since the last one become the older generation and the
// older ones are dropped (session_state.h says why).
void age_links(Session& s) {
  s.older_links = std::move(s.links);
  s.links = {};
}

// Links whose device records were joined are done; the others may still get records.
void prune_links(Session& s, const Trace& trace) {
  for (const DeviceRecord& record : trace.device) {
    if (record.host < 0) continue;
    s.links.erase(record.correlation);
    s.older_links.erase(record.correlation);
  }
}

void fill_metadata(const Session& s, const PlatformInfo& platform, Trace& trace) {
  trace.process = read_process_info();
  trace.unix_offset_ns = clock::unix_offset_ns();
  trace.devices = platform.devices;
  trace.cuda_runtime_version = platform.cuda_runtime_version;
  trace.cuda_driver_version = platform.cuda_driver_version;
  trace.config = s.options.config;
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
}

}  // namespace

// A window cut but not joined yet: what the join needs, owned (its links copied, so a later
// cut or join may change the session's map meanwhile).
struct CutWindow {
  Trace trace;
  JoinInput input;
  std::unordered_map<uint32_t, uint64_t> links;
};

namespace {

// The cut itself: everything that must happen at the boundary (host buffers drained, device
// records taken, events split at the cut). Returns nullptr for a discarded window.
CutWindow* cut_part(Session& s, bool keep) {
  std::lock_guard freeze_lock(s.freeze_mutex);
  uint64_t cut = now();
  clock::add_anchor();
  DeviceBatch device = collect_device_records();
  PlatformInfo platform = keep ? query_platform(s) : PlatformInfo{};
  DrainResult host = drain_all();

  std::lock_guard lock(s.mutex);
  absorb_device_batch(s, std::move(device));
  std::vector<ThreadEvents> threads = std::move(s.carried);
  s.carried.clear();
  threads.insert(threads.end(), std::make_move_iterator(host.threads.begin()),
                 std::make_move_iterator(host.threads.end()));
  split_at_cut(threads, cut, s.carried);

  auto window = std::make_unique<CutWindow>();
  Trace& trace = window->trace;
  clock::TickConverter converter = clock::converter();
  trace.window = keep ? ++s.window : s.window;  // discarded (warmup) cuts are no window
  trace.start_ns = converter.to_ns(s.window_start_ticks);
  trace.end_ns = converter.to_ns(cut);
  s.window_start_ticks = cut;
  trace.drops.host_events = host.dropped;
  const BufferReservation reservation = buffer_reservation();
  trace.drops.host_buffer_requested_bytes = reservation.requested;
  trace.drops.host_buffer_reserved_bytes = reservation.reserved;
  trace.drops.device_records = s.pending.dropped;
  s.pending.dropped = 0;
  if (!keep) {
    s.pending.records.clear();
    s.pending.links.clear();
    age_links(s);
    return nullptr;
  }
  fill_metadata(s, platform, trace);
  trace.process.thread_names = thread_names(threads);
  window->links = links_for(s, s.pending.records);
  age_links(s);
  window->input = JoinInput{std::move(threads), {}, {}, converter, std::move(s.pending.records), nullptr, {}};
  window->input.call_links = std::move(s.pending.links);
  s.pending.records.clear();
  s.pending.links.clear();
  return window.release();
}

// The join: may run on any thread, after later cuts.
Trace join_part(Session& s, CutWindow& window) {
  Trace& trace = window.trace;
  window.input.names = names_snapshot();  // names only grow: a later snapshot is a superset
  window.input.kernel_names = kernel_names_snapshot();
  window.input.links = &window.links;
  JoinCounts counts = join(std::move(window.input), trace);
  trace.drops.unmatched_device_records = counts.unmatched;
  trace.drops.late_device_records = counts.late;
  {
    std::lock_guard lock(s.mutex);
    prune_links(s, trace);
  }
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
    log(LogLevel::Error, "out of memory while cutting a window; it is lost");
    return nullptr;
  }
}

Trace finish_window(CutWindow* cut) noexcept {
  std::unique_ptr<CutWindow> window(cut);
  try {
    if (window) return join_part(session(), *window);
  } catch (...) {
    log(LogLevel::Error, "out of memory while freezing a window; it is lost");
  }
  Trace trace;
  trace.device_backend = "none (out of memory while freezing)";
  return trace;
}

void discard_window() noexcept {
  try {
    cut_part(session(), false);
  } catch (...) {
  }
}

void poll_device() noexcept {
  Session& s = session();
  DeviceBackend* backend = g_active_device_backend.load();
  if (!backend) return;
  try {
    // The freeze mutex keeps a concurrent freeze from joining before this batch is absorbed.
    std::lock_guard freeze_lock(s.freeze_mutex);
    DeviceBatch batch = backend->drain();
    std::lock_guard lock(s.mutex);
    absorb_device_batch(s, std::move(batch));
  } catch (...) {
  }
}

}  // namespace profagent::collector
