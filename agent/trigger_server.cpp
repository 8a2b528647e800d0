#include "agent/trigger_server.h"

#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "agent/lifecycle.h"
#include "agent/log.h"
#include "agent/threads.h"
#include "agent/trigger_protocol.h"
#include "agent/user_runtime_dir.h"
#include "agent/windows.h"

namespace profagent::agent {
namespace {

// Plain words and a fixed buffer: read by stop_trigger_server at exit and in forked children,
// where no lock of another thread may be taken.
std::atomic<int> g_listen_fd{-1};
std::atomic<bool> g_bound{false};     // g_path names our socket in the file system
std::atomic<bool> g_stopped{false};   // the exit flush ran: the socket is (to be) removed
pid_t g_owner = 0;                    // the process that bound it
char g_path[sizeof(sockaddr_un::sun_path)] = {};

void close_in_child() {
  const int fd = g_listen_fd.exchange(-1);
  if (fd >= 0) close(fd);
  g_bound.store(false);  // the parent's socket: never removed by the child
}

// Creates, binds and listens; -1 with one warning when it cannot.
int open_socket() {
  std::string why;
  const std::string dir = user_runtime_dir(why);
  const std::string path = dir.empty() ? std::string() : trigger::socket_path(dir, getpid());
  if (!dir.empty() && path.size() >= sizeof g_path) why = "the path " + path + " is too long for a socket";
  if (!why.empty()) {
    log(LogLevel::Warn, "PROFAGENT_ON_DEMAND: no trigger socket, so this process cannot be triggered: " + why);
    return -1;
  }
  std::memcpy(g_path, path.c_str(), path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, g_path, path.size() + 1);
  unlink(g_path);  // a socket left by an earlier process with our pid (it was killed)
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || listen(fd, 8) != 0) {
    log(LogLevel::Warn, "PROFAGENT_ON_DEMAND: cannot listen on " + path + ": " + std::strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
  }
  g_owner = getpid();
  g_bound.store(true);
  g_listen_fd.store(fd);
  log(LogLevel::Info, "on demand: `profagent trigger " + std::to_string(getpid()) + "` records steps (" + path + ")");
  return fd;
}

// One line from the peer (up to kMaxLine), "" when none came within a second.
std::string read_line(int fd) {
  timeval timeout{.tv_sec = 1, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  std::string line;
  char buffer[512];
  while (line.size() < trigger::kMaxLine && line.find('\n') == std::string::npos) {
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    line.append(buffer, size_t(n));
  }
  return line;
}

// When the timed window being recorded ends (CLOCK_MONOTONIC ns; 0: none). Only the trigger
// thread reads and writes it.
uint64_t g_timed_end_ns = 0;

uint64_t monotonic_now_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return uint64_t(now.tv_sec) * 1'000'000'000ull + uint64_t(now.tv_nsec);
}

trigger::Answer record_timed(const trigger::Request& request, const std::string& dir) {
  trigger::Answer answer;
  answer.ok = arm_timed_trigger(dir, answer.error);
  if (!answer.ok) return answer;
  g_timed_end_ns = monotonic_now_ns() + request.duration_ms * 1'000'000ull;
  answer.duration_ms = request.duration_ms, answer.output_dir = dir;
  print_line("triggered: recording " + std::to_string(request.duration_ms) + " ms into " + dir);
  return answer;
}

trigger::Answer record(const trigger::Request& request) {
  trigger::Answer answer;
  const std::string dir = request.output_dir.empty() ? config().output_dir : request.output_dir;
  if (request.duration_ms > 0) return record_timed(request, dir);
  DemandState armed;
  answer.ok = arm_trigger(request.first, request.steps, dir, armed, answer.error);
  if (!answer.ok) return answer;
  answer.first = armed.first, answer.last = armed.last, answer.output_dir = dir;
  print_line("triggered: recording steps " + std::to_string(armed.first) + "-" + std::to_string(armed.last) +
             " into " + dir);
  return answer;
}

trigger::Answer cancel(const trigger::Request& request) {
  trigger::Answer answer;
  DemandState after;
  answer.ok = cancel_trigger(request.first, after, answer.error);
  if (!answer.ok) return answer;
  answer.step = after.step;
  print_line("trigger from step " + std::to_string(request.first) +
             " taken back: another process of the job was past it when asked (the trigger asks again)");
  return answer;
}

trigger::Answer answer_to(const std::string& line) {
  const std::optional<trigger::Request> request = trigger::parse_request(line);
  trigger::Answer answer;
  if (!request) return answer.error = "not a trigger request", answer;
  if (request->cancel) return cancel(*request);
  if (!request->status) return record(*request);
  const DemandState state = demand_state();
  answer.ok = true, answer.step = state.step, answer.busy = state.busy, answer.timed = state.timed;
  answer.first = state.first, answer.last = state.last;
  return answer;
}

void serve_connection(int fd) {
  ucred peer{};
  socklen_t size = sizeof peer;
  trigger::Answer refused;
  std::string reply;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 || peer.uid != geteuid()) {
    refused.error = "process " + std::to_string(getpid()) + " belongs to another user: only its owner may trigger it";
    reply = trigger::format(refused);
  } else {
    reply = trigger::format(answer_to(read_line(fd)));
  }
  send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
  close(fd);
}

// How long to wait for the next connection: a tick, or less when a timed window ends sooner.
int poll_timeout_ms() {
  if (g_timed_end_ns == 0) return int(kAgentTickMs);
  const uint64_t now = monotonic_now_ns();
  if (now >= g_timed_end_ns) return 0;
  return int(std::min<uint64_t>((g_timed_end_ns - now + 999'999) / 1'000'000, uint64_t(kAgentTickMs)));
}

// A timed window whose time is up is cut and queued for writing (at exit, the exit flush
// writes what it holds instead).
void end_timed_window_if_due() {
  if (g_timed_end_ns == 0 || monotonic_now_ns() < g_timed_end_ns) return;
  g_timed_end_ns = 0;
  close_timed_trigger();
}

void serve(void*) noexcept {
  const int fd = open_socket();
  if (fd < 0) return;
  while (keep_running() && !g_stopped.load()) {
    pollfd waiting{.fd = fd, .events = POLLIN, .revents = 0};
    const int ready = poll(&waiting, 1, poll_timeout_ms());
    end_timed_window_if_due();
    if (ready <= 0) continue;
    const int connection = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection >= 0) serve_connection(connection);
  }
  stop_trigger_server();
  if (g_listen_fd.exchange(-1) == fd) close(fd);
}

}  // namespace

void start_trigger_server() noexcept {
  if (!config().on_demand) return;
  static std::atomic<bool> started{false};
  if (started.exchange(true)) return;
  pthread_atfork(nullptr, nullptr, close_in_child);
  if (!start_agent_thread("profagent-trig", serve, nullptr)) {
    log(LogLevel::Warn, "PROFAGENT_ON_DEMAND: could not start the trigger thread; this process cannot be triggered");
  }
}

void stop_trigger_server() noexcept {
  g_stopped.store(true);
  if (g_owner == getpid() && g_bound.exchange(false)) unlink(g_path);
}

}  // namespace profagent::agent
