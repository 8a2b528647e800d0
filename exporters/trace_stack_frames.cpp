#include "exporters/trace_stack_frames.h"

#include <string>

#include "exporters/stack_text.h"

namespace profagent::exporters {
namespace {

std::string category_of(const StackFrame& frame) {
  if (frame.python) return "python";
  const size_t slash = frame.module.rfind('/');
  return slash == std::string::npos ? frame.module : frame.module.substr(slash + 1);
}

}  // namespace

// Stacks sharing their outer frames share those nodes: the dictionary is a tree, root first.
TraceStackFrames::TraceStackFrames(const Trace& trace) : trace_(trace) {
  std::map<std::pair<uint64_t, uint32_t>, uint64_t> node_of;  // (parent, frame) -> node
  for (const std::vector<uint32_t>& stack : trace.stacks.stacks) {
    uint64_t parent = 0;
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
      auto [found, added] = node_of.try_emplace({parent, *it}, nodes_.size() + 1);
      if (added) nodes_.push_back({*it, parent});
      parent = found->second;
    }
    leaf_of_stack_.push_back(parent);
  }
}

uint64_t TraceStackFrames::sf_of(const HostRecord& record) const {
  if (record.stack == 0 || record.stack > leaf_of_stack_.size()) return 0;
  return leaf_of_stack_[record.stack - 1];
}

void TraceStackFrames::write(JsonWriter& w) const {
  w.raw("  \"stackFrames\": {");
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const StackFrame& frame = trace_.stacks.frames[nodes_[i].frame];
    w.raw(i ? ",\n    \"" : "\n    \"");
    w.u64(i + 1);
    w.raw("\": {\"name\": ");
    w.string(frame_label(frame));
    w.raw(", \"category\": ");
    w.string(category_of(frame));
    if (nodes_[i].parent != 0) {
      w.raw(", \"parent\": \"");
      w.u64(nodes_[i].parent);
      w.raw("\"");
    }
    w.raw("}");
  }
  w.raw("\n  }");
}

}  // namespace profagent::exporters
