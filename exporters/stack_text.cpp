#include "exporters/stack_text.h"

#include <cstdio>

namespace profagent::exporters {
namespace {

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string frame_label(const StackFrame& frame) {
  const std::string function = frame.function.empty() ? "???" : frame.function;
  if (frame.python) return frame.file + "(" + std::to_string(frame.line) + "): " + function;
  if (!frame.file.empty()) return base_name(frame.file) + "(" + std::to_string(frame.line) + "): " + function;
  if (!frame.function.empty()) return function + " (" + base_name(frame.module) + ")";
  char address[32];
  std::snprintf(address, sizeof address, "0x%llx", static_cast<unsigned long long>(frame.address));
  if (frame.module.empty()) return address;  // code no module holds (JIT)
  return std::string(address) + " (" + base_name(frame.module) + ")";
}

const std::vector<uint32_t>* stack_of(const Trace& trace, const HostRecord& record) {
  if (record.stack == 0 || record.stack > trace.stacks.stacks.size()) return nullptr;
  return &trace.stacks.stacks[record.stack - 1];
}

std::string call_site(const Trace& trace, const std::vector<uint32_t>& stack) {
  const StackFrame* with_line = nullptr;
  for (uint32_t index : stack) {
    const StackFrame& frame = trace.stacks.frames[index];
    if (frame.python) return frame_label(frame);
    if (with_line == nullptr && !frame.file.empty()) with_line = &frame;
  }
  if (with_line != nullptr) return frame_label(*with_line);
  return stack.empty() ? std::string() : frame_label(trace.stacks.frames[stack.front()]);
}

std::string innermost_lines(const Trace& trace, const std::vector<uint32_t>& stack, size_t n) {
  std::string text;
  for (size_t i = 0; i < stack.size() && i < n; ++i) {
    if (i) text += '\n';
    text += frame_label(trace.stacks.frames[stack[i]]);
  }
  return text;
}

}  // namespace profagent::exporters
