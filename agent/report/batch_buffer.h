// The text of one batch of events, in pages of its own. One event may be hundreds of MB (a
// trace written on one line with a huge name): a std::string would double as it grows, holding
// the old and the new copy while it moves them; here growing moves no byte (mremap), and after
// an oversized batch the pages go back to the system instead of staying with the process.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <new>
#include <string_view>

namespace profagent::report {

class BatchBuffer {
 public:
  // `usual`: the capacity kept between batches; `padding`: readable bytes kept after the end.
  BatchBuffer(std::size_t usual, std::size_t padding) : usual_(usual), padding_(padding) { grow_to(usual); }
  BatchBuffer(const BatchBuffer&) = delete;
  BatchBuffer& operator=(const BatchBuffer&) = delete;
  ~BatchBuffer() {
    if (data_ != nullptr) munmap(data_, capacity_);
  }

  // Throws std::bad_alloc when the system has no more memory.
  void append(const char* bytes, std::size_t n) {
    if (size_ + n + padding_ > capacity_) grow_to(size_ + n);
    std::memcpy(data_ + size_, bytes, n);
    size_ += n;
  }
  void append(char c) { append(&c, 1); }
  std::size_t size() const { return size_; }
  // The text; at least `padding` readable bytes follow it.
  std::string_view view() const { return {data_, size_}; }

  void clear() {
    size_ = 0;
    if (capacity_ > 2 * (usual_ + padding_)) {  // an oversized batch: give its pages back
      munmap(data_, capacity_);
      data_ = nullptr;
      capacity_ = 0;
      grow_to(usual_);
    }
  }

 private:
  void grow_to(std::size_t bytes) {
    constexpr std::size_t kPage = 4096;
    std::size_t want = std::max(bytes + padding_, capacity_ + capacity_ / 2);
    want = (want + kPage - 1) / kPage * kPage;
    void* p = data_ == nullptr ? mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                               : mremap(data_, capacity_, want, MREMAP_MAYMOVE);
    if (p == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<char*>(p);
    capacity_ = want;
  }

  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  std::size_t usual_;
  std::size_t padding_;
};

}  // namespace profagent::report
