// How call stack frames read in every output (table, folded files, trace): one line per frame,
// as torch prints Python frames — `file.py(line): function` — and native frames alike when
// they have debug info (`layers.cpp(42): layer(int)`), else `function (libfoo.so)`.
#pragma once

#include <string>
#include <vector>

#include "collector/trace.h"

namespace profagent::exporters {

std::string frame_label(const StackFrame& frame);

// The frames of a record's stack, innermost first (empty without a stack).
const std::vector<uint32_t>* stack_of(const Trace& trace, const HostRecord& record);

// The call site of a stack as a short string: its innermost Python frame, else its innermost
// native frame with a source line, else its innermost frame.
std::string call_site(const Trace& trace, const std::vector<uint32_t>& stack);

// call_site() of each distinct stack, rendered once however many records share it.
class CallSites {
 public:
  explicit CallSites(const Trace& trace) : trace_(trace) {}
  // The call site of a record's stack; nullptr when it has none.
  const std::string* of(const HostRecord& record) {
    const std::vector<uint32_t>* stack = stack_of(trace_, record);
    if (stack == nullptr) return nullptr;
    if (text_.size() <= record.stack) text_.resize(trace_.stacks.stacks.size() + 1);
    std::string& text = text_[record.stack];
    if (text.empty()) text = call_site(trace_, *stack);  // an empty stack has "": recomputed, cheaply
    return &text;
  }

 private:
  const Trace& trace_;
  std::vector<std::string> text_;  // by HostRecord::stack
};

// The N innermost frames, one label per line (the table's Source Location).
std::string innermost_lines(const Trace& trace, const std::vector<uint32_t>& stack, size_t n);

}  // namespace profagent::exporters
