// This user's private runtime directory on this host: $XDG_RUNTIME_DIR/profagent (when that
// path is absolute and has no space or colon) or /tmp/profagent-<uid>, created mode 0700 and
// trusted only when it is a real directory (not a link) this user owns, with no group or
// other write permission. The launcher keeps its preload links there
// (agent/launcher/unsplit_path.h); agents keep their trigger sockets there
// (agent/trigger_server.h), where `profagent trigger` finds them.
#pragma once

#include <string>

namespace profagent::agent {

// The directory's path, without creating or checking it.
std::string user_runtime_dir_path();

// The directory, created if missing; "" with `why` set when it cannot be made or trusted.
std::string user_runtime_dir(std::string& why);

}  // namespace profagent::agent
