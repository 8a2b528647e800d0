// What the summaries attribute to each host record, computed once per trace by one walk over
// the nesting (host_nesting.h: parents first, no recursion, no depth cap, every parent chain
// followed once), and read by every table and summary that needs it: torch's key_averages,
// Paddle's and MindInsight's summaries, the memory summary and the folded stacks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collector/trace.h"

namespace profagent::exporters {

struct HostCosts {
  // Indexes of Trace::host, every record after its parent (parents_first()); empty when the
  // records' own order is such an order, as the join makes it (host_nesting.h's walks take both).
  std::vector<std::size_t> order;
  // Its duration less the durations of the records nested in it and of the CUPTI driver records
  // its call made (DeviceKind::DriverApi), never below 0.
  std::vector<uint64_t> self_cpu_ns;
  // Innermost operator, range or step at or above each record (itself included), -1 none.
  // Empty when the trace has no operator, range or step (scope_of).
  std::vector<int64_t> scope;
  // Device work (kernels, copies, sets) issued by the record itself (own), by it or anything
  // nested in it (total: torch's CUDA total), and whose innermost scope is the record (self:
  // torch's Self CUDA). Empty when the trace has no device work (a host-only window of a
  // million calls needs 8 bytes a record, not 32).
  std::vector<uint64_t> own_device_ns;
  std::vector<uint64_t> device_ns;
  std::vector<uint64_t> self_device_ns;
  bool any_device_work = false;

  int64_t scope_of(std::size_t i) const { return scope.empty() ? kNoIndex : scope[i]; }
  uint64_t own_device(std::size_t i) const { return own_device_ns.empty() ? 0 : own_device_ns[i]; }
  uint64_t device(std::size_t i) const { return device_ns.empty() ? 0 : device_ns[i]; }
  uint64_t self_device(std::size_t i) const { return self_device_ns.empty() ? 0 : self_device_ns[i]; }
};

HostCosts host_costs(const Trace& trace);

}  // namespace profagent::exporters
