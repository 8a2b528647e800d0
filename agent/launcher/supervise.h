// `profagent run`'s child: started, waited for, and sent the signals the launcher receives.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace profagent::launcher {

// Runs `command` (PATH searched) as a child and returns its exit code as a shell reports it
// (128+N when signal N killed it; 127 when it could not be started). `pid` is the child's.
//
// SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 that reach the launcher are passed on
// to the program (docker stop, a supervisor, `kill` of the launcher no longer orphan it),
// except those the kernel sent to the whole foreground process group, which the program
// (in that group) received itself: ^C and ^\ from the terminal are not delivered twice.
// A signal the program already has pending is not sent again (the kernel would merge it).
// A sender that signals both the launcher and its process group (`timeout`, kill -TERM
// -PGID) may still reach the program twice, as `timeout` also does without the launcher.
// Signals the launcher inherited as ignored (nohup) stay ignored and are not passed on.
int run_and_forward(const std::vector<std::string>& command, pid_t& pid);

}  // namespace profagent::launcher
