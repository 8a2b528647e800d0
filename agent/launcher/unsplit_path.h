// A path the loader's and Python's list variables cannot split.
//
// ld.so splits LD_PRELOAD at every space and colon, with no escape (ld.so(8)), and Python splits
// PYTHONPATH at colons: an agent installed under "/opt/my tools/" would be preloaded as two
// missing files (two ld.so errors on the program's stderr, no agent). Such a path is given as a
// symbolic link without separators instead, in a directory only this user can write:
// this user's private runtime directory (agent/user_runtime_dir.h). The link's name is derived from the target (one link per installation,
// reused by every run and every process of it, never removed: a process that outlives the run
// may still start children preloading it). Nothing else the program sees changes: no library
// search path is added.
#pragma once

#include <string>

namespace profagent::launcher {

// `path` itself when it has no space or colon; else the link to it, "" with `why` set when no
// link can be made.
std::string unsplit_path(const std::string& path, std::string& why);

}  // namespace profagent::launcher
