// Call stacks in the Chrome trace, each distinct stack written once: the trace's top-level
// "stackFrames" dictionary (the Trace Event Format's own place for them: a tree of frames,
// each {"name", "category", "parent"}) and an "sf" id on every event that has a stack. A
// kernel, copy or set carries the "sf" of the call that issued it.
// https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU (stackFrames)
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "collector/trace.h"
#include "exporters/json_writer.h"

namespace profagent::exporters {

class TraceStackFrames {
 public:
  explicit TraceStackFrames(const Trace& trace);
  // The "sf" of a host record's stack, 0 for none.
  uint64_t sf_of(const HostRecord& record) const;
  bool empty() const { return nodes_.empty(); }
  // `"stackFrames": {...}` (without a trailing comma).
  void write(JsonWriter& w) const;

 private:
  struct Node {
    uint32_t frame;
    uint64_t parent;  // 0: a root frame
  };
  const Trace& trace_;
  std::vector<Node> nodes_;             // node id = index + 1
  std::vector<uint64_t> leaf_of_stack_;  // by stack index
};

}  // namespace profagent::exporters
