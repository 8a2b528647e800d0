#include "exporters/summaries/host_costs.h"

#include <algorithm>

#include "exporters/host_nesting.h"
#include "exporters/trace_figures.h"

namespace profagent::exporters {
namespace {

// One walk in the records' own order: self CPU time (the duration less the children's, host
// records whose parent it is; summed in the output array itself, wrapping, a signed sum in two's
// complement) and the innermost scope, right when that order has every parent first (the join's),
// which the same walk checks. Else the order is made and the scopes are found again in it. The
// scopes' array is made at the first scope record (all before it have none); a trace without any
// has none (HostCosts::scope_of). True when a record has a parent: only then can a self time
// have gone below 0.
bool self_cpu_and_scopes(const Trace& t, HostCosts& c) {
  const std::size_t n = t.host.size();
  c.self_cpu_ns = filled_on_huge_pages<uint64_t>(n, 0);
  bool parents_first_order = true, any_parent = false;
  int64_t* scope = nullptr;  // c.scope's records once it is made
  // Held in locals: the allocation in the loop would make the compiler load them per record.
  const HostRecord* const host = t.host.data();
  uint64_t* const self = c.self_cpu_ns.data();
  for (std::size_t i = 0; i < n; ++i) {
    const HostRecord& h = host[i];
    const uint64_t length = span_ns(h.start_ns, h.end_ns);
    self[i] += length;
    const uint64_t parent = static_cast<uint64_t>(h.parent);  // -1 (none) is past every index
    const bool has_parent = parent < n;
    if (has_parent) {
      any_parent = true;
      self[parent] -= length;
      parents_first_order = parents_first_order && parent < i;
    }
    const bool scoped = is_scope(h.kind);
    if (scoped && !scope) c.scope = filled_on_huge_pages<int64_t>(n, kNoIndex), scope = c.scope.data();
    if (scope) scope[i] = scoped ? static_cast<int64_t>(i) : has_parent ? scope[parent] : kNoIndex;
  }
  if (!parents_first_order) {
    c.order = parents_first(t);
    if (!c.scope.empty()) c.scope = nearest_at_or_above(t, c.order, is_scope);
  }
  return any_parent;
}

// Less the driver records of each call, then negatives are 0 (no second array of the window's
// size). Without parents and driver records every self time is a duration: nothing to clamp.
void finish_self_cpu(const Trace& t, bool any_parent, std::vector<uint64_t>& self) {
  bool any_driver = false;
  for (const DeviceRecord& d : t.device) {
    if (d.kind == DeviceKind::DriverApi && valid_index(d.host, t.host.size())) {
      self[d.host] -= span_ns(d.start_ns, d.end_ns);
      any_driver = true;
    }
  }
  if (!any_parent && !any_driver) return;
  for (uint64_t& ns : self) ns = static_cast<int64_t>(ns) < 0 ? 0 : ns;
}

void attribute_device_work(const Trace& t, HostCosts& c) {
  c.own_device_ns = filled_on_huge_pages<uint64_t>(t.host.size(), 0);
  c.self_device_ns = filled_on_huge_pages<uint64_t>(t.host.size(), 0);
  for (const DeviceRecord& d : t.device) {
    if (!is_device_work(d.kind) || !valid_index(d.host, t.host.size())) continue;
    const uint64_t length = span_ns(d.start_ns, d.end_ns);
    c.own_device_ns[d.host] += length;
    if (const int64_t scope = c.scope_of(std::size_t(d.host)); scope >= 0) c.self_device_ns[std::size_t(scope)] += length;
  }
  c.device_ns = c.own_device_ns;
  add_up_to_parents(t, c.order, c.device_ns);
}

}  // namespace

HostCosts host_costs(const Trace& t) {
  HostCosts c;
  const bool any_parent = self_cpu_and_scopes(t, c);
  finish_self_cpu(t, any_parent, c.self_cpu_ns);
  c.any_device_work = std::any_of(t.device.begin(), t.device.end(), [](const DeviceRecord& d) { return is_device_work(d.kind); });
  if (c.any_device_work) attribute_device_work(t, c);
  return c;
}

}  // namespace profagent::exporters
