// Scheduler core of the execution model: dependency resolution, modelled start/end times, the
// timeline thread that completes ops in time order, the host-function thread, and waits.
#include "timeline.h"

#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <queue>
#include <thread>

#include "config.h"
#include "api_scope.h"
#include "graph.h"
#include "timeline_internal.h"

namespace devsim {
namespace {

// MoveBytes at a copy's or set's modelled start, Complete at its end: the bytes are in place
// by the end whenever the host copies at least as fast as the modelled bandwidth, so waiters
// wake at the modelled end. One thread runs both in time order, so an op's bytes move only
// after every op it depends on has moved its own (a dependent starts at or after their ends).
enum class Action : uint8_t { MoveBytes, Complete, StartHostFn, OpenGate };

struct Entry {
  uint64_t time;
  uint64_t seq;  // FIFO among equal times
  Action action;
  OpRef op;
  bool operator>(const Entry& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

struct Timeline {
  std::condition_variable work_cv;   // with sched_mutex
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  uint64_t seq = 0;
  std::mutex done_mutex;
  std::condition_variable done_cv;
  std::atomic<int> waiters{0};
  std::mutex host_mutex;             // leaf: host-function queue
  std::condition_variable host_cv;
  std::deque<OpRef> host_queue;
};

Timeline& tl() {
  static Timeline* t = new Timeline;  // leaked: threads outlive static destructors
  return *t;
}

std::chrono::steady_clock::time_point to_time_point(uint64_t ns) {
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(ns));
}

void push_locked(uint64_t time, Action action, const OpRef& op) {
  Timeline& t = tl();
  bool earliest = t.heap.empty() || time < t.heap.top().time;
  t.heap.push(Entry{time, t.seq++, action, op});
  if (earliest) t.work_cv.notify_one();
}

// Earliest-free kernel slot of the device; the op takes it until its end.
uint64_t* pick_kernel_slot(DeviceState& d) {
  return &*std::min_element(d.kernel_slots.begin(), d.kernel_slots.end());
}

void end_known_locked(const OpRef& op, std::vector<OpRef>& newly_known) {
  op->end_known = true;
  newly_known.push_back(op);
}

// All dependencies have known end times: place the op on the device timeline.
void schedule_locked(const OpRef& op, uint64_t deps_end, std::vector<OpRef>& newly_known) {
  OpPayload& p = op->p;
  DeviceState& d = device_state(op->stream->device);
  uint64_t start = std::max(p.rec.queued_ns + config().launch_latency_ns, deps_end);
  uint64_t* slot = nullptr;
  if (p.type == OpType::Kernel && p.gate) {
    // A gated kernel's end is not known yet, so it holds no kernel slot (a slot's end would
    // be unknown to every kernel that wants it): collectives run beside the slot limit.
    p.rec.submitted_ns = std::max(p.rec.queued_ns, deps_end);
    p.rec.start_ns = start;
    push_locked(start, Action::OpenGate, op);
    return;
  }
  if (p.type == OpType::Kernel) {
    slot = pick_kernel_slot(d);
    start = std::max(start, *slot);
  } else if (p.copy_engine >= 0) {
    slot = &d.copy_engines[p.copy_engine];
    start = std::max(start, *slot);
  }
  p.rec.submitted_ns = std::max(p.rec.queued_ns, deps_end);
  p.rec.start_ns = start;
  if (p.type == OpType::HostFunc) {
    push_locked(start, Action::StartHostFn, op);
    return;
  }
  p.rec.end_ns = start + p.duration_ns;
  if (slot) *slot = p.rec.end_ns;
  if (p.type == OpType::Memcpy || p.type == OpType::Memset) push_locked(start, Action::MoveBytes, op);
  push_locked(p.rec.end_ns, Action::Complete, op);
  end_known_locked(op, newly_known);
}

// Propagates known end times to dependents, iteratively (chains can be long).
void release_dependents_locked(std::vector<OpRef>& work) {
  while (!work.empty()) {
    OpRef done = std::move(work.back());
    work.pop_back();
    for (const OpRef& dep : done->dependents) {
      dep->p.rec.submitted_ns = std::max(dep->p.rec.submitted_ns, done->p.rec.end_ns);
      if (--dep->pending == 0) schedule_locked(dep, dep->p.rec.submitted_ns, work);
    }
    done->dependents.clear();
  }
}

void copy_rows(const OpPayload& p) {
  auto* dst = static_cast<char*>(p.dst);
  auto* src = static_cast<const char*>(p.src);
  for (size_t row = 0; row < p.height; ++row) {
    std::memmove(dst + row * p.dpitch, src + row * p.spitch, p.width);
  }
}

void set_rows(const OpPayload& p) {
  auto* dst = static_cast<char*>(p.dst);
  for (size_t row = 0; row < p.height; ++row) std::memset(dst + row * p.dpitch, p.value, p.width);
}

void complete(const OpRef& op);
void move_bytes(const OpPayload& p);
void open_gate(const OpRef& op);

void run_due(const std::vector<Entry>& due) {
  Timeline& t = tl();
  bool host_work = false;
  for (const Entry& e : due) {
    if (e.action == Action::MoveBytes) {
      move_bytes(e.op->p);
      continue;
    }
    if (e.action == Action::Complete) {
      complete(e.op);
      continue;
    }
    if (e.action == Action::OpenGate) {
      open_gate(e.op);
      continue;
    }
    std::lock_guard host_lock(t.host_mutex);
    t.host_queue.push_back(e.op);
    host_work = true;
  }
  if (host_work) t.host_cv.notify_one();
}

void mark_done(const OpRef& op) {
  Timeline& t = tl();
  op->done.store(true);
  if (t.waiters.load() > 0) {
    { std::lock_guard lock(t.done_mutex); }
    t.done_cv.notify_all();
  }
}

void move_bytes(const OpPayload& p) {
  if (p.type == OpType::Memcpy) copy_rows(p);
  if (p.type == OpType::Memset) set_rows(p);
}

// Runs on the timeline thread once the op's end time has passed (its bytes moved at its
// start): the tracer hears about it, and only then can waiters return.
void complete(const OpRef& op) {
  const OpPayload& p = op->p;
  bool traced = p.type == OpType::Kernel || p.type == OpType::Memcpy || p.type == OpType::Memset;
  if (p.effect) {
    p.effect(p.effect_state, p.effect_arg, p.rec);
    op->p.effect_state.reset();  // finished ops may be kept; what they acted on is not theirs
  }
  if (traced) {
    if (Tracer* t = tracer()) t->on_op_done(p.rec);
  }
  mark_done(op);
}

// The gate may block (it waits for other processes), so it runs on a thread of its own; the
// kernel's times are then known and it completes like any other kernel. One thread per gated
// kernel: two collectives of different communicators may wait for each other's ranks.
void open_gate(const OpRef& op) {
  std::thread([op] {
    const auto [start, end] = (*op->p.gate)(op->p.rec.start_ns);
    std::vector<OpRef> work;
    std::lock_guard lock(sched_mutex());
    op->p.rec.start_ns = std::max(op->p.rec.start_ns, start);
    op->p.rec.end_ns = std::max(op->p.rec.start_ns, end);
    op->p.gate.reset();
    push_locked(op->p.rec.end_ns, Action::Complete, op);
    end_known_locked(op, work);
    release_dependents_locked(work);
  }).detach();
}

// Pops every entry that is due in one lock hold, then works without the lock, so enqueuing
// threads contend with the device thread once per batch, not once per op.
void timeline_loop() {
  prctl(PR_SET_TIMERSLACK, 1UL);  // wake on time: default slack is 50 us
  prctl(PR_SET_NAME, "devsim-device");
  Timeline& t = tl();
  std::vector<Entry> due;
  std::unique_lock lock(sched_mutex());
  for (;;) {
    if (t.heap.empty()) {
      t.work_cv.wait(lock);
      continue;
    }
    uint64_t now = now_ns();
    if (t.heap.top().time > now) {
      t.work_cv.wait_until(lock, to_time_point(t.heap.top().time));
      continue;
    }
    while (!t.heap.empty() && t.heap.top().time <= now) {
      due.push_back(t.heap.top());
      t.heap.pop();
    }
    lock.unlock();
    run_due(due);
    due.clear();
    lock.lock();
  }
}

void run_host_fn(const OpPayload& p) {
  if (p.host_fn) p.host_fn(p.host_arg);
  if (p.stream_cb) p.stream_cb(p.cb_stream_handle, 0, p.host_arg);
}

// Host functions run here, one at a time like the real runtime's callback thread, so a slow
// callback never delays the device timeline.
void host_loop() {
  prctl(PR_SET_NAME, "devsim-hostfn");
  Timeline& t = tl();
  for (;;) {
    OpRef op;
    {
      std::unique_lock lock(t.host_mutex);
      t.host_cv.wait(lock, [&] { return !t.host_queue.empty(); });
      op = std::move(t.host_queue.front());
      t.host_queue.pop_front();
    }
    op->p.rec.start_ns = std::max(op->p.rec.start_ns, now_ns());
    run_host_fn(op->p);
    std::vector<OpRef> work;
    {
      std::lock_guard lock(sched_mutex());
      op->p.rec.end_ns = now_ns();
      end_known_locked(op, work);
      release_dependents_locked(work);
    }
    mark_done(op);
  }
}

void start_threads() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::thread(timeline_loop).detach();
    std::thread(host_loop).detach();
  });
}

