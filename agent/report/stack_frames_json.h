// Reading the "stackFrames" member of a trace (trace_stacks.h), for the .cpp files that parse the
// metadata with simdjson (its headers stay out of the report's public headers).
#pragma once

#include <vector>

#include <simdjson.h>

#include "agent/report/trace_stacks.h"

namespace profagent::report {

// Node ids as keys; a parent written as text or as a number.
void read_stack_frames(simdjson::ondemand::value v, std::vector<StackFrameNode>& nodes);

}  // namespace profagent::report
