#include "collector/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <exception>

#include "collector/api.h"

namespace profagent::collector {
namespace {

// write(2), not stdio: the sink may run at exit after stdio's buffers are gone, and from a
// forked child.
void default_sink(LogLevel level, const char* message) noexcept {
  if (level < LogLevel::Warn) return;
  char line[1100];
  int n = std::snprintf(line, sizeof line, "[profagent] %s\n", message);
  if (n <= 0) return;
  size_t length = std::min(size_t(n), sizeof line - 1);
  ssize_t ignored = ::write(STDERR_FILENO, line, length);
  (void)ignored;
}

std::atomic<LogSink> g_sink{&default_sink};

}  // namespace

void set_log_sink(LogSink sink) noexcept {
  g_sink.store(sink ? sink : &default_sink, std::memory_order_release);
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
  log(LogLevel::Warn, "%s (%s; said once)", site.consequence, current_exception_text());
}

void note_lost(LostSite& site) noexcept {
  if (site.said.exchange(true, std::memory_order_relaxed)) return;
  log(LogLevel::Warn, "%s (said once)", site.what);
}

void log(LogLevel level, const char* format, ...) noexcept {
  char message[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  g_sink.load(std::memory_order_acquire)(level, message);
}

}  // namespace profagent::collector
