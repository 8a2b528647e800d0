// The one logger of libprofagent.so: every room logs through these functions, with this one
// level enum. It lives in the collector, the lowest room, so that hooks, collector and agent
// share it without an arrow pointing up. What a line becomes is the sink's business: the
// default sink writes "[profagent] <message>" to stderr (what unit tests and the agent before
// its start see); the agent installs its own at start (agent/log.h: spdlog, stderr's identity
// check, escaping, the count of lines that could not be written).
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

namespace profagent::collector {

// Same names and order as spdlog's levels, so the agent's sink maps them one to one.
// PROFAGENT_LOG_LEVEL names them (agent/config.cpp); the default is Warn.
enum class LogLevel : uint8_t { Trace, Debug, Info, Warn, Error, Critical, Off };

// Receives one complete message without prefix or newline, at or above the level. Must not
// throw; may be called from any thread, including CUPTI's.
using LogSink = void (*)(LogLevel level, std::string_view message) noexcept;

// nullptr restores the default sink.
void set_log_sink(LogSink sink) noexcept;

// The least level that is passed to the sink (Off: nothing is). Default Warn.
void set_log_level(LogLevel level) noexcept;
LogLevel log_level() noexcept;
bool log_enabled(LogLevel level) noexcept;

void log(LogLevel level, std::string_view message) noexcept;
// printf-style; the message is cut at 1 KiB.
void log_format(LogLevel level, const char* format, ...) noexcept __attribute__((format(printf, 2, 3)));

// One call site of a message that may repeat (once per window, once per drain): the first
// `cap` occurrences are logged, then one "further messages suppressed" line, then nothing, so
// a long run cannot flood the program's stderr.
struct CappedSite {
  uint32_t cap = 5;
  std::atomic<uint32_t> count{0};
};
void log_capped(CappedSite& site, LogLevel level, std::string_view message) noexcept;

}  // namespace profagent::collector
