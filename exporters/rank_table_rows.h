// for_each_collective_kernel (rank_table.h): a template, so the fold and the whole window's
// table walk a part's records the same way without a call per record through a function pointer.
#pragma once

#include <unordered_map>

#include "collector/trace.h"

namespace profagent::exporters {

template <typename Row>
void for_each_collective_kernel(const Trace& part, Row row) {
  if (part.collectives.empty()) return;  // no NCCL call in it: no walk of its records
  std::unordered_map<uint64_t, const HostRecord*> calls;  // operator id -> the NCCL call or group
  for (const HostRecord& h : part.host) {
    if (h.collective >= 0 && std::size_t(h.collective) < part.collectives.size()) calls.emplace(h.id, &h);
  }
  for (const DeviceRecord& d : part.device) {
    auto found = d.kind == DeviceKind::Kernel ? calls.find(d.external_id) : calls.end();
    if (found == calls.end()) continue;
    row(part.collectives[std::size_t(found->second->collective)], *found->second, d);
  }
}

}  // namespace profagent::exporters
