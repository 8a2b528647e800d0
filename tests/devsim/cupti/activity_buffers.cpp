#include "activity_buffers.h"

#include <cstring>

namespace profagent::devsim_cupti {

void ActivityBuffers::set_callbacks(CUpti_BuffersCallbackRequestFunc request,
                                    CUpti_BuffersCallbackCompleteFunc complete) {
  std::lock_guard lock(fill_mutex_);
  request_ = request;
  complete_ = complete;
}

bool ActivityBuffers::has_callbacks() const {
  std::lock_guard lock(fill_mutex_);
  return request_ != nullptr && complete_ != nullptr;
}

bool ActivityBuffers::fits(const Buffer& buffer, size_t size) const {
  if (buffer.data == nullptr) return false;
  if (buffer.max_records != 0 && buffer.records >= buffer.max_records) return false;
  const size_t start = buffer.used == 0 ? first_record_offset(buffer.data) : buffer.used;
  return start + size <= buffer.size;
}

bool ActivityBuffers::request_buffer() {
  if (request_ == nullptr) return false;
  uint8_t* data = nullptr;
  size_t size = 0;
  size_t max_records = 0;
  request_(&data, &size, &max_records);
  if (data == nullptr || size == 0) return false;  // the client declined: records are dropped
  current_ = Buffer{data, size, 0, 0, max_records, complete_};
  return true;
}

void ActivityBuffers::complete_current() {
  if (current_.data == nullptr) return;
  {
    std::lock_guard lock(queue_mutex_);
    completed_.push_back(current_);
    ++queued_count_;
    if (!worker_started_) {
      worker_started_ = true;
      worker_ = std::thread(&ActivityBuffers::deliver_loop, this);
    }
  }
  queue_cv_.notify_one();
  current_ = Buffer{};
}

bool ActivityBuffers::append(const void* record, size_t size) {
  std::lock_guard lock(fill_mutex_);
  if (!fits(current_, size)) {
    complete_current();
    if (!request_buffer() || !fits(current_, size)) {
      count_drop();
      return false;
    }
  }
  if (current_.used == 0) current_.used = first_record_offset(current_.data);
  std::memcpy(current_.data + current_.used, record, size);
  current_.used += size;
  ++current_.records;
  return true;
}

void ActivityBuffers::deliver_loop() {
  std::unique_lock lock(queue_mutex_);
  worker_id_ = std::this_thread::get_id();
  for (;;) {
    queue_cv_.wait(lock, [this] { return !completed_.empty() || stopping_; });
    if (completed_.empty()) return;  // stopping, nothing left to hand back
    const Buffer buffer = completed_.front();
    completed_.pop_front();
    lock.unlock();
    if (buffer.complete != nullptr) {
      buffer.complete(nullptr, 0, buffer.data, buffer.size, buffer.used);
    }
    lock.lock();
    ++delivered_count_;
    delivered_cv_.notify_all();
  }
}

ActivityBuffers::~ActivityBuffers() {
  {
    std::lock_guard lock(queue_mutex_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void ActivityBuffers::wait_delivered(uint64_t sequence) {
  std::unique_lock lock(queue_mutex_);
  // Called from the completed callback itself: waiting would deadlock the only deliverer.
  if (worker_started_ && std::this_thread::get_id() == worker_id_) return;
  delivered_cv_.wait(lock, [&] { return delivered_count_ >= sequence; });
}

void ActivityBuffers::flush(bool forced) {
  uint64_t sequence = 0;
  {
    std::lock_guard lock(fill_mutex_);
    if (forced) complete_current();
    std::lock_guard queue_lock(queue_mutex_);
    sequence = queued_count_;
  }
  wait_delivered(sequence);
}

void ActivityBuffers::detach() {
  flush(true);
  std::lock_guard lock(fill_mutex_);
  request_ = nullptr;
  complete_ = nullptr;
}

}  // namespace profagent::devsim_cupti
