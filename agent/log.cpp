#include "agent/log.h"

#include <unistd.h>

#include <memory>
#include <string>

#include <spdlog/logger.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace profagent::agent {
namespace {

// Leaked on purpose (pitfalls §6): the exit path logs after other statics are destroyed.
std::atomic<spdlog::logger*> g_logger{nullptr};
std::atomic<uint8_t> g_level{uint8_t(LogLevel::Warn)};

spdlog::level::level_enum to_spdlog(LogLevel level) {
  return static_cast<spdlog::level::level_enum>(level);  // same order by construction
}

}  // namespace

void start_logging(LogLevel level) noexcept {
  try {
    g_level.store(uint8_t(level), std::memory_order_relaxed);
    if (g_logger.load(std::memory_order_acquire) != nullptr) return;
    // Not registered in spdlog's registry: that registry is a static destroyed at exit.
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto* logger = new spdlog::logger("profagent", std::move(sink));
    logger->set_pattern("[profagent] %v");
    logger->set_level(to_spdlog(level));
    logger->flush_on(spdlog::level::trace);  // stderr is the application's: no buffering
    spdlog::logger* expected = nullptr;
    if (!g_logger.compare_exchange_strong(expected, logger)) delete logger;
  } catch (...) {
    // No logger: the agent stays silent, which is the safe failure.
  }
}

bool log_enabled(LogLevel level) noexcept {
  return level != LogLevel::Off && uint8_t(level) >= g_level.load(std::memory_order_relaxed) &&
         g_logger.load(std::memory_order_acquire) != nullptr;
}

void log(LogLevel level, std::string_view message) noexcept {
  if (!log_enabled(level)) return;
  try {
    g_logger.load(std::memory_order_acquire)->log(to_spdlog(level), "{}", message);
  } catch (...) {
  }
}

void log_capped(CappedSite& site, LogLevel level, std::string_view message) noexcept {
  const uint32_t seen = site.count.fetch_add(1, std::memory_order_relaxed);
  if (seen < site.cap) {
    log(level, message);
  } else if (seen == site.cap) {
    try {
      log(level, std::string(message) + " (further messages of this kind suppressed)");
    } catch (...) {
    }
  }
}

void print_line(std::string_view message) noexcept {
  if (g_level.load(std::memory_order_relaxed) == uint8_t(LogLevel::Off)) return;
  try {
    const std::string line = "[profagent] " + std::string(message) + "\n";
    size_t done = 0;
    while (done < line.size()) {
      const ssize_t n = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
      if (n <= 0) return;
      done += size_t(n);
    }
  } catch (...) {
  }
}

}  // namespace profagent::agent
