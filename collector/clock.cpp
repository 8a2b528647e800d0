#include "collector/clock.h"

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "collector/api.h"
#include "collector/cpu_counter.h"

namespace profagent::collector::clock {
namespace {

// Constant-initialised, so now() works before any constructor of ours has run.
std::atomic<uint8_t> g_source{uint8_t(Source::Unknown)};

// Anchors live in a leaked vector: a freeze may run during exit, after static destructors.
// A fork while another thread holds the lock (a window cut) must not leave the child's copy
// locked: the child's own exit flush takes an anchor.
std::mutex& anchor_mutex() {
  static auto* mutex = [] {
    auto* created = new std::mutex;
    pthread_atfork([] { anchor_mutex().lock(); }, [] { anchor_mutex().unlock(); },
                   [] { anchor_mutex().unlock(); });
    return created;
  }();
  return *mutex;
}
std::vector<Anchor>& anchors() {
  static auto* list = new std::vector<Anchor>;
  return *list;
}

// Built when the library loads, while the process has one thread: a function-local static
// first built by one thread while another forks leaves the child waiting forever on its
// initialisation guard (reliability.fork_stress_light hung on names' table()).
[[gnu::constructor]] void build_anchor_list_at_load() {
  anchor_mutex();
  anchors();
}

Anchor take_anchor_now() noexcept {
  // Bracket the counter read between two monotonic reads; keep the tightest of a few tries.
  Anchor best;
  uint64_t best_width = UINT64_MAX;
  for (int attempt = 0; attempt < 5; ++attempt) {
    uint64_t before = monotonic_ns();
    uint64_t ticks = cpu_counter::read();
    uint64_t after = monotonic_ns();
    if (after - before < best_width) {
      best_width = after - before;
      best = Anchor{ticks, before + (after - before) / 2};
    }
  }
  return best;
}

// The anchor is read under the lock, so the list is appended in tick order. Read before the
// lock, two threads' anchors could be appended in the other order: a converter made between the
// two appends would end at the later anchor, and once the earlier one was appended the ticks
// between the two would convert differently from the same ticks converted before — while a
// window's steps are converted at one freeze and its events at another, and they must agree.
// (~15 clock reads: no CUDA, CUPTI or loader call under it.)
void append_anchor_now() {
  std::lock_guard lock(anchor_mutex());
  anchors().push_back(take_anchor_now());
}

Source detect() noexcept {
  Source chosen = cpu_counter::kPresent && cpu_counter::constant_rate() ? Source::CpuCounter
                                                                        : Source::Monotonic;
  uint8_t expected = uint8_t(Source::Unknown);
  if (g_source.compare_exchange_strong(expected, uint8_t(chosen))) {
    if (chosen == Source::CpuCounter) append_anchor_now();
    g_clock_is_cpu_counter.store(chosen == Source::CpuCounter, std::memory_order_relaxed);
    return chosen;
  }
  return Source(expected);
}

}  // namespace

uint64_t monotonic_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

Source source() noexcept {
  auto current = Source(g_source.load(std::memory_order_relaxed));
  return current == Source::Unknown ? detect() : current;
}

TickConverter::TickConverter(std::vector<Anchor> anchors) : anchors_(std::move(anchors)) {
  if (identity()) return;
  const Anchor& a = anchors_[anchors_.size() - 2];
  const Anchor& b = anchors_.back();
  if (b.ticks > a.ticks && b.ns >= a.ns) last_ = {true, a.ticks, a.ns, b.ticks - a.ticks, b.ns - a.ns};
}

// The segment whose start is the last anchor at or before `ticks` (clamped to the first and
// last segments, which extrapolate).
size_t TickConverter::segment_of(uint64_t ticks) const noexcept {
  const size_t last = anchors_.size() - 2;
  if (ticks >= anchors_[last].ticks) return last;
  auto after = std::upper_bound(anchors_.begin(), anchors_.end(), ticks,
                                [](uint64_t t, const Anchor& a) { return t < a.ticks; });
  size_t index = after == anchors_.begin() ? 0 : size_t(after - anchors_.begin()) - 1;
  return std::min(index, last);
}

uint64_t TickConverter::to_ns_general(uint64_t ticks) const noexcept {
  if (identity()) return ticks;
  const size_t index = segment_of(ticks);
  const Anchor& a = anchors_[index];
  const Anchor& b = anchors_[index + 1];
  if (ticks >= a.ticks && b.ticks > a.ticks && b.ns >= a.ns) {  // the usual case, exactly
    uint64_t offset;
    if (multiply_divide(ticks - a.ticks, b.ns - a.ns, b.ticks - a.ticks, &offset) &&
        offset <= UINT64_MAX - a.ns) {
      return a.ns + offset;
    }
  }
  __int128 dt = __int128(ticks) - __int128(a.ticks);
  __int128 span_ns = __int128(b.ns) - __int128(a.ns);
  __int128 span_ticks = __int128(b.ticks) - __int128(a.ticks);
  if (span_ticks <= 0) return a.ns;
  __int128 ns = __int128(a.ns) + dt * span_ns / span_ticks;
  return ns < 0 ? 0 : uint64_t(ns);
}

// Never waits. A segment between two anchors taken close together has a noisy rate, but it
// only converts the ticks that lie inside it (every tick converted at a freeze was read
// before that freeze's anchor), so its error stays within the anchors' own brackets.
void add_anchor() noexcept {
  if (source() != Source::CpuCounter) return;
  append_anchor_now();
}

TickConverter converter() {
  if (source() != Source::CpuCounter) return TickConverter();
  std::lock_guard lock(anchor_mutex());
  // Appended in tick order (append_anchor_now); sorted still, as the search needs, in case the
  // counters of two CPUs differ by more than the time between two anchors.
  std::vector<Anchor> copy = anchors();
  auto by_ticks = [](const Anchor& a, const Anchor& b) { return a.ticks < b.ticks; };
  if (!std::is_sorted(copy.begin(), copy.end(), by_ticks)) std::sort(copy.begin(), copy.end(), by_ticks);
  return TickConverter(std::move(copy));
}

// CLOCK_REALTIME read between two CLOCK_MONOTONIC reads, the tightest bracket of a few tries: a
// preemption inside one try would put every Unix time of the window off by its length (tens of
// microseconds on a loaded host, and ranks of one job compared on Unix time would disagree).
int64_t unix_offset_ns() noexcept {
  auto to_ns = [](const timespec& ts) { return int64_t(ts.tv_sec) * 1'000'000'000 + int64_t(ts.tv_nsec); };
  int64_t best_offset = 0;
  int64_t best_width = INT64_MAX;
  for (int attempt = 0; attempt < 5; ++attempt) {
    timespec mono_before, real, mono_after;
    clock_gettime(CLOCK_MONOTONIC, &mono_before);
    clock_gettime(CLOCK_REALTIME, &real);
    clock_gettime(CLOCK_MONOTONIC, &mono_after);
    const int64_t width = to_ns(mono_after) - to_ns(mono_before);
    if (width < best_width) {
      best_width = width;
      best_offset = to_ns(real) - (to_ns(mono_before) + width / 2);
    }
  }
  return best_offset;
}

}  // namespace profagent::collector::clock

namespace profagent::collector {

std::atomic<uint8_t> g_clock_is_cpu_counter{0};  // constant-initialised: now() works before init

uint64_t now_slow() noexcept {
  return clock::source() == clock::Source::CpuCounter ? cpu_counter::read() : clock::monotonic_ns();
}

}  // namespace profagent::collector
