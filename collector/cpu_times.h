// CPU times at a window boundary (Trace::cpu_start / cpu_end): what the Device Summary's
// CPU(Process) and CPU(System) rows are computed from.
//
// Process time is CLOCK_PROCESS_CPUTIME_ID (user + system of every thread, ns resolution):
// /proc/self/stat counts in USER_HZ ticks (10 ms), too coarse for a window of a few steps.
// System time is the first "cpu" line of /proc/stat (proc(5)): idle + iowait is idle, the
// other six of the first eight fields are busy, in USER_HZ ticks (sysconf(_SC_CLK_TCK)).
// Reading is one open/read/close into a stack buffer and two clock reads: no allocation, no
// lock, nothing a window boundary must wait for.
#pragma once

#include <cstdint>
#include <string_view>

#include "collector/trace.h"

namespace profagent::collector {

struct SystemTicks {
  uint64_t busy = 0;
  uint64_t idle = 0;
};

// Parses the "cpu" line at the start of /proc/stat's text; false when it is not there or has
// fewer than eight numbers.
bool parse_proc_stat_cpu_line(std::string_view text, SystemTicks& ticks) noexcept;

// Reads the times now; valid = false when /proc/stat or the process clock cannot be read.
CpuTimes read_cpu_times() noexcept;

// The same from given sources (tests): `proc_stat` is /proc/stat's text.
CpuTimes cpu_times_from(std::string_view proc_stat, uint64_t process_ns, uint64_t now_ns, long ticks_per_second,
                        uint32_t cpus) noexcept;

}  // namespace profagent::collector
