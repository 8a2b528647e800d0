// The correlation join (as Kineto links them: an `External id` arg naming the enclosing operator,
// and an `ac2g` flow from each launch to its kernel): host events and device records of one window
// become the Trace's HostRecords and DeviceRecords.
//
// Host side: ticks -> ns, names resolved, parent = innermost enclosing host record on the same
// thread by time containment (only Operator/Range/Step records enclose others), external_id =
// innermost enclosing Operator/Range/Step id, else the record's own id (an Operator/Range/Step
// is its own external id).
// Device side: EXTERNAL_CORRELATION links (CUPTI correlation id -> our pushed id) give the
// host record that issued each device record. A driver-level launch no hook saw (cuBLAS-style
// cuLaunchKernel) becomes a HostRecord flagged kFlagDriverApi when DRIVER records came; its
// device work links to it, with the External id of the Operator/Range around it. Without
// DRIVER records that work links to the Operator/Range itself.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "collector/clock.h"
#include "collector/device_backend.h"
#include "collector/flat_map.h"
#include "collector/thread_buffer.h"
#include "collector/trace.h"

namespace profagent::collector {

struct JoinInput {
  std::vector<ThreadEvents> threads;                 // the window's host events (raw ticks)
  std::vector<std::string> names;                    // by NameId
  std::unordered_map<const void*, std::string> kernel_names;  // host stub -> mangled name
  clock::TickConverter converter;
  std::vector<DeviceRecord> device;                  // from DeviceBatch::records
  // correlation -> external id; kept by the session across windows (links may arrive in an
  // earlier drain than their device records).
  const FlatMap<uint32_t, uint64_t>* links = nullptr;
  // Every link received since the last cut, also of calls without device work: they give each
  // recorded call its own CUPTI correlation id (trace `correlation` on every runtime event).
  std::vector<ExternalLink> call_links;
  // The notes of graph nodes made up to here are resolved by this join (collector/graph_captures.h).
  uint64_t window_end_ns = UINT64_MAX;
};

struct JoinCounts {
  uint64_t unmatched = 0;  // device records with no link at all: kept with host = -1
  uint64_t late = 0;       // linked to a host event that is not in this window: dropped
  // Stack tags whose call is not the record before them: a window cut fell between the call's
  // event and its tag (the call went to the previous window). That call has no stack.
  uint64_t orphan_stacks = 0;
  // Device records of CUDA graph replays whose node's capture is unknown (collector/graph_captures.h):
  // they keep their cudaGraphLaunch's External id.
  uint64_t graph_replays_without_capture = 0;
  // The host records that are CUDA calls (is_cuda_call), counted as they are made: the agent
  // prices CUPTI's work in them without another pass over a million records.
  uint64_t cuda_calls = 0;
};

// Fills trace.host (sorted by tid, start) and trace.device (sorted by start). A runtime call's
// correlation is the one its device records carry, else the smallest CUPTI correlation id
// linked to its id (the call itself: CUPTI numbers calls in entry order, and calls made inside
// it come later), else 0.
JoinCounts join(JoinInput&& input, Trace& trace);

}  // namespace profagent::collector
