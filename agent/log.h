// The agent's logger: spdlog to stderr, every line prefixed "[profagent]", default level
// warn (PROFAGENT_LOG_LEVEL). Nothing is printed when there is nothing to say; errors that
// can repeat (a failing symbol, a full buffer) go through a CappedSite so a hot loop cannot
// flood the application's stderr.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "agent/config.h"

namespace profagent::agent {

// Creates the (deliberately leaked) logger. Messages logged before this are dropped.
void start_logging(LogLevel level) noexcept;

bool log_enabled(LogLevel level) noexcept;
void log(LogLevel level, std::string_view message) noexcept;

// One call site of a message that may repeat: the first `cap` occurrences are logged, then
// one "further messages suppressed" line, then nothing.
struct CappedSite {
  uint32_t cap = 5;
  std::atomic<uint32_t> count{0};
};
void log_capped(CappedSite& site, LogLevel level, std::string_view message) noexcept;

// Warnings about the configuration (a bad PROFAGENT_* value, a bad step marker) are held until
// the process uses the agent: its first CUDA call, a call of the C API, or output at exit. A
// process that never does (/bin/true, each stage of a shell pipeline that inherited the
// variables) says nothing; the one that does says each warning once, then and there. A forked
// child that uses the agent says them only if its parent had not. A warning held after they
// were said is said at once.
void hold_warning(std::string message) noexcept;
void say_held_warnings() noexcept;  // the first call logs them; later calls cost one load

// Writes one line to stderr with the "[profagent] " prefix (control characters escaped; only
// while fd 2 is still the process's stderr: agent/stderr_writer.h), whatever the level unless
// logging is off. For the product's own output (the "wrote ..." line).
void print_line(std::string_view message) noexcept;

}  // namespace profagent::agent
