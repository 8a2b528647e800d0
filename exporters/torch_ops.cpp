#include "exporters/torch_ops.h"

#include <algorithm>
#include <map>
#include <string_view>

namespace profagent::exporters {
namespace {

constexpr std::string_view kEvaluate = "autograd::engine::evaluate_function: ";

const Annotation* annotation_of(const Trace& t, const HostRecord& h) {
  if (h.kind != EventKind::Operator || h.annotation == 0 || h.annotation > t.annotations.size()) return nullptr;
  return &t.annotations[h.annotation - 1];
}

bool ends_like_backward(std::string_view name) {
  while (!name.empty() && name.back() >= '0' && name.back() <= '9') name.remove_suffix(1);
  return name.ends_with("Backward");
}

}  // namespace

bool is_backward_op(const Trace& t, const HostRecord& h) {
  const Annotation* a = annotation_of(t, h);
  if (a == nullptr || a->sequence < 0) return false;
  if (ends_like_backward(h.name)) return true;
  if (h.parent == kNoIndex) return false;
  const std::string& parent = t.host[std::size_t(h.parent)].name;
  return parent.size() == kEvaluate.size() + h.name.size() && parent.starts_with(kEvaluate) &&
         parent.ends_with(h.name);
}

ForwardBackward link_forward_backward(const Trace& t) {
  ForwardBackward out;
  // Only torch operators have a sequence number, kept in their annotation: none, nothing to link.
  if (t.annotations.empty()) return out;
  // (sequence number) -> forward operators with it, by start time.
  std::map<int64_t, std::vector<std::pair<uint64_t, std::size_t>>> forwards;
  std::vector<std::size_t> backwards;
  for (std::size_t i = 0; i < t.host.size(); ++i) {
    const Annotation* a = annotation_of(t, t.host[i]);
    if (a == nullptr || a->sequence < 0) continue;
    if (is_backward_op(t, t.host[i])) {
      backwards.push_back(i);
    } else {
      forwards[a->sequence].emplace_back(t.host[i].start_ns, i);
    }
  }
  if (backwards.empty()) return out;
  out.fwd_tid.assign(t.host.size(), 0);
  out.flow.assign(t.host.size(), 0);
  out.flow_starts.assign(t.host.size(), false);
  for (auto& [sequence, ops] : forwards) std::sort(ops.begin(), ops.end());
  for (std::size_t b : backwards) {
    const HostRecord& back = t.host[b];
    auto found = forwards.find(t.annotations[back.annotation - 1].sequence);
    if (found == forwards.end()) continue;
    const auto& ops = found->second;
    auto after = std::upper_bound(ops.begin(), ops.end(), std::make_pair(back.start_ns, SIZE_MAX));
    if (after == ops.begin()) continue;
    const std::size_t f = std::prev(after)->second;
    out.fwd_tid[b] = t.host[f].tid;
    // The forward op's host id names the flow: unique, and above every correlation id (the
    // ids of ac2g flows), so no viewer joins the two kinds of arrows.
    out.flow[b] = out.flow[f] = t.host[f].id;
    out.flow_starts[f] = true;
    ++out.links;
  }
  return out;
}

}  // namespace profagent::exporters
