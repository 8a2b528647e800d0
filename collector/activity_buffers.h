// The preallocated pool of CUPTI activity buffers: a request never blocks and never allocates.
//
// CUPTI asks for a buffer from whatever thread needs one; handing out a fresh allocation there
// slows the launch that triggered it by orders of magnitude (kineto#1020), so buffers come from
// one arena reserved at start and are recycled after parsing. No buffer free: CUPTI gets size
// 0 and drops (and counts) the records. The completed callback only enqueues.
//
// Lock order: mutex_ is a leaf held for a few pointer moves; never held across a CUPTI call
// (cuptiActivityFlushAll runs the completed callback synchronously on some thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace profagent::collector {

inline constexpr size_t kActivityBufferBytes = 4u << 20;  // CUPTI recommends 1-10 MB

class ActivityBuffers {
 public:
  struct Completed {
    uint8_t* buffer;
    size_t valid_bytes;
  };

  // Reserves count x kActivityBufferBytes (MAP_NORESERVE: untouched buffers cost nothing).
  bool reserve(size_t count) noexcept;

  uint8_t* take() noexcept;                               // nullptr when all are in use
  void give_back(uint8_t* buffer) noexcept;               // after parsing
  void complete(uint8_t* buffer, size_t valid) noexcept;  // CUPTI's completed callback
  std::vector<Completed> take_completed();                // for parsing, oldest first
  bool owns(const uint8_t* buffer) const noexcept;

 private:
  std::mutex mutex_;
  uint8_t* arena_ = nullptr;
  size_t count_ = 0;
  std::vector<uint8_t*> free_;          // capacity reserved: no allocation under the lock
  std::vector<Completed> completed_;    // likewise
};

}  // namespace profagent::collector
