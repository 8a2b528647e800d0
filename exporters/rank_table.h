// The per-rank table of a distributed job: what the cross-rank report needs from one rank's
// window, kilobytes where the trace is megabytes, so that thousands of ranks can be reduced
// (agent/ranks/profagent_ranks.py, also over Dask) without reading their traces.
//
// <stem>.rank.ndjson, one JSON object on one line (not ".json": HTA loads every *.json of a
// trace folder as a trace, and this one's "rank" would take the place of the rank's trace):
//   {"format":"profagent-rank","version":1,"host_name":..,"pid":..,"rank":..,"local_rank":..,
//    "world_size":..,"backend":..,"window":..,
//    "steps":[[number,start_unix_ns,end_unix_ns],...],
//    "distributed":{"span_ns":..,"communication_ns":..,"computation_ns":..,"overlap_ns":..},
//    "collectives":[[comm_hash,seq,"name",bytes,enqueue_unix_ns,start_unix_ns,end_unix_ns],...]}
// `distributed` is the Distributed Summary of the window (the same computation); one row per
// collective kernel: its communicator's hash and sequence number, the call's (or group's)
// start on the host and the kernel's start and end.
#pragma once

#include "collector/trace.h"
#include "exporters/json_writer.h"
#include "exporters/summaries/summaries.h"

namespace profagent::exporters {

// Written for a window with NCCL collectives or of a job of more than one rank.
bool wants_rank_table(const Trace& trace);
// `summaries`: the window's, when they hold the Distributed Summary (else it is computed here).
bool write_rank_table(const Trace& trace, const Summaries& summaries, JsonWriter& out);

}  // namespace profagent::exporters
