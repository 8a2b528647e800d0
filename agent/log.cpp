#include "agent/log.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <spdlog/details/null_mutex.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/base_sink.h>

#include "agent/lifecycle.h"
#include "agent/stderr_writer.h"

namespace profagent::agent {
namespace {

// spdlog's lines go through the same writer as print_line (agent/stderr_writer.h): prefix,
// escaping, the fd 2 identity check and the SIGPIPE guard live in one place. The message
// alone is used (no formatter), so the sink needs no lock of its own.
class AgentLineSink final : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& message) override {
    write_agent_line(std::string_view(message.payload.data(), message.payload.size()));
  }
  void flush_() override {}
};

// Leaked on purpose: the exit path logs after other statics are destroyed.
std::atomic<spdlog::logger*> g_logger{nullptr};

spdlog::level::level_enum to_spdlog(LogLevel level) {
  return static_cast<spdlog::level::level_enum>(level);  // same order by construction
}

// Once the process's last window was written, its closing line ends what the agent says:
// the agent's threads may still log details (the device poller's CUPTI probe, for one) while
// the process goes down, and a debug or info line after the closing one would stand where
// users and tools look for the closing line. Warnings and errors still come.
bool after_closing_line(LogLevel level) noexcept { return level <= LogLevel::Info && flush_finished(); }

// Without spdlog (no memory for its logger): the same lines, written directly.
void direct_sink(LogLevel level, std::string_view message) noexcept {
  if (!after_closing_line(level)) write_agent_line(message);
}

// The one logger's sink once the agent runs. The logger's own failures cannot be logged: the
// line is counted as dropped instead (the trace's profagent_drops.log_lines, said once at the
// end by note_agent_drops).
void spdlog_sink(LogLevel level, std::string_view message) noexcept {
  if (after_closing_line(level)) return;
  try {
    g_logger.load(std::memory_order_acquire)->log(to_spdlog(level), "{}", message);
  } catch (...) {
    count_dropped_agent_line();
  }
}

}  // namespace

void start_logging(LogLevel level) noexcept {
  collector::set_log_level(level);
  remember_stderr();  // at start-up: the stderr the process began with
  try {
    if (g_logger.load(std::memory_order_acquire) == nullptr) {
      // Not registered in spdlog's registry: that registry is a static destroyed at exit.
      auto* logger = new spdlog::logger("profagent", std::make_shared<AgentLineSink>());
      spdlog::logger* expected = nullptr;
      if (!g_logger.compare_exchange_strong(expected, logger)) delete logger;
    }
    g_logger.load(std::memory_order_acquire)->set_level(to_spdlog(level));
    collector::set_log_sink(spdlog_sink);
  } catch (...) {
    collector::set_log_sink(direct_sink);
  }
}

namespace {

struct HeldWarnings {
  std::mutex mutex;  // leaf; never held while logging
  std::vector<std::string> lines;
  std::atomic<bool> said{false};
};
HeldWarnings* g_held = new HeldWarnings;  // leaked: said on exit paths too

}  // namespace

void hold_warning(std::string message) noexcept {
  if (g_held->said.load(std::memory_order_acquire)) {  // the process uses the agent already
    log(LogLevel::Warn, message);
    return;
  }
  try {
    std::lock_guard lock(g_held->mutex);
    g_held->lines.push_back(std::move(message));
  } catch (...) {
    count_dropped_agent_line();  // no memory to keep it
  }
}

void say_held_warnings() noexcept {
  if (g_held->said.load(std::memory_order_acquire) || g_held->said.exchange(true)) return;
  std::vector<std::string> lines;
  {
    std::lock_guard lock(g_held->mutex);
    lines.swap(g_held->lines);
  }
  for (const std::string& line : lines) log(LogLevel::Warn, line);
}

void print_line(std::string_view message) noexcept {
  if (collector::log_level() == LogLevel::Off) return;
  write_agent_line(message);
}

}  // namespace profagent::agent
