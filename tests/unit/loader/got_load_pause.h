// Shared by the GOT-patching test and its LD_AUDIT module (got_load_pause_audit.cpp): the
// module pauses a load of an object whose name holds kPausedName right after the loader has
// listed it and BEFORE it relocates it (the audit's la_objopen point), says so on kListedFd
// and waits for a byte on kGoFd (at most kPauseLimitMs). The test moves its pipes to these
// numbers; in a process without them the module does nothing.
#pragma once

namespace got_load_pause {
constexpr int kListedFd = 240;
constexpr int kGoFd = 241;
constexpr int kPauseLimitMs = 10000;
constexpr const char* kPausedName = "got_importer_paused";
}  // namespace got_load_pause
