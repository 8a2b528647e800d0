#include "exporters/summaries/host_costs.h"

#include <algorithm>

#include "exporters/host_nesting.h"
#include "exporters/trace_figures.h"

namespace profagent::exporters {
namespace {

// Duration less the children's (host records whose parent it is) and its driver records'.
std::vector<uint64_t> self_cpu(const Trace& t) {
  std::vector<int64_t> self = filled_on_huge_pages<int64_t>(t.host.size(), 0);
  for (std::size_t i = 0; i < t.host.size(); ++i) {
    const HostRecord& h = t.host[i];
    const auto length = static_cast<int64_t>(span_ns(h.start_ns, h.end_ns));
    self[i] += length;
    if (valid_index(h.parent, t.host.size())) self[h.parent] -= length;
  }
  for (const DeviceRecord& d : t.device) {
    if (d.kind == DeviceKind::DriverApi && valid_index(d.host, t.host.size())) {
      self[d.host] -= static_cast<int64_t>(span_ns(d.start_ns, d.end_ns));
    }
  }
  std::vector<uint64_t> out;
  reserve_on_huge_pages(out, t.host.size());
  for (std::size_t i = 0; i < self.size(); ++i) out.push_back(static_cast<uint64_t>(std::max<int64_t>(self[i], 0)));
  return out;
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