void add_dependency_locked(const OpRef& op, const OpRef& dep, uint64_t& deps_end) {
  if (!dep || dep == op) return;
  if (dep->end_known) {
    deps_end = std::max(deps_end, dep->p.rec.end_ns);
    return;
  }
  dep->dependents.push_back(op);
  ++op->pending;
}

// The legacy default stream waits for all blocking streams of its device and they wait for it.
void add_stream_dependencies_locked(const OpRef& op, Stream* s, uint64_t& deps_end) {
  add_dependency_locked(op, s->tail, deps_end);
  if (s->legacy) {
    for (Stream* other : device_state(s->device).streams) {
      if (other != s && other->blocking()) add_dependency_locked(op, other->tail, deps_end);
    }
  } else if (s->blocking()) {
    add_dependency_locked(op, legacy_stream(s->device)->tail, deps_end);
  }
}

// Caller holds sched_mutex. The op joins stream s, queued now.
void stamp_locked(Stream* s, const OpRef& op) {
  start_threads();
  op->stream = s;
  op->p.rec.stream_id = s->id;
  op->p.rec.priority = s->priority;
  op->p.rec.queued_ns = now_ns();
}

// Caller holds sched_mutex. Its dependencies are added (deps_end: the latest end among them);
// it is scheduled now if none is pending, else when the last one completes.
void submit_locked(const OpRef& op, uint64_t deps_end) {
  op->p.rec.submitted_ns = deps_end;
  if (op->pending == 0) {
    std::vector<OpRef> work;
    schedule_locked(op, deps_end, work);
    release_dependents_locked(work);
  }
}

}  // namespace

