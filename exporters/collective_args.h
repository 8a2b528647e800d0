// The communication arguments of NCCL calls in the Chrome trace, under Kineto's names (what
// torch.profiler writes on `record_param_comms` and copies onto its NCCL kernels, and what
// HTA reads), plus `Comm hash` and `Seq`, which name one collective on every rank.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "collector/trace.h"
#include "exporters/json_writer.h"
#include "exporters/trace_schema.h"

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

// `key(name)` (a std::string_view) starts one argument and returns the writer for its value
// (the trace writer's lazily opened args object).
template <typename Key>
void write_collective_args(const CollectiveArgs& c, Key&& key) {
  namespace arg = schema::arg;
  key(arg::kCollectiveName).string(c.collective);
  key(arg::kInMsgNelems).u64(c.in_nelems);
  key(arg::kOutMsgNelems).u64(c.out_nelems);
  key(arg::kGroupSize).i64(c.group_size);
  key(arg::kDtype).string(c.dtype);
  key(arg::kInSplitSize).string("[]");
  key(arg::kOutSplitSize).string("[]");
  key(arg::kProcessGroupName).string(std::to_string(c.comm_hash));
  key(arg::kProcessGroupDescription).string("nccl communicator");
  if (c.world_communicator && c.group_size > 0) {
    std::string ranks = "[";
    for (int32_t r = 0; r < c.group_size; ++r) ranks += (r ? ", " : "") + std::to_string(r);
    key(arg::kProcessGroupRanks).string(ranks + "]");
  }
  key(arg::kCommRank).i64(c.rank);
  if (c.root >= 0) key(arg::kRoot).i64(c.root);
  if (c.peer >= 0) key(c.in_nelems != 0 ? arg::kDstRank : arg::kSrcRank).i64(c.peer);
  key(arg::kSeq).u64(c.seq);
  key(arg::kCommHash).u64(c.comm_hash);
  key(arg::kBytes).u64(c.bytes);
  if (c.calls != 1) key(arg::kCalls).i64(c.calls);
}

}  // namespace profagent::exporters
