// The stderr line for dropped host events, with the true cause: a full buffer (raise
// PROFAGENT_BUFFER_MB) or an address-space limit (RLIMIT_AS, `ulimit -v`), under which a
// larger buffer only makes things worse (it asks for more of the address space that is short).
#pragma once

#include <string>

#include "collector/trace.h"

namespace profagent::agent {

// "" when no host event was dropped.
std::string host_drops_line(const DropCounters& drops);

// "" when the window's join had every device record it waited for; else how many had not
// come within PROFAGENT_WINDOW_WAIT_MS (they are in profagent_drops.late_device_records and
// are dropped when they come, never put into another window).
std::string late_records_line(const Trace& trace);

// "" when the whole window was written; else how many host events and device records were left
// out because writing them would not have fit in the memory the process's limits leave.
std::string left_out_line(const DropCounters& drops);

// Says on stderr (one warning each) the host events, device records and late device records
// the window lost; `prefix` names the window ("" for the whole run).
void report_drops(const Trace& trace, const std::string& prefix);

}  // namespace profagent::agent
