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
// A streamed window's table (rank_table_fold.h) may have "distributed":null and
// "distributed_not_computed":"why" instead (a window without steps); its rows come segment by
// segment (each segment's by kernel start), so they are in time order only within a segment:
// readers key them by communicator hash and sequence number.
#pragma once

#include <string_view>

#include "collector/trace.h"
#include "exporters/json_writer.h"
#include "exporters/summaries/summaries.h"

namespace profagent::exporters {

// Written for a window with NCCL collectives or of a job of more than one rank.
bool wants_rank_table(const Trace& trace);
// `summaries`: the window's, when they hold the Distributed Summary (else it is computed here).
bool write_rank_table(const Trace& trace, const Summaries& summaries, JsonWriter& out);

// The parts, for a table written from folds (rank_table_fold.h): the object's head (its process
// and window keys and the steps of `trace`), then the Distributed Summary's key from
// `distributed` (its rows) or, when `why_not` is not empty, null and that reason.
void write_rank_table_head(const Trace& trace, JsonWriter& out);
void write_rank_distributed(const Summaries& distributed, std::string_view why_not, JsonWriter& out);

// Each collective kernel of `part` (a window, or a segment of one), in its device records'
// order: `row(args, call, kernel)`, the kernel's call being the NCCL call or group that
// launched it. One definition of what a row is, for the whole window and the fold.
template <typename Row>
void for_each_collective_kernel(const Trace& part, Row row);

// One row's text: [comm_hash,seq,"name",bytes,enqueue,start,end] (Unix ns), with `first` no comma before it.
void write_collective_row(const CollectiveArgs& args, int64_t enqueue_unix_ns, int64_t start_unix_ns,
                          int64_t end_unix_ns, bool first, JsonWriter& out);

}  // namespace profagent::exporters

#include "exporters/rank_table_rows.h"
