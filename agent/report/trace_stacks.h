// Call stacks read back from a trace: its "stackFrames" tree (each node {"name", "parent"}, the
// name the text exporters/stack_text.h's frame_label() wrote) and the "sf" leaf of each event,
// turned into the Trace's CallStacks so that every summary of a saved trace (key_averages
// grouped by stack_n, the memory summary, folded stacks) reads the stacks the window had.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collector/trace.h"

namespace profagent::report {

struct StackFrameNode {
  uint64_t id = 0;
  uint64_t parent = 0;  // 0: a root frame
  std::string name;
};

// A frame whose frame_label() is `label` (exporters/stack_text.h): the label's parts put back
// into the fields that label was made of.
StackFrame frame_of_label(const std::string& label);

// Host records hold their event's "sf" in HostRecord::stack while the file is read; this
// replaces it with the index (1-based) of its stack in trace.stacks, 0 when the tree lacks it.
void attach_stacks(const std::vector<StackFrameNode>& nodes, Trace& trace);

}  // namespace profagent::report
