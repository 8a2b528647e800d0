#include "collector/log.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <exception>

#include "collector/api.h"

namespace profagent::collector {
namespace {

constexpr size_t kMaxMessage = 1024;

// write(2), not stdio: the sink may run at exit after stdio's buffers are gone, and from a
// forked child.
void default_sink(LogLevel, std::string_view message) noexcept {
  char line[kMaxMessage + 32];
  const int n = std::snprintf(line, sizeof line, "[profagent] %.*s\n", int(message.size()), message.data());
  if (n <= 0) return;
  const size_t length = std::min(size_t(n), sizeof line - 1);
  ssize_t ignored = ::write(STDERR_FILENO, line, length);
  (void)ignored;
}

std::atomic<LogSink> g_sink{&default_sink};
std::atomic<uint8_t> g_level{uint8_t(LogLevel::Warn)};

}  // namespace

void set_log_sink(LogSink sink) noexcept {
  g_sink.store(sink ? sink : &default_sink, std::memory_order_release);
}

void set_log_level(LogLevel level) noexcept { g_level.store(uint8_t(level), std::memory_order_relaxed); }

LogLevel log_level() noexcept { return LogLevel(g_level.load(std::memory_order_relaxed)); }

bool log_enabled(LogLevel level) noexcept {
  return level != LogLevel::Off && uint8_t(level) >= g_level.load(std::memory_order_relaxed);
}

void log(LogLevel level, std::string_view message) noexcept {
  if (log_enabled(level)) g_sink.load(std::memory_order_acquire)(level, message);
}

void log_format(LogLevel level, const char* format, ...) noexcept {
  if (!log_enabled(level)) return;
  char message[kMaxMessage];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  if (n < 0) return;
  log(level, std::string_view(message, std::min(size_t(n), sizeof message - 1)));
}

void log_capped(CappedSite& site, LogLevel level, std::string_view message) noexcept {
  const uint32_t seen = site.count.fetch_add(1, std::memory_order_relaxed);
  if (seen < site.cap) {
    log(level, message);
  } else if (seen == site.cap) {
    log_format(level, "%.*s (further messages of this kind suppressed)", int(message.size()), message.data());
  }
}

namespace {

// The current exception's what(); rethrowing an exception in flight allocates nothing.
const char* current_exception_text() noexcept {
  try {
    throw;
  } catch (const std::exception& error) {
    return error.what();
  } catch (...) {
    return "an exception that is not a std::exception";  // the text names the case: nothing to add
  }
}

}  // namespace

void note_swallowed(SwallowedSite& site) noexcept {
  if (site.said.exchange(true, std::memory_order_relaxed)) return;
  log_format(LogLevel::Warn, "%s (%s; said once)", site.consequence, current_exception_text());
}

void note_lost(LostSite& site) noexcept {
  if (site.said.exchange(true, std::memory_order_relaxed)) return;
  log_format(LogLevel::Warn, "%s (said once)", site.what);
}

}  // namespace profagent::collector
