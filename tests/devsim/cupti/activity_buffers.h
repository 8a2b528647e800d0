// Activity buffers as real CUPTI handles them: buffers come from the client's request
// callback when a record needs space (a client answer of no buffer / size 0 drops the record,
// counted), records are laid out back to back at 8-byte alignment (the layout
// cuptiActivityGetNextRecord walks), and full or flushed buffers go back through the client's
// completed callback on a thread this library owns.
//
// Lock order: fill_mutex_ before queue_mutex_. fill_mutex_ is held while calling the client's
// request callback (so one buffer is never handed out twice); queue_mutex_ is never held while
// calling the client. A request callback must therefore not generate CUPTI records itself
// (real clients never call CUDA from it).
#pragma once

#include <cupti_activity.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

namespace profagent::devsim_cupti {

inline constexpr size_t kRecordAlignment = 8;

// Offset of the first record in a client buffer (CUPTI aligns records, not the buffer).
inline size_t first_record_offset(const uint8_t* buffer) {
  const auto address = reinterpret_cast<uintptr_t>(buffer);
  return (kRecordAlignment - address % kRecordAlignment) % kRecordAlignment;
}

class ActivityBuffers {
 public:
  ActivityBuffers() = default;
  // Stops the delivery thread; buffers still queued are handed back first. The process-wide
  // instance is leaked and never gets here; sessions built by tests do.
  ~ActivityBuffers();
  ActivityBuffers(const ActivityBuffers&) = delete;
  ActivityBuffers& operator=(const ActivityBuffers&) = delete;

  void set_callbacks(CUpti_BuffersCallbackRequestFunc request,
                     CUpti_BuffersCallbackCompleteFunc complete);
  bool has_callbacks() const;

  // Copies one record (size a multiple of 8) into the current buffer. Returns false (and
  // counts a drop) when no buffer could hold it.
  bool append(const void* record, size_t size);
  // Counts a record that was dropped before reaching a buffer (fault injection).
  void count_drop() { dropped_.fetch_add(1, std::memory_order_relaxed); }
  // Dropped records since the previous call (cuptiActivityGetNumDroppedRecords semantics).
  size_t take_dropped() { return dropped_.exchange(0, std::memory_order_relaxed); }

  // Hands back the buffers that are complete (full ones) and, when forced, the partially
  // filled current one; returns once the completed callback has run for each of them.
  void flush(bool forced);
  // Forced flush, then forgets the callbacks (cuptiFinalize).
  void detach();

 private:
  struct Buffer {
    uint8_t* data = nullptr;
    size_t size = 0;
    size_t used = 0;  // validSize: bytes up to the end of the last record
    size_t records = 0;
    size_t max_records = 0;  // 0: as many as fit
    CUpti_BuffersCallbackCompleteFunc complete = nullptr;  // whom to hand it back to
  };

  bool fits(const Buffer& buffer, size_t size) const;
  bool request_buffer();                       // fill_mutex_ held
  void complete_current();                     // fill_mutex_ held
  void deliver_loop();
  void wait_delivered(uint64_t sequence);

  mutable std::mutex fill_mutex_;
  CUpti_BuffersCallbackRequestFunc request_ = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete_ = nullptr;
  Buffer current_;

  std::mutex queue_mutex_;
  std::condition_variable queue_cv_;      // a buffer was queued
  std::condition_variable delivered_cv_;  // a buffer was delivered
  std::deque<Buffer> completed_;
  uint64_t queued_count_ = 0;
  uint64_t delivered_count_ = 0;
  std::thread worker_;
  std::thread::id worker_id_;
  bool worker_started_ = false;
  bool stopping_ = false;

  std::atomic<size_t> dropped_{0};
};

}  // namespace profagent::devsim_cupti
