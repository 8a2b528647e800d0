#include "collector/cpu_times.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>

#include "collector/clock.h"

namespace profagent::collector {
namespace {

// The first line of /proc/stat is "cpu" and ten numbers at most (~120 characters).
constexpr size_t kFirstLineBytes = 512;

bool next_number(std::string_view& text, uint64_t& value) noexcept {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end == text.data()) return false;
  text.remove_prefix(size_t(end - text.data()));
  return true;
}

// Reads up to size - 1 bytes of `path` into buffer; "" on failure.
std::string_view read_start(const char* path, char* buffer, size_t size) noexcept {
  int fd = -1;
  do fd = open(path, O_RDONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return {};
  ssize_t n = -1;
  do n = read(fd, buffer, size - 1);
  while (n < 0 && errno == EINTR);
  close(fd);
  return n > 0 ? std::string_view(buffer, size_t(n)) : std::string_view{};
}

bool process_cpu_ns(uint64_t& ns) noexcept {
  timespec t{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0) return false;
  ns = uint64_t(t.tv_sec) * 1'000'000'000 + uint64_t(t.tv_nsec);
  return true;
}

uint64_t ticks_to_ns(uint64_t ticks, long ticks_per_second) noexcept {
  const uint64_t hz = uint64_t(ticks_per_second);
  return ticks / hz * 1'000'000'000 + ticks % hz * 1'000'000'000 / hz;
}

// The deferred start's system half: wanted from begin_deferred_start() until one thread takes
// the read (or the start is completed); published by `g_system_read`.
std::atomic<bool> g_system_wanted{false};
std::atomic<bool> g_system_read{false};
CpuTimes g_system;  // written once by the thread that took the read, before g_system_read

}  // namespace

bool parse_proc_stat_cpu_line(std::string_view text, SystemTicks& ticks) noexcept {
  constexpr std::string_view kPrefix = "cpu ";
  if (text.substr(0, kPrefix.size()) != kPrefix) return false;
  text.remove_prefix(kPrefix.size());
  text = text.substr(0, text.find('\n'));
  // user nice system idle iowait irq softirq steal (guest time is inside user already)
  uint64_t field[8] = {};
  for (uint64_t& value : field) {
    if (!next_number(text, value)) return false;
  }
  ticks.idle = field[3] + field[4];
  ticks.busy = field[0] + field[1] + field[2] + field[5] + field[6] + field[7];
  return true;
}

CpuTimes cpu_times_from(std::string_view proc_stat, uint64_t process_ns, uint64_t now_ns, long ticks_per_second,
                        uint32_t cpus) noexcept {
  CpuTimes times;
  SystemTicks ticks;
  if (ticks_per_second <= 0 || !parse_proc_stat_cpu_line(proc_stat, ticks)) return times;
  times.valid = true;
  times.ns = now_ns;
  times.process_ns = process_ns;
  times.system_busy_ns = ticks_to_ns(ticks.busy, ticks_per_second);
  times.system_idle_ns = ticks_to_ns(ticks.idle, ticks_per_second);
  times.cpus = cpus;
  return times;
}

CpuTimes read_cpu_times() noexcept {
  char buffer[kFirstLineBytes];
  const std::string_view proc_stat = read_start("/proc/stat", buffer, sizeof(buffer));
  uint64_t process_ns = 0;
  if (!process_cpu_ns(process_ns)) return {};
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return cpu_times_from(proc_stat, process_ns, clock::monotonic_ns(), sysconf(_SC_CLK_TCK),
                        online > 0 ? uint32_t(online) : 0);
}

CpuTimes begin_deferred_start() noexcept {
  CpuTimes start;
  start.ns = clock::monotonic_ns();
  if (!process_cpu_ns(start.process_ns)) start.ns = 0;  // completed as not valid
  g_system_read.store(false, std::memory_order_relaxed);
  g_system_wanted.store(true, std::memory_order_release);
  return start;
}

void read_deferred_system_times() noexcept {
  if (__builtin_expect(!g_system_wanted.load(std::memory_order_relaxed), 1)) return;
  if (!g_system_wanted.exchange(false, std::memory_order_acq_rel)) return;  // another thread reads it
  g_system = read_cpu_times();
  g_system_read.store(true, std::memory_order_release);
}

CpuTimes complete_deferred_start(const CpuTimes& start) noexcept {
  g_system_wanted.store(false, std::memory_order_relaxed);  // read later, it would be no window's start
  CpuTimes completed = start;
  if (!g_system_read.load(std::memory_order_acquire) || start.ns == 0) return completed;
  completed.valid = g_system.valid;
  completed.system_busy_ns = g_system.system_busy_ns;
  completed.system_idle_ns = g_system.system_idle_ns;
  completed.cpus = g_system.cpus;
  return completed;
}

}  // namespace profagent::collector
