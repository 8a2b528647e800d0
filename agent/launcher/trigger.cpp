#include "agent/launcher/trigger.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>

#include "agent/trigger_protocol.h"
#include "agent/user_runtime_dir.h"

namespace profagent::launcher {
namespace {

namespace trigger = agent::trigger;

void say(const std::string& line) { std::fprintf(stderr, "profagent: %s\n", line.c_str()); }

struct TriggerOptions {
  bool all = false;
  long pid = 0;
  uint64_t steps = 1;
  uint64_t duration_ms = 0;  // --duration-ms: a window of that long from now, not of steps
  std::string output_dir;  // absolute, or "" for each process's own
  bool help = false;
};

std::optional<uint64_t> whole_number(const std::string& text) {
  uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// A relative --output-dir is taken from where `profagent trigger` runs, not from the target's
// working directory.
std::string absolute(const std::string& dir) {
  if (dir.empty() || dir.front() == '/') return dir;
  char cwd[PATH_MAX];
  return getcwd(cwd, sizeof cwd) != nullptr ? std::string(cwd) + "/" + dir : dir;
}

std::optional<TriggerOptions> parse(const std::vector<std::string>& args, std::string& error) {
  TriggerOptions options;
  bool steps_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == "--help") return options.help = true, options;
    if (arg == "--all") {
      options.all = true;
      continue;
    }
    if (arg == "--steps" || arg == "--duration-ms" || arg == "--output-dir") {
      if (i + 1 >= args.size()) return error = arg + " needs a value", std::nullopt;
      const std::string& value = args[++i];
      if (arg == "--output-dir") {
        options.output_dir = absolute(value);
        continue;
      }
      const auto number = whole_number(value);
      if (!number || *number == 0 || *number > (uint64_t(1) << 40)) {
        return error = arg + " needs a whole number >= 1, got '" + value + "'", std::nullopt;
      }
      (arg == "--steps" ? options.steps : options.duration_ms) = *number;
      steps_given |= arg == "--steps";
      continue;
    }
    const auto pid = whole_number(arg);
    if (!pid || *pid == 0 || *pid > uint64_t(INT_MAX) || options.pid != 0) {
      return error = "unexpected argument '" + arg + "' (profagent trigger PID|--all [--steps N] [--output-dir D])",
             std::nullopt;
    }
    options.pid = long(*pid);
  }
  if (options.all == (options.pid != 0)) {
    return error = "name one process id or --all (profagent trigger --help)", std::nullopt;
  }
  if (steps_given && options.duration_ms != 0) return error = "give --steps or --duration-ms, not both", std::nullopt;
  return options;
}

// The owner of a running process, or -1 when there is none.
long process_owner(long pid) {
  struct stat st {};
  return stat(("/proc/" + std::to_string(pid)).c_str(), &st) == 0 ? long(st.st_uid) : -1;
}

// Why `pid` has no socket of ours.
std::string why_no_socket(long pid, const std::string& path) {
  const long owner = process_owner(pid);
  const std::string who = "process " + std::to_string(pid);
  if (owner < 0) return who + ": no such process";
  if (owner != long(geteuid())) {
    return who + " belongs to another user (uid " + std::to_string(owner) + "): only its owner can trigger it";
  }
  return who + " does not run the agent on demand (no socket " + path +
         "): start it with `profagent run --on-demand` or PROFAGENT_ON_DEMAND=1 (the socket appears at its first "
         "CUDA call)";
}

// One exchange with the agent of `pid`; nullopt with `why` set when there is no answer.
std::optional<trigger::Answer> ask(const std::string& path, long pid, const trigger::Request& request,
                                   std::string& why) {
  const std::string who = "process " + std::to_string(pid);
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return why = why_no_socket(pid, path), std::nullopt;
  if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
    return why = path + " is not a socket of this user: left alone", std::nullopt;
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    const int error = errno;
    if (fd >= 0) close(fd);
    if (error == ECONNREFUSED) {
      unlink(path.c_str());
      return why = who + ": removed its stale socket " + path + " (no agent listens: the process ended without "
                   "removing it)", std::nullopt;
    }
    return why = who + ": cannot connect to " + path + ": " + std::strerror(error), std::nullopt;
  }
  timeval timeout{.tv_sec = 5, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  const std::string line = trigger::format(request);
  std::string reply;
  if (send(fd, line.data(), line.size(), MSG_NOSIGNAL) == ssize_t(line.size())) {
    char buffer[512];
    ssize_t n;
    while (reply.size() < trigger::kMaxLine && (n = recv(fd, buffer, sizeof buffer, 0)) > 0) reply.append(buffer, size_t(n));
  }
  close(fd);
  const auto answer = trigger::parse_answer(reply);
  if (!answer) return why = who + ": no answer from its agent", std::nullopt;
  if (!answer->ok) return why = who + ": " + answer->error, std::nullopt;
  return answer;
}

struct Target {
  long pid;
  std::string path;
  trigger::Answer status;
};

// Every "<pid>.sock" in the directory.
std::vector<Target> all_sockets(const std::string& dir) {
  std::vector<Target> targets;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return targets;
  while (dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (!name.ends_with(trigger::kSocketSuffix)) continue;
    const auto pid = whole_number(name.substr(0, name.size() - std::strlen(trigger::kSocketSuffix)));
    if (pid && *pid > 0 && *pid <= uint64_t(INT_MAX)) targets.push_back({long(*pid), dir + "/" + name, {}});
  }
  closedir(d);
  std::sort(targets.begin(), targets.end(), [](const Target& a, const Target& b) { return a.pid < b.pid; });
  return targets;
}

// Asks every target where it is; keeps those that answered. False when one is recording
// already (then nothing is asked of any: all or none).
bool take_status(std::vector<Target>& targets) {
  std::vector<Target> answered;
  bool busy = false;
  for (Target& target : targets) {
    std::string why;
    trigger::Request status;
    status.status = true;
    const auto answer = ask(target.path, target.pid, status, why);
    if (!answer) {
      say(why);
      continue;
    }
    if (answer->busy) {
      const std::string what = answer->timed ? "a timed window is being recorded"
                                             : "steps " + std::to_string(answer->first) + "-" +
                                                   std::to_string(answer->last) + " are being recorded";
      say("process " + std::to_string(target.pid) + ": already triggered: " + what + "; nothing was changed");
      busy = true;
    }
    target.status = *answer;
    answered.push_back(target);
  }
  targets = std::move(answered);
  return !busy;
}

void print_armed(long pid, const trigger::Answer& answer) {
  if (answer.duration_ms > 0) {
    std::printf("process %ld: recording %llu ms; files in %s (names with .%ld.)\n", pid,
                (unsigned long long)answer.duration_ms, answer.output_dir.c_str(), pid);
    return;
  }
  std::printf("process %ld: recording steps %llu-%llu; files in %s (names with .%ld. and .steps%llu-%llu.)\n", pid,
              (unsigned long long)answer.first, (unsigned long long)answer.last, answer.output_dir.c_str(), pid,
              (unsigned long long)answer.first, (unsigned long long)answer.last);
}

// The answer of each target asked to record.
struct ArmRound {
  std::vector<std::pair<long, trigger::Answer>> armed;
  std::vector<std::string> refusals;  // said once the round is settled
  bool late = false;  // one had begun `first` when asked; the others were taken back
  bool stuck = false;  // one could not be taken back (its window began): said
};

// Whether the target that refused has begun step `first` (it was asked too late).
bool begun(const Target& target, uint64_t first) {
  std::string why;
  trigger::Request status;
  status.status = true;
  const auto answer = ask(target.path, target.pid, status, why);
  return answer && answer->step >= first;
}

// Takes back the triggers of `round` (all or none); false when one could not be.
bool take_back(ArmRound& round, uint64_t first, const std::vector<Target>& targets) {
  bool all = true;
  for (const auto& [pid, answer] : round.armed) {
    const auto target = std::find_if(targets.begin(), targets.end(), [&](const Target& t) { return t.pid == pid; });
    std::string why;
    trigger::Request cancel;
    cancel.cancel = true, cancel.first = first;
    if (!ask(target->path, pid, cancel, why)) {
      say(why + " (it records steps " + std::to_string(answer.first) + "-" + std::to_string(answer.last) + " alone)");
      all = false;
    }
  }
  return all;
}

// Asks every target to record from `first` (or for the duration). A target that had begun
// `first` when asked makes the round late: those armed are taken back, as if none had been.
ArmRound arm_round(const std::vector<Target>& targets, const TriggerOptions& options, uint64_t first) {
  ArmRound round;
  for (const Target& target : targets) {
    std::string why;
    trigger::Request request;
    request.first = first, request.steps = options.steps, request.duration_ms = options.duration_ms;
    request.output_dir = options.output_dir;
    if (const auto answer = ask(target.path, target.pid, request, why)) {
      round.armed.emplace_back(target.pid, *answer);
    } else if (options.duration_ms == 0 && targets.size() > 1 && begun(target, first)) {
      round.late = true;
      break;
    } else {
      round.refusals.push_back(why);
    }
  }
  if (round.late) round.stuck = !take_back(round, first, targets);
  return round;
}

// The furthest step in progress among the targets.
uint64_t furthest_step(const std::vector<Target>& targets) {
  uint64_t furthest = 0;
  for (const Target& target : targets) furthest = std::max(furthest, target.status.step);
  return furthest;
}

// Asks the targets where they are again; the most steps one of them made since `before` (0 for
// a job whose steps are longer than a round of questions). False as take_status.
bool steps_during_round(std::vector<Target>& targets, uint64_t& most) {
  const std::vector<Target> before = targets;
  if (!take_status(targets)) return false;
  most = 0;
  for (const Target& target : targets) {
    for (const Target& earlier : before) {
      if (earlier.pid == target.pid && target.status.step > earlier.status.step) {
        most = std::max(most, target.status.step - earlier.status.step);
      }
    }
  }
  return true;
}

int run(const TriggerOptions& options) {
  const std::string dir = agent::user_runtime_dir_path();
  std::vector<Target> targets =
      options.all ? all_sockets(dir) : std::vector<Target>{{options.pid, trigger::socket_path(dir, options.pid), {}}};
  if (targets.empty()) {
    say("no process of this user runs the agent on demand on this host (no socket in " + dir + ")");
    return 1;
  }
  const size_t asked = targets.size();
  if (!take_status(targets)) {
    if (asked > 1) say("nothing was triggered (all or none): wait until the window being recorded is written");
    return 1;
  }
  if (targets.empty()) return 1;
  // All ranks of a job start at the same step: two past the furthest step in progress (below),
  // ahead by kLeadRounds times the steps a process makes while all are asked once (0 unless its
  // steps are shorter than that): the ones asked first must not begin it before the last is
  // asked, nor before they are taken back if that one had begun it anyway (two rounds), with
  // room for a loaded host's slower rounds. Then all are asked again, ahead by as many times
  // the steps made during the late round.
  uint64_t progress = 0;
  if (options.duration_ms == 0 && targets.size() > 1 && !steps_during_round(targets, progress)) {
    say("nothing was triggered (all or none): wait until the window being recorded is written");
    return 1;
  }
  constexpr int kRounds = 8;
  constexpr uint64_t kLeadRounds = 4;
  // Several processes: at least one step ahead too, so that a boundary falling between reading
  // where they are and arming them makes none late, and an armed one can only begin the step
  // before it is taken back if a whole step passes meanwhile (it then records alone).
  uint64_t lead = std::max<uint64_t>(kLeadRounds * progress, targets.size() > 1 ? 1 : 0);
  ArmRound round;
  for (int attempt = 1; !targets.empty(); ++attempt) {
    const uint64_t furthest = furthest_step(targets);
    const uint64_t first = furthest + 1 + lead;
    round = arm_round(targets, options, first);
    if (!round.late) break;
    if (round.stuck) return 1;
    if (attempt == kRounds || !take_status(targets) || targets.empty()) {
      say("nothing was triggered (all or none): the processes step faster than they can be asked (" +
          std::to_string(kRounds) + " tries, the last from step " + std::to_string(first) + ")");
      return 1;
    }
    const uint64_t now = furthest_step(targets);
    lead = std::max<uint64_t>(lead + 1, kLeadRounds * (now > furthest ? now - furthest : 0));
    say("step " + std::to_string(first) + " had begun in a process when it was asked: tried again further ahead");
  }
  for (const std::string& why : round.refusals) say(why);
  for (const auto& [pid, answer] : round.armed) print_armed(pid, answer);
  const int failures = int(asked - targets.size() + round.refusals.size());
  return failures == 0 ? 0 : 1;
}

}  // namespace

