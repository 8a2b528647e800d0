// Symbolising a window's call stacks, once per distinct address, when the window is frozen (on
// the agent's thread or at exit, never in a hook): demangled function, module, and source
// file:line where debug info exists (libdw, through collector/symbols/dwarf_shim.h); Python
// frames from the code objects' copies (python_frames.h).
//
// Addresses are read in the live process: a library unloaded (dlclose) before its window is
// frozen gives its frames as bare addresses.
#pragma once

#include <cstdint>
#include <string>

#include "collector/trace.h"

namespace profagent::collector {

// Replaces the raw stack ids on trace.host by 1 + an index into trace.stacks (stacks equal in
// content share one index) and fills trace.stacks and the stack drop counters.
void symbolize_window_stacks(Trace& trace) noexcept;

// Where libprofagent_dwarf.so is ("" for beside the collector's own module); tests.
void set_dwarf_library(const std::string& path) noexcept;

}  // namespace profagent::collector
