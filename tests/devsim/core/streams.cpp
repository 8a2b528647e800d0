// Streams and events of the execution model (timeline.h).
#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_set>

#include "config.h"
#include "device.h"
#include "graph.h"
#include "pools.h"
#include "timeline_internal.h"

namespace devsim {
namespace {

constexpr uint32_t kLegacyStreamId = 7;  // what CUPTI reports for the legacy default stream
std::atomic<uint32_t> g_next_stream_id{13};
std::atomic<uint32_t> g_next_event_id{1};
std::atomic<uint64_t> g_next_event_record_id{1};
__thread Stream* t_per_thread[kMaxDevices];

struct Handles {  // guarded by sched_mutex
  std::unordered_set<const Stream*> streams;
  std::unordered_set<const Event*> events;
};

Handles& handles() {
  static Handles* h = new Handles;
  return *h;
}

DeviceState* make_devices() {
  auto* devices = new DeviceState[kMaxDevices];
  for (int d = 0; d < kMaxDevices; ++d) {
    devices[d].kernel_slots.assign(static_cast<size_t>(config().max_concurrent), 0);
    auto* legacy = new Stream;
    legacy->id = kLegacyStreamId;
    legacy->device = d;
    legacy->legacy = true;
    devices[d].legacy = legacy;
  }
  return devices;
}

Stream* new_stream_locked(int device, unsigned flags, int priority, bool per_thread) {
  auto* s = new Stream;
  s->id = g_next_stream_id.fetch_add(1);
  s->device = device;
  s->flags = flags;
  s->priority = priority;
  s->per_thread = per_thread;
  device_state(device).streams.push_back(s);
  handles().streams.insert(s);
  return s;
}

OpRef tail_of(Stream* s) {
  std::lock_guard lock(sched_mutex());
  return s->tail;
}

}  // namespace

DeviceState& device_state(int device) {
  static DeviceState* devices = make_devices();  // leaked on purpose
  return devices[device];
}

Stream* legacy_stream(int device) { return device_state(device).legacy; }

Stream* per_thread_stream(int device) {
  Stream*& s = t_per_thread[device];
  if (s == nullptr) {
    std::lock_guard lock(sched_mutex());
    s = new_stream_locked(device, 0, 0, true);
  }
  return s;
}

Stream* stream_from_handle(const void* handle, bool per_thread_default) {
  int device = current_device();
  auto value = reinterpret_cast<uintptr_t>(handle);
  if (value == 1) return legacy_stream(device);
  if (value == 2) return per_thread_stream(device);
  if (value == 0) return per_thread_default ? per_thread_stream(device) : legacy_stream(device);
  auto* s = static_cast<Stream*>(const_cast<void*>(handle));
  return stream_live(s) ? s : nullptr;
}

Stream* create_stream(int device, unsigned flags, int priority) {
  std::lock_guard lock(sched_mutex());
  return new_stream_locked(device, flags, priority, false);
}

// Pending work still completes, as on a real device; the Stream object is leaked because
// queued ops point at it (a few dozen bytes per destroyed stream).
Status destroy_stream(Stream* s) {
  std::lock_guard lock(sched_mutex());
  if (!handles().streams.erase(s) || s->per_thread) return Status::InvalidHandle;
  s->live = false;
  if (s->tail && !s->tail->done.load()) device_state(s->device).retired_tails.push_back(s->tail);
  auto& list = device_state(s->device).streams;
  list.erase(std::remove(list.begin(), list.end(), s), list.end());
  return Status::Ok;
}

bool stream_live(const Stream* s) {
  if (s == nullptr) return false;
  std::lock_guard lock(sched_mutex());
  if (handles().streams.count(s) != 0) return true;
  // Never dereference: s may be any value a caller passed as a handle.
  for (int d = 0; d < kMaxDevices; ++d) {
    if (device_state(d).legacy == s) return true;
  }
  return false;
}

Status stream_synchronize(Stream* s) {
  OpRef tail;
  {
    std::lock_guard lock(sched_mutex());
    if (s->capture) return Status::StreamCaptureUnsupported;
    tail = s->tail;
  }
  wait_done(tail);
  release_pools_over_threshold(s->device);
  return Status::Ok;
}

Status stream_query(Stream* s) {
  OpRef tail = tail_of(s);
  return !tail || tail->done.load() ? Status::Ok : Status::NotReady;
}

void device_synchronize(int device) {
  std::vector<OpRef> tails;
  {
    std::lock_guard lock(sched_mutex());
    DeviceState& d = device_state(device);
    tails.push_back(d.legacy->tail);
    for (Stream* s : d.streams) tails.push_back(s->tail);
    // Work queued on streams destroyed since is still the device's work.
    auto& retired = d.retired_tails;
    retired.erase(std::remove_if(retired.begin(), retired.end(), [](const OpRef& op) { return op->done.load(); }),
                  retired.end());
    tails.insert(tails.end(), retired.begin(), retired.end());
  }
  for (const OpRef& op : tails) wait_done(op);
  release_pools_over_threshold(device);
}

void synchronize_all_devices() {
  for (int d = 0; d < device_count(); ++d) device_synchronize(d);
}

Event* create_event(int device, unsigned flags) {
  auto* e = new Event;
  e->flags = flags;
  e->device = device;
  e->id = g_next_event_id.fetch_add(1);
  std::lock_guard lock(sched_mutex());
  handles().events.insert(e);
  return e;
}

// Leaked like streams: a waiting op may still hold the event's marker through the event.
Status destroy_event(Event* e) {
  std::lock_guard lock(sched_mutex());
  if (!handles().events.erase(e)) return Status::InvalidHandle;
  e->live = false;
  e->marker.reset();
  return Status::Ok;
}

bool event_live(const Event* e) {
  std::lock_guard lock(sched_mutex());
  return handles().events.count(e) != 0;
}

Status record_event(Event* e, Stream* s, uint32_t correlation_id) {
  std::lock_guard lock(sched_mutex());
  if (!handles().events.count(e)) return Status::InvalidHandle;
  if (s->capture) {
    capture_record_event_locked(e, s);
    e->marker.reset();
    return Status::Ok;
  }
  e->captured_in = nullptr;
  e->captured_deps.clear();
  OpRef marker = make_op(OpType::Marker, s, correlation_id);
  Status st = enqueue_locked(s, marker, nullptr);
  if (st == Status::Ok) {
    e->marker = marker;
    e->record_id = g_next_event_record_id.fetch_add(1);
  }
  return st;
}

uint64_t event_record_id(Event* e) {
  std::lock_guard lock(sched_mutex());
  return handles().events.count(e) ? e->record_id : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
}

Status query_event(Event* e) {
  OpRef marker;
  {
    std::lock_guard lock(sched_mutex());
    if (!handles().events.count(e)) return Status::InvalidHandle;
    marker = e->marker;
  }
  return !marker || marker->done.load() ? Status::Ok : Status::NotReady;
}

Status synchronize_event(Event* e) {
  OpRef marker;
  {
    std::lock_guard lock(sched_mutex());
    if (!handles().events.count(e)) return Status::InvalidHandle;
    marker = e->marker;
  }
  wait_done(marker);
  release_pools_over_threshold(e->device);
  return Status::Ok;
}

// Modelled times: a marker's start is when the device reached it.
Status elapsed_ms(Event* start, Event* end, float* ms) {
  if (ms == nullptr) return Status::InvalidValue;
  std::lock_guard lock(sched_mutex());
  if (!handles().events.count(start) || !handles().events.count(end)) return Status::InvalidHandle;
  if (!start->timing() || !end->timing()) return Status::InvalidHandle;
  if (!start->marker || !end->marker) return Status::InvalidHandle;
  if (!start->marker->done.load() || !end->marker->done.load()) return Status::NotReady;
  double diff = double(int64_t(end->marker->p.rec.start_ns - start->marker->p.rec.start_ns));
  *ms = static_cast<float>(diff / 1e6);
  return Status::Ok;
}

// A marker op on s that depends on the event's position: everything after it waits too.
Status stream_wait_event(Stream* s, Event* e, uint32_t correlation_id) {
  std::lock_guard lock(sched_mutex());
  if (!handles().events.count(e)) return Status::InvalidHandle;
  if (e->captured_in) return capture_wait_event_locked(s, e);
  if (s->capture || !e->marker) return Status::Ok;
  OpRef marker = make_op(OpType::Marker, s, correlation_id);
  return enqueue_locked(s, marker, e->marker);
}

}  // namespace devsim
