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

// The N innermost frames, one label per line (the table's Source Location).
std::string innermost_lines(const Trace& trace, const std::vector<uint32_t>& stack, size_t n);

}  // namespace profagent::exporters
