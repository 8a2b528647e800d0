#include "agent/report/stack_frames_json.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <unordered_map>

namespace profagent::report {
namespace {

namespace od = simdjson::ondemand;

bool whole_number(std::string_view text, uint64_t& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc{} && end == text.data() + text.size();
}

uint64_t node_id(od::value v) {
  uint64_t id = 0;
  std::string_view text;
  if (v.get_uint64().get(id) == simdjson::SUCCESS) return id;
  if (v.get_string().get(text) == simdjson::SUCCESS && whole_number(text, id)) return id;
  return 0;
}

void read_node(od::value v, StackFrameNode& node) {
  od::object o;
  if (v.get_object().get(o) != simdjson::SUCCESS) return;
  for (auto field : o) {
    std::string_view key, text;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) return;
    if (key == "name" && field.value().get_string().get(text) == simdjson::SUCCESS) node.name = text;
    else if (key == "parent") node.parent = node_id(field.value());
  }
}

// "<file>(<line>): <function>" with a line as frame_label writes it (no sign, no leading zero).
bool split_file_line(const std::string& label, StackFrame& frame) {
  for (std::size_t open = label.find('('); open != std::string::npos; open = label.find('(', open + 1)) {
    const std::size_t close = label.find("): ", open);
    if (close == std::string::npos) return false;
    const std::string_view digits = std::string_view(label).substr(open + 1, close - open - 1);
    uint64_t line = 0;
    if (!whole_number(digits, line) || line > uint64_t(INT32_MAX) || std::to_string(line) != digits) continue;
    frame.python = true;  // frame_label prints these fields back unchanged
    frame.file = label.substr(0, open);
    frame.line = int(line);
    frame.function = label.substr(close + 3);
    return true;
  }
  return false;
}

}  // namespace

void read_stack_frames(od::value v, std::vector<StackFrameNode>& nodes) {
  od::object o;
  if (v.get_object().get(o) != simdjson::SUCCESS) return;
  for (auto field : o) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) return;
    StackFrameNode node;
    if (!whole_number(key, node.id) || node.id == 0) continue;
    read_node(field.value(), node);
    nodes.push_back(std::move(node));
  }
}

StackFrame frame_of_label(const std::string& label) {
  StackFrame frame;
  if (split_file_line(label, frame)) return frame;
  // "<function> (<module>)", also "0x1f2e (<module>)": frame_label's "function (module)" form.
  const std::size_t open = label.rfind(" (");
  if (open != std::string::npos && label.size() > open + 3 && label.back() == ')' &&
      label.find('/', open) == std::string::npos) {
    frame.function = label.substr(0, open);
    frame.module = label.substr(open + 2, label.size() - open - 3);
    return frame;
  }
  // "0x1f2e": code no module holds. Anything else keeps its text as the function's name.
  uint64_t address = 0;
  const auto [end, ec] = std::from_chars(label.data() + std::min<std::size_t>(2, label.size()),
                                         label.data() + label.size(), address, 16);
  if (label.rfind("0x", 0) == 0 && ec == std::errc{} && end == label.data() + label.size()) frame.address = address;
  else frame.function = label;
  return frame;
}

void attach_stacks(const std::vector<StackFrameNode>& nodes, Trace& trace) {
  std::unordered_map<uint64_t, std::size_t> node_at;  // node id -> index in nodes
  for (std::size_t i = 0; i < nodes.size(); ++i) node_at.emplace(nodes[i].id, i);
  std::unordered_map<std::string, uint32_t> frame_at;  // label -> index in trace.stacks.frames
  std::unordered_map<uint64_t, uint32_t> stack_at;     // leaf id -> 1-based stack index
  auto stack_of_leaf = [&](uint64_t leaf) -> uint32_t {
    const auto [found, added] = stack_at.try_emplace(leaf, 0);
    if (!added) return found->second;
    std::vector<uint32_t> stack;  // innermost first; a parent chain that loops is cut
    for (auto at = node_at.find(leaf); at != node_at.end() && stack.size() < nodes.size();
         at = node_at.find(nodes[at->second].parent)) {
      const std::string& name = nodes[at->second].name;
      const auto [frame, fresh] = frame_at.try_emplace(name, uint32_t(trace.stacks.frames.size()));
      if (fresh) trace.stacks.frames.push_back(frame_of_label(name));
      stack.push_back(frame->second);
    }
    if (stack.empty()) return 0;
    trace.stacks.stacks.push_back(std::move(stack));
    return found->second = uint32_t(trace.stacks.stacks.size());
  };
  for (HostRecord& h : trace.host) h.stack = h.stack == 0 ? 0 : stack_of_leaf(h.stack);
}

}  // namespace profagent::report
