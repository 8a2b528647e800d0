#include "collector/activity_buffers.h"

#include <sys/mman.h>

namespace profagent::collector {

bool ActivityBuffers::reserve(size_t count) noexcept {
  if (count == 0) return false;
  void* arena = mmap(nullptr, count * kActivityBufferBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (arena == MAP_FAILED) return false;
  try {
    free_.reserve(count);
    completed_.reserve(count);
  } catch (...) {
    munmap(arena, count * kActivityBufferBytes);
    return false;
  }
  arena_ = static_cast<uint8_t*>(arena);
  count_ = count;
  for (size_t i = count; i-- > 0;) free_.push_back(arena_ + i * kActivityBufferBytes);
  return true;
}

uint8_t* ActivityBuffers::take() noexcept {
  std::lock_guard lock(mutex_);
  if (free_.empty()) return nullptr;
  uint8_t* buffer = free_.back();
  free_.pop_back();
  return buffer;
}

void ActivityBuffers::give_back(uint8_t* buffer) noexcept {
  if (!owns(buffer)) return;
  std::lock_guard lock(mutex_);
  free_.push_back(buffer);  // never exceeds the reserved capacity
}

void ActivityBuffers::complete(uint8_t* buffer, size_t valid) noexcept {
  if (!owns(buffer)) return;
  std::lock_guard lock(mutex_);
  completed_.push_back(Completed{buffer, valid});
}

std::vector<ActivityBuffers::Completed> ActivityBuffers::take_completed() {
  std::vector<Completed> taken;
  taken.reserve(count_);  // allocate outside the lock
  std::lock_guard lock(mutex_);
  taken.assign(completed_.begin(), completed_.end());
  completed_.clear();
  return taken;
}

bool ActivityBuffers::owns(const uint8_t* buffer) const noexcept {
  return buffer && arena_ && buffer >= arena_ && buffer < arena_ + count_ * kActivityBufferBytes;
}

}  // namespace profagent::collector
