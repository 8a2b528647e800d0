#include "agent/stderr_writer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>

#include "exporters/printable_text.h"
#include "exporters/quiet_write.h"

namespace profagent::agent {
namespace {

struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  dev_t rdev = 0;
  mode_t type = 0;
};

// Written once by remember_stderr() (from the constructor, before any agent thread exists),
// read-only afterwards.
FileIdentity g_stderr;
std::atomic<bool> g_remembered{false};
bool g_have_stderr = false;
std::atomic<uint64_t> g_dropped{0};

bool identity_of_fd2(FileIdentity& out) noexcept {
  struct stat st {};
  if (fstat(STDERR_FILENO, &st) != 0) return false;
  out = {st.st_dev, st.st_ino, st.st_rdev, mode_t(st.st_mode & S_IFMT)};
  return true;
}

// Never SIGPIPE nor SIGXFSZ (stderr a pipe nobody reads, or a file past `ulimit -f`):
// exporters/quiet_write.h.
bool write_all(const std::string& line) noexcept {
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = exporters::write_without_signals(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

bool dropped() noexcept {
  g_dropped.fetch_add(1, std::memory_order_relaxed);
  return false;
}

}  // namespace

void remember_stderr() noexcept {
  if (g_remembered.exchange(true)) return;
  g_have_stderr = identity_of_fd2(g_stderr);
}

bool stderr_is_original() noexcept {
  FileIdentity now;
  if (!g_have_stderr || !identity_of_fd2(now)) return false;
  return now.device == g_stderr.device && now.inode == g_stderr.inode && now.rdev == g_stderr.rdev &&
         now.type == g_stderr.type;
}

bool write_agent_line(std::string_view message) noexcept {
  // A small window remains between this check and the write (another thread of the program
  // may close and reopen fd 2 in between); closing it would need a lock the program does
  // not take.
  if (!stderr_is_original()) return dropped();
  try {
    std::string line = "[profagent] ";
    line.reserve(line.size() + message.size() + 1);
    exporters::append_printable(line, message);  // one line, no control character
    line += '\n';
    return write_all(line) || dropped();
  } catch (...) {
    return dropped();
  }
}

uint64_t dropped_agent_lines() noexcept { return g_dropped.load(std::memory_order_relaxed); }

void count_dropped_agent_line() noexcept { dropped(); }

}  // namespace profagent::agent
