#include "collector/thread_buffer.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "collector/api.h"
#include "collector/cpu_times.h"
#include "collector/huge_pages.h"
#include "collector/log.h"
#include "collector/memory_room.h"

namespace profagent::collector {
namespace {

// This thread's buffer, through the cursor pointer of collector/api.h (one initial-exec TLS
// word, never a thread_local object). A stale pointer after fork is cleared by the child
// handler; after thread exit by the pthread key destructor.
ThreadBuffer* this_thread_buffer() noexcept { return static_cast<ThreadBuffer*>(tls_cursor); }

struct Registry {
  std::mutex mutex;                     // leaf lock, see thread_buffer.h
  std::vector<ThreadBuffer*> buffers;   // every buffer ever registered in this process
  std::vector<ThreadBuffer*> reusable;  // retired and fully read
  ChunkPool* pool = nullptr;
  uint32_t next_slot = 1;
  std::atomic<uint64_t> unbuffered_drops{0};  // events of threads that got no buffer
  pthread_key_t exit_key{};
};

std::atomic<Registry*> g_registry{nullptr};
std::atomic<size_t> g_configured_bytes{kDefaultBufferBytes};

// Events recorded before any thread could be registered: no memory for the registry (it is
// tried again at the next event). Counted with the host drops and said once.
std::atomic<uint64_t> g_registryless_drops{0};
void count_registryless_drop() noexcept {
  g_registryless_drops.fetch_add(1, std::memory_order_relaxed);
  static std::atomic<bool> said{false};
  if (!said.exchange(true, std::memory_order_relaxed)) {
    log(LogLevel::Warn, "no memory for the event buffers' registry: events are dropped (and counted) until there is");
  }
}

void on_thread_exit(void* value) {
  auto* buffer = static_cast<ThreadBuffer*>(value);
  if (this_thread_buffer() == buffer) tls_cursor = nullptr;  // later events register a new buffer
  buffer->retired.store(true, std::memory_order_release);
}

void fork_prepare() noexcept {
  if (Registry* r = g_registry.load(std::memory_order_acquire)) r->mutex.lock();
}
void fork_parent() noexcept {
  if (Registry* r = g_registry.load(std::memory_order_acquire)) r->mutex.unlock();
}
void fork_child() noexcept {
  Registry* r = g_registry.load(std::memory_order_acquire);
  if (!r) return;
  forget_buffers_in_child();
  r->mutex.unlock();
}

// Under a memory limit (`ulimit -v` or `-d`) the arena takes at most an eighth of the room left
// below it: reserving the whole PROFAGENT_BUFFER_MB there could make the program's own
// allocations fail, and the freeze at the end needs memory too. Read once, when the first event
// of the process is recorded.
size_t address_space_share() noexcept {
  const size_t room = memory_room();
  return room == SIZE_MAX ? SIZE_MAX : room / 8;
}

// Racing threads each build one and publish with a compare-and-swap; the losers take theirs
// apart. No lock: a fork while another thread created the registry under a mutex left the
// child that mutex locked forever (reliability.fork_stress_light hung 1 run in 7).
Registry* create_registry() noexcept {
  auto* registry = new (std::nothrow) Registry;
  if (!registry) return nullptr;
  registry->pool = new (std::nothrow) ChunkPool(g_configured_bytes.load(), address_space_share());
  if (!registry->pool || pthread_key_create(&registry->exit_key, &on_thread_exit) != 0) {
    return g_registry.load(std::memory_order_acquire);  // leaked: memory is exhausted anyway
  }
  Registry* existing = nullptr;
  if (!g_registry.compare_exchange_strong(existing, registry, std::memory_order_acq_rel)) {
    pthread_key_delete(registry->exit_key);
    delete registry->pool;
    delete registry;
    return existing;
  }
  pthread_atfork(&fork_prepare, &fork_parent, &fork_child);
  return registry;
}

Registry* registry() noexcept {
  Registry* r = g_registry.load(std::memory_order_acquire);
  return r ? r : create_registry();
}

void capture_identity(ThreadBuffer* buffer) noexcept {
  buffer->tid = uint32_t(syscall(SYS_gettid));
  buffer->pid = uint32_t(getpid());
  std::memset(buffer->name, 0, sizeof buffer->name);
  prctl(PR_GET_NAME, buffer->name, 0, 0, 0);
  buffer->name[sizeof buffer->name - 1] = '\0';
}

// A retired, fully read buffer is reused with its slot and id counter, so ids stay unique.
ThreadBuffer* take_buffer(Registry* r) {
  std::lock_guard lock(r->mutex);
  if (!r->reusable.empty()) {
    ThreadBuffer* buffer = r->reusable.back();
    r->reusable.pop_back();
    buffer->tail = nullptr;
    buffer->slots = nullptr, buffer->committed = nullptr;
    buffer->used = buffer->capacity = 0;
    buffer->head.store(nullptr, std::memory_order_relaxed);
    buffer->read_chunk = nullptr;
    buffer->read_index = 0;
    buffer->peek_chunk = nullptr;
    buffer->open_scopes = 0;
    buffer->outermost_scope_start.store(~uint64_t{0}, std::memory_order_relaxed);
    buffer->in_call.store(0, std::memory_order_relaxed);
    buffer->latest_end_read = 0;
    buffer->writer_chunk_seen = nullptr;
    buffer->writer_committed_seen = 0;
    buffer->retired.store(false, std::memory_order_relaxed);
    buffer->reusable = false;
    buffer->readable = ReadablePages{};  // another thread's stack
    return buffer;
  }
  if (r->next_slot >= kMaxThreadSlots) return nullptr;
  auto* buffer = new ThreadBuffer;
  buffer->slot = r->next_slot++;
  buffer->id_base = uint64_t(buffer->slot) << 32;
  r->buffers.push_back(buffer);
  return buffer;
}

ThreadBuffer* register_thread() noexcept {
  Registry* r = registry();
  if (!r) return nullptr;
  ThreadBuffer* buffer = nullptr;
  try {
    buffer = take_buffer(r);
  } catch (...) {
    static SwallowedSite site{"a thread could not be given an event buffer: its events are dropped and counted"};
    note_swallowed(site);
    return nullptr;
  }
  if (!buffer) return nullptr;
  read_deferred_system_times();  // the process's first event may be this one (collector/cpu_times.h)
  capture_identity(buffer);
  pthread_setspecific(r->exit_key, buffer);
  tls_cursor = buffer;
  return buffer;
}

void count_drop(ThreadBuffer* buffer) noexcept {
  buffer->dropped.store(buffer->dropped.load(std::memory_order_relaxed) + 1,
                        std::memory_order_relaxed);
}

// Slow path of record(): the current chunk is full (or there is none yet).
Chunk* grow(ThreadBuffer* buffer) noexcept {
  Chunk* chunk = g_registry.load(std::memory_order_relaxed)->pool->pop();
  if (!chunk) return nullptr;
  if (buffer->tail) {
    buffer->tail->next.store(chunk, std::memory_order_release);
  } else {
    buffer->head.store(chunk, std::memory_order_release);
  }
  buffer->tail = chunk;
  buffer->slots = chunk->events;
  buffer->committed = &chunk->committed;
  buffer->used = 0;
  buffer->capacity = kEventsPerChunk;
  return chunk;
}

// Events committed since the last read (a lower bound: the writer may commit more meanwhile),
// so the copy grows its vector once instead of by doubling: fresh memory costs page faults.
size_t committed_since_read(const ThreadBuffer* buffer, const Chunk* chunk) {
  size_t count = 0;
  for (uint32_t skip = buffer->read_index; chunk != nullptr; skip = 0) {
    count += chunk->committed.load(std::memory_order_acquire) - skip;
    chunk = chunk->next.load(std::memory_order_acquire);
  }
  return count;
}

void copy_committed(ThreadBuffer* buffer, ChunkPool* pool, std::vector<HostEvent>& out) {
  Chunk* chunk = buffer->read_chunk ? buffer->read_chunk
                                    : buffer->head.load(std::memory_order_acquire);
  if (!chunk) return;
  reserve_on_huge_pages(out, out.size() + committed_since_read(buffer, chunk));
  buffer->read_chunk = chunk;
  for (;;) {
    uint32_t committed = chunk->committed.load(std::memory_order_acquire);
    out.insert(out.end(), chunk->events + buffer->read_index, chunk->events + committed);
    buffer->read_index = committed;
    if (committed < kEventsPerChunk) return;
    Chunk* next = chunk->next.load(std::memory_order_acquire);
    if (!next) return;  // the writer has not moved on: it still owns this chunk
    pool->push(chunk);  // fully read and left by the writer
    chunk = next;
    buffer->read_chunk = chunk;
    buffer->read_index = 0;
  }
}

// peek_all(): the same copy from the peek position, which only moves forward; chunks stay.
void copy_since_peek(ThreadBuffer* buffer, std::vector<HostEvent>& out, size_t max_events) {
  Chunk* chunk = buffer->peek_chunk;
  uint32_t index = buffer->peek_index;
  if (chunk == nullptr) {
    chunk = buffer->read_chunk ? buffer->read_chunk : buffer->head.load(std::memory_order_acquire);
    index = buffer->read_index;
  }
  if (!chunk) return;
  for (;;) {
    const uint32_t committed = chunk->committed.load(std::memory_order_acquire);
    out.insert(out.end(), chunk->events + index, chunk->events + committed);
    index = committed;
    Chunk* next = committed < kEventsPerChunk ? nullptr : chunk->next.load(std::memory_order_acquire);
    if (!next || out.size() >= max_events) break;
    chunk = next;
    index = 0;
  }
  buffer->peek_chunk = chunk;
  buffer->peek_index = index;
}

// The events committed in the writer's chunk when it committed nothing since the previous take
// (as drain_all copies them: the chunk stays with the writer, the read position moves on).
void take_from_idle_writer(ThreadBuffer* buffer, Chunk* chunk, std::vector<HostEvent>& out) {
  const uint32_t committed = chunk->committed.load(std::memory_order_acquire);
  if (chunk->next.load(std::memory_order_acquire) != nullptr) return;  // left: the budget stopped the take
  const bool idle = chunk == buffer->writer_chunk_seen && committed == buffer->writer_committed_seen;
  buffer->writer_chunk_seen = chunk;
  buffer->writer_committed_seen = committed;
  if (!idle || committed <= buffer->read_index) return;
  out.insert(out.end(), chunk->events + buffer->read_index, chunk->events + committed);
  buffer->read_chunk = chunk;
  buffer->read_index = committed;
  buffer->peek_chunk = nullptr;  // it may name a position before the read position now
}

// take_closed_chunks(): whole chunks from the read position that the writer has left, up to
// `budget` events (at least one chunk once anything is left).
size_t take_left_chunks(ThreadBuffer* buffer, ChunkPool* pool, size_t budget, std::vector<HostEvent>& out) {
  size_t chunks = 0;
  Chunk* chunk = buffer->read_chunk ? buffer->read_chunk : buffer->head.load(std::memory_order_acquire);
  while (chunk != nullptr && (chunks == 0 || out.size() + kEventsPerChunk <= budget)) {
    if (chunk->committed.load(std::memory_order_acquire) < kEventsPerChunk) break;
    Chunk* next = chunk->next.load(std::memory_order_acquire);
    if (next == nullptr) break;  // the writer has not moved on: it still owns this chunk
    out.insert(out.end(), chunk->events + buffer->read_index, chunk->events + kEventsPerChunk);
    pool->push(chunk);
    ++chunks;
    chunk = next;
    buffer->read_chunk = chunk;
    buffer->read_index = 0;
    buffer->peek_chunk = nullptr;  // it may have named the chunk just recycled
  }
  if (chunk != nullptr && out.size() < budget) take_from_idle_writer(buffer, chunk, out);
  return chunks;
}

// What a take left (committed from the read position on): the earliest start of its operators
// and ranges (they may enclose events taken before them), the earliest start of its events but
// steps and stack tags, and the latest end of all.
struct LeftEvents {
  uint64_t earliest_scope = ~uint64_t{0};
  uint64_t earliest = ~uint64_t{0};
  uint64_t latest_end = 0;
};
LeftEvents scan_left(const ThreadBuffer* buffer) {
  LeftEvents left;
  const Chunk* chunk = buffer->read_chunk ? buffer->read_chunk : buffer->head.load(std::memory_order_acquire);
  for (uint32_t index = buffer->read_index; chunk != nullptr; index = 0) {
    const uint32_t committed = chunk->committed.load(std::memory_order_acquire);
    for (uint32_t i = index; i < committed; ++i) {
      const HostEvent& e = chunk->events[i];
      const EventKind kind = EventKind(e.kind);
      const bool scope = kind == EventKind::Operator || kind == EventKind::Step ||
                         (kind == EventKind::Range && !(e.flags & kFlagRangeStartEnd));
      if (scope) left.earliest_scope = std::min(left.earliest_scope, e.start);
      if (kind != EventKind::Step && kind != EventKind::StackTag) left.earliest = std::min(left.earliest, e.start);
      left.latest_end = std::max(left.latest_end, e.end);
    }
    if (committed < kEventsPerChunk) break;
    chunk = chunk->next.load(std::memory_order_acquire);
  }
  return left;
}

uint64_t latest_end(const std::vector<HostEvent>& events) {
  uint64_t latest = 0;
  for (const HostEvent& e : events) latest = std::max(latest, e.end);
  return latest;
}

void recycle_if_retired(Registry* r, ThreadBuffer* buffer) {
  if (!buffer->retired.load(std::memory_order_acquire)) return;
  // The thread is gone: everything it committed was copied above, so its last chunk is free.
  if (Chunk* last = buffer->read_chunk ? buffer->read_chunk : buffer->head.load()) {
    r->pool->push(last);
  }
  buffer->read_chunk = nullptr;
  buffer->head.store(nullptr, std::memory_order_relaxed);
  buffer->reusable = true;
  r->reusable.push_back(buffer);
}

// Thread names may change after registration (pthread_setname_np): read the current one.
std::string current_thread_name(const ThreadBuffer* buffer) {
  if (buffer->retired.load(std::memory_order_acquire) || buffer->pid != uint32_t(getpid())) {
    return buffer->name;
  }
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%u/comm", buffer->tid);
  FILE* file = std::fopen(path, "re");
  if (!file) return buffer->name;
  char name[32] = {};
  bool ok = std::fgets(name, sizeof name, file) != nullptr;
  std::fclose(file);
  if (!ok) return buffer->name;
  name[std::strcspn(name, "\n")] = '\0';
  return name;
}

}  // namespace

void configure_buffers(size_t bytes) noexcept {
  if (bytes >= kChunkBytes) g_configured_bytes.store(bytes);
}

DrainResult drain_all() {
  DrainResult result;
  Registry* r = g_registry.load(std::memory_order_acquire);
  if (!r) return result;
  std::lock_guard lock(r->mutex);
  for (ThreadBuffer* buffer : r->buffers) {
    uint64_t dropped = buffer->dropped.load(std::memory_order_relaxed);
    result.dropped += dropped - buffer->dropped_reported;
    buffer->dropped_reported = dropped;
    buffer->peek_chunk = nullptr;  // back at the read position (its chunk may be recycled below)
    if (buffer->reusable) continue;
    ThreadEvents thread;
    copy_committed(buffer, r->pool, thread.events);
    if (!thread.events.empty()) {
      buffer->latest_end_read = std::max(buffer->latest_end_read, latest_end(thread.events));
      thread.tid = buffer->tid;
      thread.pid = buffer->pid;
      thread.name = current_thread_name(buffer);
      result.threads.push_back(std::move(thread));
    }
    recycle_if_retired(r, buffer);
  }
  result.dropped += r->unbuffered_drops.exchange(0) + g_registryless_drops.exchange(0);
  return result;
}

DrainResult peek_all(size_t max_events) {
  DrainResult result;
  Registry* r = g_registry.load(std::memory_order_acquire);
  if (!r) return result;
  std::lock_guard lock(r->mutex);
  for (ThreadBuffer* buffer : r->buffers) {
    if (buffer->reusable) continue;
    ThreadEvents thread;
    copy_since_peek(buffer, thread.events, max_events);
    if (thread.events.empty()) continue;
    thread.tid = buffer->tid;
    thread.pid = buffer->pid;
    thread.name = current_thread_name(buffer);
    result.threads.push_back(std::move(thread));
  }
  return result;
}

TakenChunks take_closed_chunks(size_t max_events) {
  TakenChunks taken;
  Registry* r = g_registry.load(std::memory_order_acquire);
  if (!r) return taken;
  std::lock_guard lock(r->mutex);
  taken.read_at = now();  // before every mark below (a thread registered later starts after it)
  for (ThreadBuffer* buffer : r->buffers) {
    if (buffer->reusable) continue;
    TakenThread thread;
    const size_t taken_events = taken.chunks * kEventsPerChunk;
    if (taken_events < max_events) {
      taken.chunks += take_left_chunks(buffer, r->pool, max_events - taken_events, thread.events.events);
    }
    buffer->latest_end_read = std::max(buffer->latest_end_read, latest_end(thread.events.events));
    // After the take, in this order (api.h scope_opened): a scope around a taken event is open
    // here (published), or was committed before this load and is found by the scan. The call
    // in flight before the scan: what was committed before it is seen by the scan.
    const bool exited = buffer->retired.load(std::memory_order_acquire);
    const bool in_call = !exited && buffer->in_call.load(std::memory_order_acquire) != 0;
    thread.outermost_scope_start = buffer->outermost_scope_start.load(std::memory_order_acquire);
    const LeftEvents left = scan_left(buffer);
    thread.scope_after_take = left.earliest_scope;
    buffer->latest_end_read = std::max(buffer->latest_end_read, left.latest_end);
    thread.not_taken_start = std::min(left.earliest, in_call ? buffer->latest_end_read : ~uint64_t{0});
    thread.exited = exited;
    thread.events.tid = buffer->tid;
    thread.events.pid = buffer->pid;
    thread.events.name = current_thread_name(buffer);
    taken.threads.push_back(std::move(thread));
  }
  return taken;
}

size_t buffered_host_events() noexcept {
  Registry* r = g_registry.load(std::memory_order_acquire);
  return r == nullptr ? 0 : size_t(r->pool->in_use()) * kEventsPerChunk;
}

void warm_host_buffers() noexcept {
  // At least 8 MiB (~175 000 events) ahead, more when the writers went faster than that
  // since the last call: twice what they took, so a steady rate never reaches cold pages.
  constexpr uint32_t kMinAheadChunks = (8u << 20) / kChunkBytes;
  static std::atomic<uint32_t> last_handed_out{0};
  // Nothing recorded yet (an idle or host-less process): commit nothing for it.
  Registry* r = g_registry.load(std::memory_order_acquire);
  if (r == nullptr) return;
  const uint32_t handed_out = r->pool->handed_out();
  const uint32_t taken = handed_out - last_handed_out.exchange(handed_out);
  r->pool->warm_ahead(std::max(kMinAheadChunks, 2 * taken));
}

bool any_buffer_taken() noexcept {
  Registry* r = g_registry.load(std::memory_order_acquire);
  if (!r) return false;
  std::lock_guard lock(r->mutex);
  return !r->buffers.empty();
}

uint32_t registered_buffer_count() noexcept {
  Registry* r = g_registry.load(std::memory_order_acquire);
  if (!r) return 0;
  std::lock_guard lock(r->mutex);
  return uint32_t(r->buffers.size() - r->reusable.size());
}

BufferReservation buffer_reservation() noexcept {
  Registry* r = g_registry.load(std::memory_order_acquire);
  if (r == nullptr) return {};
  return {r->pool->requested_bytes(), r->pool->reserved_bytes(), r->pool->committed_bytes()};
}

uint32_t pool_capacity_chunks() noexcept {
  Registry* r = registry();
  return r ? r->pool->capacity() : 0;
}

void forget_buffers_in_child() noexcept {
  tls_cursor = nullptr;
  Registry* r = g_registry.load(std::memory_order_acquire);
  if (!r) return;
  // The parent's buffers (and their chunks) stay allocated but unreachable: the child must
  // never write or flush the parent's events. Slots keep counting up, so ids stay unique.
  r->buffers.clear();
  r->reusable.clear();
}

// ---- hot path slow halves (collector/api.h) -------------------------------------------------

__thread EventCursor* tls_cursor __attribute__((tls_model("initial-exec"))) = nullptr;

uint64_t new_event_id_slow() noexcept {
  if (register_thread() != nullptr) return new_event_id();
  // No buffer for this thread: ids from a shared counter in slot 0 (rare, so an atomic
  // increment is fine here).
  static std::atomic<uint64_t> fallback{0};
  return (fallback.fetch_add(1, std::memory_order_relaxed) + 1) & 0xffffffffu;
}

HostEvent* begin_record_slow() noexcept {
  ThreadBuffer* buffer = this_thread_buffer();
  if (buffer == nullptr) {
    buffer = register_thread();
    if (buffer == nullptr) {
      if (Registry* r = g_registry.load(std::memory_order_relaxed)) {
        r->unbuffered_drops.fetch_add(1, std::memory_order_relaxed);
      } else {
        count_registryless_drop();
      }
      return nullptr;
    }
  }
  if (grow(buffer) == nullptr) {  // a (re)registered buffer has no chunk yet either
    count_drop(buffer);
    return nullptr;
  }
  return &buffer->slots[0];
}

}  // namespace profagent::collector
