// The CPU's own constant-rate counter, the agent clock's fast source (collector/clock.h): the
// TSC on x86-64, the generic timer's virtual count CNTVCT_EL0 on aarch64 (Grace hosts). Its
// ticks are turned into nanoseconds by the clock's anchors on both, never by a nominal rate.
// Elsewhere there is none and the clock uses CLOCK_MONOTONIC.
#pragma once

#include <cstdint>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace profagent::collector::cpu_counter {

#if defined(__x86_64__)
inline constexpr bool kPresent = true;
inline constexpr const char* kName = "TSC";
// No fence before rdtsc: a timestamp may be read a few instructions early, nothing against
// the calls it brackets, and the hook's path stays one instruction.
__attribute__((always_inline)) inline uint64_t read() noexcept { return __rdtsc(); }
inline void relax() noexcept { _mm_pause(); }
#elif defined(__aarch64__)
inline constexpr bool kPresent = true;
inline constexpr const char* kName = "CNTVCT_EL0";
// The ISB keeps the read in program order, as Linux's own readers (the vDSO's clock_gettime)
// do: the architecture lets a counter read run early, out of order even with an earlier read
// of the counter, and a thread's timestamps must never go backwards (an end before its start).
__attribute__((always_inline)) inline uint64_t read() noexcept {
  uint64_t ticks;
  asm volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(ticks) : : "memory");
  return ticks;
}
inline void relax() noexcept { asm volatile("yield" ::: "memory"); }
#else
inline constexpr bool kPresent = false;
inline constexpr const char* kName = "none";
inline uint64_t read() noexcept { return 0; }
inline void relax() noexcept {}
#endif

// Whether the counter runs at a constant rate on every CPU of this machine, so that ticks
// from any thread convert on one scale. Decided once, at the clock's first use.
bool constant_rate() noexcept;

// The rate the platform states for the counter, in Hz: CNTFRQ_EL0 on aarch64 (the firmware
// sets it; 0 means it did not, and the counter is not used). 0 where no rate is stated (the
// x86 TSC's rate is measured by the anchors).
uint64_t stated_hz() noexcept;

}  // namespace profagent::collector::cpu_counter
