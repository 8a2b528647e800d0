#include "hooks/stream_capture.h"

#include <array>
#include <atomic>
#include <cstdint>

namespace profagent::hooks::capture {
namespace {

// More simultaneous captures than this are not tagged (their launches look like launches);
// PyTorch captures one stream at a time.
constexpr size_t kSlots = 16;
std::array<std::atomic<uintptr_t>, kSlots> g_streams{};
std::atomic<uint32_t> g_active{0};

uintptr_t key(cudaStream_t stream) { return reinterpret_cast<uintptr_t>(stream); }

}  // namespace

bool is_capturing(cudaStream_t stream) noexcept {
  if (g_active.load(std::memory_order_relaxed) == 0 || stream == nullptr) return false;
  for (const auto& slot : g_streams) {
    if (slot.load(std::memory_order_relaxed) == key(stream)) return true;
  }
  return false;
}

void begin(cudaStream_t stream, cudaError_t result) noexcept {
  if (result != cudaSuccess || stream == nullptr) return;
  for (auto& slot : g_streams) {
    uintptr_t empty = 0;
    if (slot.compare_exchange_strong(empty, key(stream))) {
      g_active.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
}

void end(cudaStream_t stream) noexcept {
  if (stream == nullptr) return;
  for (auto& slot : g_streams) {
    uintptr_t expected = key(stream);
    if (slot.compare_exchange_strong(expected, 0)) {
      g_active.fetch_sub(1, std::memory_order_relaxed);
      return;
    }
  }
}

}  // namespace profagent::hooks::capture
