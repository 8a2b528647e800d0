// `profagent trigger PID|--all [--steps N | --duration-ms T] [--output-dir D]`: asks processes
// running with the agent on demand (PROFAGENT_ON_DEMAND, `profagent run --on-demand`) to record
// their next N steps (or T ms), through each one's socket in this user's runtime directory
// (agent/trigger_server.h), and says where the files will go. With --all every such process of this user on this host
// is asked, and all start at the same step: one past the highest step in progress among them,
// further ahead when steps are shorter than the time to ask them all; one that had begun it
// when asked makes the others be taken back and all be asked again (all or none).
// Each target that cannot be triggered gets one line and is left as it was.
#pragma once

#include <string>
#include <vector>

namespace profagent::launcher {

int trigger_main(const std::vector<std::string>& args);

extern const char* const kTriggerHelp;

}  // namespace profagent::launcher
