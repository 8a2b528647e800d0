// The one place that says a window's drops on stderr. What each counter is, and the line it
// says, are listed once in exporters/drop_counters.h; here they are said: per written window
// after the window's name, or once per process at the first window that has them.
#pragma once

#include <string>

#include "collector/trace.h"

namespace profagent::agent {

// Says the warnings of the window's drop counters (one line per counter that has one);
// `prefix` names the window ("" for the whole run) before each per-window line.
void report_drops(const Trace& trace, const std::string& prefix);

}  // namespace profagent::agent