std::mutex& sched_mutex() {
  static std::mutex* m = new std::mutex;
  return *m;
}

OpRef make_op(OpType type, Stream* s, uint32_t correlation_id) {
  auto op = std::make_shared<Op>();
  op->stream = s;
  op->p.type = type;
  OpRecord& r = op->p.rec;
  r.kind = type == OpType::Kernel ? OpKind::Kernel : type == OpType::Memset ? OpKind::Memset : OpKind::Memcpy;
  r.correlation_id = correlation_id;
  r.device_id = static_cast<uint32_t>(s->device);
  r.context_id = s->device + 1;
  r.stream_id = s->id;
  r.priority = s->priority;
  return op;
}

// Caller holds sched_mutex. extra_dep: an event's position (cudaStreamWaitEvent markers).
Status enqueue_locked(Stream* s, const OpRef& op, const OpRef& extra_dep) {
  if (!s->live) return Status::InvalidHandle;
  if (s->capture) {
    capture_append_locked(s, op->p);
    return Status::Ok;
  }
  stamp_locked(s, op);
  uint64_t deps_end = 0;
  add_stream_dependencies_locked(op, s, deps_end);
  add_dependency_locked(op, extra_dep, deps_end);
  s->tail = op;
  submit_locked(op, deps_end);
  return Status::Ok;
}

// A graph node's op: it waits for `deps` and, for a root node, for the stream's earlier work;
// it does not become the stream's tail (the launch's join op does).
Status enqueue_node_locked(Stream* s, const OpRef& op, const std::vector<OpRef>& deps, bool after_stream) {
  if (!s->live) return Status::InvalidHandle;
  stamp_locked(s, op);
  uint64_t deps_end = 0;
  if (after_stream) add_stream_dependencies_locked(op, s, deps_end);
  for (const OpRef& dep : deps) add_dependency_locked(op, dep, deps_end);
  submit_locked(op, deps_end);
  return Status::Ok;
}

Status enqueue(Stream* s, const OpRef& op) {
  Status st;
  {
    std::lock_guard lock(sched_mutex());
    st = enqueue_locked(s, op, nullptr);
  }
  flush_capture_notices();  // a captured op became a graph node: tell the tracer, unlocked
  return st;
}

void wait_done(const OpRef& op) {
  if (!op || op->done.load()) return;
  Timeline& t = tl();
  t.waiters.fetch_add(1);
  {
    std::unique_lock lock(t.done_mutex);
    t.done_cv.wait(lock, [&] { return op->done.load(); });
  }
  t.waiters.fetch_sub(1);
}

}  // namespace devsim
