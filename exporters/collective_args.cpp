#include "exporters/collective_args.h"

namespace profagent::exporters {

CollectiveLookup::CollectiveLookup(const Trace& t) : t_(t) {
  if (t.collectives.empty()) return;  // no NCCL call in the window: no walk of its records
  for (const HostRecord& h : t.host) {
    if (h.collective >= 0 && size_t(h.collective) < t.collectives.size()) index_.emplace(h.id, h.collective);
  }
}

const CollectiveArgs* CollectiveLookup::by_id(uint64_t id) const {
  auto found = index_.find(id);
  return found == index_.end() ? nullptr : &t_.collectives[size_t(found->second)];
}

}  // namespace profagent::exporters
