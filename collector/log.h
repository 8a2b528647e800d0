// The collector's logging seam. The collector must not depend on the agent's logger (spdlog
// lives in agent/), so it logs through one function pointer the agent installs at init. The
// default sink writes one line to stderr with the "[profagent]" prefix, which is what unit
// tests and the agent before init see.
#pragma once

#include <cstdint>

namespace profagent::collector {

enum class LogLevel : uint8_t { Debug, Info, Warn, Error };

// Receives one complete message without prefix or newline. Must not throw; may be called
// from any thread, including CUPTI's.
using LogSink = void (*)(LogLevel level, const char* message) noexcept;

// nullptr restores the default sink. The default sink prints Warn and Error only.
void set_log_sink(LogSink sink) noexcept;

// printf-style; the message is truncated at 1 KiB.
void log(LogLevel level, const char* format, ...) noexcept __attribute__((format(printf, 2, 3)));

}  // namespace profagent::collector
