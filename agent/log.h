// What only the agent adds to the one logger (collector/log.h, which every room logs through):
// the sink that writes the lines (spdlog to stderr, every line prefixed "[profagent]"), the
// level from PROFAGENT_LOG_LEVEL (default warn), configuration warnings held until the process
// uses the agent, and the product's own lines. Nothing is printed when there is nothing to say;
// messages that can repeat go through a CappedSite (collector/log.h).
#pragma once

#include <string>
#include <string_view>

#include "collector/log.h"

namespace profagent::agent {

// The agent's names for the one logger's, so agent code says log(LogLevel::Warn, ...).
using collector::log;
using collector::log_format;
using collector::LogLevel;

// Creates the (deliberately leaked) spdlog logger and makes it the one logger's sink, at
// `level`. Before this, lines go to the collector's default sink (warnings and errors only).
void start_logging(LogLevel level) noexcept;

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
