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

// A process's first window (and a forked child's) starts with only the cheap half of its times:
// the clock and the process's CPU time, read at once. The system's half (/proc/stat, whose
// kernel side grows with the number of CPUs, and the online CPU count, another file) is read
// once, at the process's first recorded event or CUDA call (read_deferred_system_times): a
// process that records nothing (a shell, a launcher, a child that execs) never reads it. The
// Device Summary's CPU(Process) and elapsed time therefore cover the whole first window, its
// CPU(System) (a share of the system's own busy and idle time) the part from the first
// recorded event on, which is the part that holds the window's work.
//
// Starts a deferred start: the cheap half now (valid = false until completed).
CpuTimes begin_deferred_start() noexcept;
// Reads the system half if a deferred start waits for it and no thread read it yet; cheap
// (one atomic load) otherwise. Called at every thread's first event buffer and the first CUDA call.
void read_deferred_system_times() noexcept;
// `start` completed with the system half read since begin_deferred_start(), and no longer
// waiting for it; valid = false when it was not read (nothing was recorded) or /proc/stat
// could not be read.
CpuTimes complete_deferred_start(const CpuTimes& start) noexcept;

// The same from given sources (tests): `proc_stat` is /proc/stat's text.
CpuTimes cpu_times_from(std::string_view proc_stat, uint64_t process_ns, uint64_t now_ns, long ticks_per_second,
                        uint32_t cpus) noexcept;

}  // namespace profagent::collector
