#include "collector/cpu_counter.h"

#include <cstdio>
#include <cstring>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace profagent::collector::cpu_counter {
namespace {

#if defined(__x86_64__)
bool cpuid_invariant_tsc() noexcept {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) || eax < 0x80000007u) return false;
  if (!__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx)) return false;
  return (edx & (1u << 8)) != 0;
}

// Hypervisors often hide leaf 0x80000007 but the kernel still reports what it verified.
bool cpuinfo_invariant_tsc() noexcept {
  FILE* file = std::fopen("/proc/cpuinfo", "re");
  if (!file) return false;
  char line[4096];
  bool found = false;
  while (std::fgets(line, sizeof line, file)) {
    if (std::strncmp(line, "flags", 5) != 0) continue;
    found = std::strstr(line, " constant_tsc") && std::strstr(line, " nonstop_tsc");
    break;
  }
  std::fclose(file);
  return found;
}
#endif

}  // namespace

#if defined(__x86_64__)
// The TSC counts at one rate through frequency changes and deep C-states only where it is
// invariant; older CPUs' TSC follows the core clock.
bool constant_rate() noexcept { return cpuid_invariant_tsc() || cpuinfo_invariant_tsc(); }
uint64_t stated_hz() noexcept { return 0; }
#elif defined(__aarch64__)
// The architecture makes the system counter one constant-rate, always-on count shared by all
// cores. What can be missing is the firmware's setting of CNTFRQ_EL0 (a few boards give the
// rate only in their device tree): a rate of 0 is a badly set up timer, and the clock then
// keeps to CLOCK_MONOTONIC.
bool constant_rate() noexcept { return stated_hz() != 0; }
uint64_t stated_hz() noexcept {
  uint64_t hz;
  asm volatile("mrs %0, cntfrq_el0" : "=r"(hz));
  return hz;
}
#else
bool constant_rate() noexcept { return false; }
uint64_t stated_hz() noexcept { return 0; }
#endif

}  // namespace profagent::collector::cpu_counter
