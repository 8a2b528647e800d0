// What `profagent trigger` and an agent running on demand say to each other over the agent's
// Unix socket: one request line, one answer line, then the connection is closed.
//
//   status                              -> ok step=<in progress> busy=<0|1>[ first=<a> last=<b>]
//                                          [ timed=1] (busy with a window of a duration)
//   record first=<S> steps=<N> dir=<D>  -> ok first=<S> last=<S+N-1> dir=<where files go>
//                                          (first=0: the step after the one in progress;
//                                          dir= empty: the agent's PROFAGENT_OUTPUT_DIR)
//   record ms=<T> dir=<D>               -> ok ms=<T> dir=<where files go>  (from now, T ms)
//   cancel first=<S>                    -> ok step=<in progress> busy=0  (the steps armed from S
//                                          taken back before S began: `--all` found another
//                                          process past S, and asks again further ahead)
//   anything refused                    -> error <one line>
// The socket is <user runtime dir>/<pid>.sock (agent/user_runtime_dir.h), one per process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace profagent::agent::trigger {

inline constexpr const char* kSocketSuffix = ".sock";
inline constexpr size_t kMaxLine = 4096;  // a request or answer longer than this is refused

struct Request {
  bool status = false;     // "status"; else "record" (or "cancel")
  bool cancel = false;     // "cancel": the trigger armed from `first` is taken back
  uint64_t first = 0;      // record: the first step (0: the next one)
  uint64_t steps = 0;      // record: how many
  uint64_t duration_ms = 0;  // record: T ms from now instead of steps (when > 0)
  std::string output_dir;  // record: "" for the agent's own
};

struct Answer {
  bool ok = false;
  std::string error;       // when !ok
  uint64_t step = 0;       // status
  bool busy = false;       // status
  bool timed = false;      // status when busy: with a window of a duration
  uint64_t first = 0;      // status when busy; record
  uint64_t last = 0;
  uint64_t duration_ms = 0;  // record of a duration
  std::string output_dir;  // record
};

std::string format(const Request& request);  // one line, with its '\n'
std::optional<Request> parse_request(const std::string& line);
std::string format(const Answer& answer);
std::optional<Answer> parse_answer(const std::string& line);

// "<dir>/<pid>.sock"
std::string socket_path(const std::string& dir, long pid);

}  // namespace profagent::agent::trigger
