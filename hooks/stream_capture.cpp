#include "hooks/stream_capture.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

namespace profagent::hooks::capture {
namespace {

// More simultaneous capturing streams (or capture events) than this are not tagged: their
// launches look like launches. PyTorch captures one stream at a time, forking a few.
constexpr size_t kSlots = 16;
constexpr size_t kEventSlots = 64;

// A stream taking part in a capture, and the stream that began it (itself for the origin).
struct Slot {
  std::atomic<uintptr_t> stream{0};
  uintptr_t origin = 0;  // written under g_change only
};
// An event recorded on a capturing stream: a stream that waits for it joins that capture.
struct EventSlot {
  uintptr_t event = 0;
  uintptr_t origin = 0;
};

std::array<Slot, kSlots> g_streams;
std::array<EventSlot, kEventSlots> g_events;
std::atomic<uint32_t> g_active{0};
// Serialises changes (begin/end, event records and waits on capturing streams). Never held
// across a CUDA call: the hooks call in here after the real call returned.
std::mutex g_change;

uintptr_t key(const void* handle) { return reinterpret_cast<uintptr_t>(handle); }

Slot* slot_of_locked(uintptr_t stream) {
  for (Slot& slot : g_streams) {
    if (slot.stream.load(std::memory_order_relaxed) == stream) return &slot;
  }
  return nullptr;
}

void add_locked(uintptr_t stream, uintptr_t origin) {
  if (slot_of_locked(stream)) return;
  for (Slot& slot : g_streams) {
    if (slot.stream.load(std::memory_order_relaxed) != 0) continue;
    slot.origin = origin;
    slot.stream.store(stream, std::memory_order_relaxed);
    g_active.fetch_add(1, std::memory_order_relaxed);
    return;
  }
}

EventSlot* event_slot_locked(uintptr_t event) {
  for (EventSlot& slot : g_events) {
    if (slot.event == event) return &slot;
  }
  return nullptr;
}

}  // namespace

bool is_capturing(cudaStream_t stream) noexcept {
  if (g_active.load(std::memory_order_relaxed) == 0 || stream == nullptr) return false;
  for (const Slot& slot : g_streams) {
    if (slot.stream.load(std::memory_order_relaxed) == key(stream)) return true;
  }
  return false;
}

void begin(cudaStream_t stream, cudaError_t result) noexcept {
  if (result != cudaSuccess || stream == nullptr) return;
  std::lock_guard lock(g_change);
  add_locked(key(stream), key(stream));
}

// Ends the capture the stream began: every stream that joined it leaves too, and its events
// no longer pull streams in (CUDA requires the forked streams to have joined back by now).
void end(cudaStream_t stream) noexcept {
  if (stream == nullptr || g_active.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard lock(g_change);
  const Slot* own = slot_of_locked(key(stream));
  if (!own) return;
  const uintptr_t origin = own->origin;
  for (Slot& slot : g_streams) {
    if (slot.stream.load(std::memory_order_relaxed) == 0 || slot.origin != origin) continue;
    slot.stream.store(0, std::memory_order_relaxed);
    g_active.fetch_sub(1, std::memory_order_relaxed);
  }
  for (EventSlot& slot : g_events) {
    if (slot.origin == origin) slot = EventSlot{};
  }
}

void record_event(cudaEvent_t event, cudaStream_t stream, cudaError_t result) noexcept {
  if (result != cudaSuccess || g_active.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard lock(g_change);
  EventSlot* known = event_slot_locked(key(event));
  const Slot* capturing = stream ? slot_of_locked(key(stream)) : nullptr;
  if (!capturing) {  // recorded outside any capture again: waiting for it forks nothing
    if (known) *known = EventSlot{};
    return;
  }
  if (!known) known = event_slot_locked(0);
  if (known) *known = EventSlot{key(event), capturing->origin};
}

bool is_capture_event(cudaEvent_t event) noexcept {
  if (g_active.load(std::memory_order_relaxed) == 0 || event == nullptr) return false;
  std::lock_guard lock(g_change);
  return event_slot_locked(key(event)) != nullptr;
}

void wait_event(cudaStream_t stream, cudaEvent_t event, cudaError_t result) noexcept {
  if (result != cudaSuccess || stream == nullptr || g_active.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard lock(g_change);
  const EventSlot* captured = event_slot_locked(key(event));
  if (captured && captured->event != 0) add_locked(key(stream), captured->origin);
}

}  // namespace profagent::hooks::capture
