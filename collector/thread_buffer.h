// Per-thread event buffers and the leaked registry that owns them: a full buffer drops and
// counts, the thread never blocks.
//
// Each thread that records gets one ThreadBuffer: a single-writer list of chunks from the
// ChunkPool. The writer (the thread) appends and publishes with store-release; the reader
// (a freeze, under the registry lock) copies the committed prefix with load-acquire and
// recycles chunks it has fully read and the writer has left. Buffers of exited threads stay
// registered until read, then their ThreadBuffer (with its id counter) is reused.
//
// Everything here is deliberately leaked: a freeze can run at exit, after static destructors,
// and threads may still record while the process exits.
//
// Lock order: Registry::mutex_ is a leaf — nothing else is locked while it is held (pool
// operations are lock-free). It is never held across a CUPTI or CUDA call.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "collector/api.h"
#include "collector/chunk_pool.h"
#include "collector/event.h"
#include "collector/unwinder_memory.h"

namespace profagent::collector {

inline constexpr size_t kDefaultBufferBytes = 256u << 20;
inline constexpr uint32_t kMaxThreadSlots = 1u << 21;  // slot in the id's bits 32..52

// The writer's cursor (collector/api.h) comes first: tls_cursor points at it.
struct ThreadBuffer : EventCursor {
  // Writer side (the owning thread only), besides the cursor.
  Chunk* tail = nullptr;
  std::atomic<uint64_t> dropped{0};      // only the writer stores (no read-modify-write)
  std::atomic<Chunk*> head{nullptr};     // first chunk, published by the writer once
  bool unwinding = false;                // a call stack is being taken (collector/stacks.cpp)
  ReadablePages readable;                // pages of this thread libunwind may read directly

  // Reader side (registry lock held).
  Chunk* read_chunk = nullptr;
  uint32_t read_index = 0;
  uint64_t dropped_reported = 0;
  uint64_t latest_end_read = 0;          // the latest end among the events read or taken so far
  const Chunk* writer_chunk_seen = nullptr;  // the writer's chunk at the last take, and how many
  uint32_t writer_committed_seen = 0;        // events it had committed then
  bool reusable = false;                 // retired, fully read, waiting for a new thread
  // peek_all()'s position, past the read position; null: at the read position (every
  // drain_all() puts it back there, so it never names a chunk a drain recycled).
  Chunk* peek_chunk = nullptr;
  uint32_t peek_index = 0;

  // Identity, captured at registration.
  uint32_t slot = 0;  // >= 1
  uint32_t tid = 0;
  uint32_t pid = 0;
  char name[16] = {};
  std::atomic<bool> retired{false};      // the thread has exited (pthread key destructor)
};

// What one thread recorded since the previous drain.
struct ThreadEvents {
  uint32_t tid = 0;
  uint32_t pid = 0;
  std::string name;
  std::vector<HostEvent> events;
};

struct DrainResult {
  std::vector<ThreadEvents> threads;
  uint64_t dropped = 0;  // events dropped since the previous drain (full pool, no buffer)
};

// Sets the arena size before the first event of the process; ignored afterwards.
void configure_buffers(size_t bytes) noexcept;

// Copies every committed event of every buffer (live or exited) and recycles what was read.
DrainResult drain_all();

// Copies every event committed since the previous peek_all() (or, after a drain_all(), since
// that drain) without taking it: a later drain_all() still returns it, and no chunk is
// recycled. For a look at the window being recorded (collector/interval_peek.h); `dropped` is 0.
// At most `max_events` per thread (whole chunks from the peek position, at least the first
// one's rest): what is left is given by the next peek.
DrainResult peek_all(size_t max_events = SIZE_MAX);

// Streamed windows (collector/segment_stream.h): the events of chunks their writers have left
// (full, and a next chunk begun), at most `max_events` (whole chunks, at least one per thread
// while the budget lasts), TAKEN: the chunks go back to the pool and a later drain_all()
// starts after them. Also the events committed in a writer's chunk that has not changed since
// the previous take (an idle thread: its few events would otherwise wait for the window's end);
// the chunk stays with the writer. Every live thread is listed (also with nothing taken), with the start of
// its outermost scope open after the take (~0: none; read after it, api.h scope_opened) and
// the earliest start of the scopes committed but not taken (in the writer's chunk): a scope
// that may still enclose a taken event is one of those, so every such event starts at or
// after the smaller of the two.
// Also, for a streamed window's per-step summaries, `not_taken_start`: with
// outermost_scope_start, a mark before which the thread has nothing left to give — every event
// of the thread not taken yet (committed after the take, a call in flight, one to come), Step
// and StackTag events aside, starts at or after the smaller of the two, or at or after
// TakenChunks::read_at. Committed: the earliest start among them (scanned). A call in flight
// (api.h call_entered, loaded before that scan): it started after the thread's last event
// committed before it ended, and no recorded call nests in another, so at or after the latest
// end of those events. A scope open is published (outermost_scope_start; its start is read
// inside call_entered/call_left, so one not published yet is a call in flight). Anything
// else the thread records starts after the agent read its clock (read_at), once the thread's
// stores are seen: they are at most a store buffer's drain late (an interrupt drains it), so
// the agent takes read_at less a margin (segment_stream.cpp). A thread that exited has no call
// or scope open. ~0: nothing.
struct TakenThread {
  ThreadEvents events;
  uint64_t outermost_scope_start = ~uint64_t{0};
  uint64_t scope_after_take = ~uint64_t{0};
  uint64_t not_taken_start = ~uint64_t{0};
  bool exited = false;  // its outermost_scope_start is what it left open, never to close
};
struct TakenChunks {
  std::vector<TakenThread> threads;
  uint64_t chunks = 0;
  uint64_t read_at = 0;  // the clock (ticks), read before any thread's marks
};
TakenChunks take_closed_chunks(size_t max_events);

// Host events in the buffers not drained or taken yet (whole chunks: an estimate from above).
size_t buffered_host_events() noexcept;

// Host event memory asked for (PROFAGENT_BUFFER_MB) and reserved: less when the address space
// is limited (chunk_pool.h). Zeros before the first event of the process.
struct BufferReservation {
  size_t requested = 0;
  size_t reserved = 0;
  size_t committed = 0;  // of which pages were committed (ChunkPool::committed_bytes)
};
BufferReservation buffer_reservation() noexcept;

// False while no thread ever took a buffer: nothing was recorded in this process so far.
bool any_buffer_taken() noexcept;

// Statistics for tests.
uint32_t registered_buffer_count() noexcept;
uint32_t pool_capacity_chunks() noexcept;

// Fork child: forget inherited buffers (without freeing: they belong to the parent's data)
// and the calling thread's buffer. Called from the collector's atfork child handler.
void forget_buffers_in_child() noexcept;

}  // namespace profagent::collector
