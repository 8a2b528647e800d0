#include "exporters/quiet_write.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

namespace profagent::exporters {
namespace {

struct RaisedBy {
  int signal_number;
  int error;  // the write's errno when the kernel also sent the signal
};
constexpr RaisedBy kRaised[] = {{SIGPIPE, EPIPE}, {SIGXFSZ, EFBIG}};

// Takes back one pending `signal_number` (blocked in this thread, so it waits there).
void take_back(int signal_number) noexcept {
  sigset_t only{};
  sigemptyset(&only);
  sigaddset(&only, signal_number);
  const timespec zero{0, 0};
  while (sigtimedwait(&only, nullptr, &zero) < 0 && errno == EINTR) {
  }
}

}  // namespace

ssize_t write_without_signals(int fd, const void* data, std::size_t size) noexcept {
  sigset_t raised{}, before{}, pending{};
  sigemptyset(&raised);
  for (const RaisedBy& r : kRaised) sigaddset(&raised, r.signal_number);
  pthread_sigmask(SIG_BLOCK, &raised, &before);
  sigpending(&pending);
  const ssize_t written = ::write(fd, data, size);
  const int saved_errno = errno;
  if (written < 0) {
    for (const RaisedBy& r : kRaised) {
      if (saved_errno == r.error && sigismember(&pending, r.signal_number) != 1) take_back(r.signal_number);
    }
  }
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  errno = saved_errno;
  return written;
}

}  // namespace profagent::exporters
