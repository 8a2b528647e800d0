// The agent's lifecycle: explicit, and made to survive hostile processes (calls before our
// constructor, statics destroyed before our flush, secure execution).
//
// Init is one atomic state machine, UNINIT -> INITING(owner tid) -> READY | DISABLED, entered
// from the library constructor. Hooks never wait for it: until READY the collector's record
// state is Off, so every hook forwards without recording; a hook re-entering on the owner
// thread during init passes straight through the same way.
//
// Exit is one idempotent flush, reached from the atexit handler registered at init and from a
// destructor fallback (whichever comes first): recording stops, the window is frozen and
// exported, the table goes to stderr and "[profagent] wrote ..." is the last line. After the
// flush hooks keep forwarding and record nothing. All state is leaked on purpose: other
// libraries' destructors may still call CUDA after ours ran.
#pragma once

#include "agent/config.h"
#include "collector/trace.h"
#include "exporters/exporter.h"

namespace profagent::agent {

enum class AgentState : uint8_t { Uninit, Initing, Ready, Disabled };

// Idempotent; true once the agent is READY. Never blocks.
bool ensure_init() noexcept;
AgentState state() noexcept;

// The immutable configuration; only valid once ensure_init() returned true.
const Config& config() noexcept;

// Writes the output once; later calls return at once. `reason` goes to the debug log.
void flush_all(const char* reason) noexcept;

// Whether the one flush_all that writes (on whichever thread) has finished.
bool flush_finished() noexcept;

// What the agent itself lost so far (stderr lines, agent/stderr_writer.h; dlopen calls made
// plainly, hooks/call_as_caller.h), into the counters written with a window.
void note_agent_drops(DropCounters& drops) noexcept;

// Where and how windows are written, from the configuration (the exit window and step windows).
exporters::ExportOptions export_options(const Config& config);

// PROFAGENT_CHILD=off, from the fork child handler: stop recording and never write.
void silence_forked_child() noexcept;

}  // namespace profagent::agent