int trigger_main(const std::vector<std::string>& args) {
  std::string error;
  const auto options = parse(args, error);
  if (!options) {
    say(error);
    return 2;
  }
  if (options->help) return std::fputs(kTriggerHelp, stdout), 0;
  return run(*options);
}

const char* const kTriggerHelp = R"(usage: profagent trigger PID|--all [--steps N | --duration-ms T] [--output-dir DIR]

Asks a process running with the agent on demand (`profagent run --on-demand`, or
PROFAGENT_ON_DEMAND=1) to record its next N steps (default 1), or the next T milliseconds,
into one window; prints where the files will go. The process records nothing until then;
steps are marked as for any window (PROFAGENT_STEP_ON or profagent_step()).
  PID              the process to trigger
  --all            every process of this user on this host running the agent on demand;
                   all start at the same step (two past the furthest step in progress,
                   further ahead for steps shorter than the time to ask them all)
  --steps N        how many steps to record (N >= 1)
  --duration-ms T  record from now for T ms instead (also without step markers); the
                   window's steps are those that ended in it and the one in progress
  --output-dir DIR where the files go (default: each process's PROFAGENT_OUTPUT_DIR)
The processes are reached through their sockets in $XDG_RUNTIME_DIR/profagent (or
/tmp/profagent-<uid>): no signal is sent. A process without the agent, another user's
process, a socket left by a process that ended (it is removed), or a process whose triggered
steps are still being recorded gets one line and is left as it was.
)";

}  // namespace profagent::launcher
