// The communication arguments of NCCL calls in the Chrome trace, under Kineto's names (what
// torch.profiler writes on `record_param_comms` and copies onto its NCCL kernels, and what
// HTA reads), plus `Comm hash` and `Seq`, which name one collective on every rank.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "collector/trace.h"
#include "exporters/json_writer.h"

namespace profagent::exporters {

// The collective of a host record id: operators of NCCL calls, by their own id (which their
// kernels carry as External id).
class CollectiveLookup {
 public:
  explicit CollectiveLookup(const Trace& t);
  const CollectiveArgs* by_id(uint64_t id) const;

 private:
  const Trace& t_;
  std::unordered_map<uint64_t, int32_t> index_;
};

// `key(name)` starts one argument and returns the writer for its value (the trace writer's
// lazily opened args object).
template <typename Key>
void write_collective_args(const CollectiveArgs& c, Key&& key) {
  key("Collective name").string(c.collective);
  key("In msg nelems").u64(c.in_nelems);
  key("Out msg nelems").u64(c.out_nelems);
  key("Group size").i64(c.group_size);
  key("dtype").string(c.dtype);
  key("In split size").string("[]");
  key("Out split size").string("[]");
  key("Process Group Name").string(std::to_string(c.comm_hash));
  key("Process Group Description").string("nccl communicator");
  if (c.world_communicator && c.group_size > 0) {
    std::string ranks = "[";
    for (int32_t r = 0; r < c.group_size; ++r) ranks += (r ? ", " : "") + std::to_string(r);
    key("Process Group Ranks").string(ranks + "]");
  }
  key("Rank").i64(c.rank);
  if (c.root >= 0) key("Root").i64(c.root);
  if (c.peer >= 0) key(c.in_nelems != 0 ? "Dst Rank" : "Src Rank").i64(c.peer);
  key("Seq").u64(c.seq);
  key("Comm hash").u64(c.comm_hash);
  key("bytes").u64(c.bytes);
  if (c.calls != 1) key("Calls").i64(c.calls);
}

}  // namespace profagent::exporters
