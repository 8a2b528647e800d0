#include "exporters/summaries/host_costs.h"

#include <algorithm>

#include "exporters/host_nesting.h"
#include "exporters/trace_figures.h"

namespace profagent::exporters {
namespace {

// Duration less the children's (host records whose parent it is) and its driver records'. Summed
// in the output array itself, wrapping (a signed sum in two's complement), then negatives are 0:
// no second array of the window's size.
std::vector<uint64_t> self_cpu(const Trace& t) {
  std::vector<uint64_t> self = filled_on_huge_pages<uint64_t>(t.host.size(), 0);
  for (std::size_t i = 0; i < t.host.size(); ++i) {
    const HostRecord& h = t.host[i];
    const uint64_t length = span_ns(h.start_ns, h.end_ns);
    self[i] += length;
    if (valid_index(h.parent, t.host.size())) self[h.parent] -= length;
  }
  for (const DeviceRecord& d : t.device) {
    if (d.kind == DeviceKind::DriverApi && valid_index(d.host, t.host.size())) {
      self[d.host] -= span_ns(d.start_ns, d.end_ns);
    }
  }
  for (uint64_t& ns : self) ns = static_cast<int64_t>(ns) < 0 ? 0 : ns;
  return self;
}

void attribute_device_work(const Trace& t, HostCosts& c) {
  c.own_device_ns = filled_on_huge_pages<uint64_t>(t.host.size(), 0);
  c.self_device_ns = filled_on_huge_pages<uint64_t>(t.host.size(), 0);
  for (const DeviceRecord& d : t.device) {
    if (!is_device_work(d.kind) || !valid_index(d.host, t.host.size())) continue;
    const uint64_t length = span_ns(d.start_ns, d.end_ns);
    c.own_device_ns[d.host] += length;
    if (c.scope[d.host] >= 0) c.self_device_ns[c.scope[d.host]] += length;
  }
  c.device_ns = c.own_device_ns;
  add_up_to_parents(t, c.order, c.device_ns);
}

}  // namespace

HostCosts host_costs(const Trace& t) {
  HostCosts c;
  c.order = parents_first(t);
  c.self_cpu_ns = self_cpu(t);
  c.scope = nearest_at_or_above(t, c.order, is_scope);
  c.any_device_work = std::any_of(t.device.begin(), t.device.end(), [](const DeviceRecord& d) { return is_device_work(d.kind); });
  if (c.any_device_work) attribute_device_work(t, c);
  return c;
}

}  // namespace profagent::exporters
