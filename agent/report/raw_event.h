// One trace event as read from the file, before it becomes a record of the Trace model: only
// the fields the model has a place for. Views point into the parser's buffers and live as long
// as the batch being read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "exporters/chrome_trace.h"


namespace profagent::report {

struct RawArgs {
  bool has_external_id = false;
  uint64_t external_id = 0;
  uint64_t correlation = 0;
  std::string_view entry_point;   // profagent: the exported entry the call came through
  std::string_view kernel;        // profagent: a launch's kernel name
  bool has_error = false;
  int64_t cuda_error = 0;
  bool captured = false;
  uint64_t bytes = 0;             // "bytes" of calls and copies
  bool has_step = false;
  uint64_t step = 0;
  int64_t device = 0;
  int64_t context = 0;
  uint32_t stream = exporters::kNoStream;
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  uint64_t registers = 0;
  uint64_t shared_memory = 0;
  uint64_t queued = 0;            // Unix ns; 0 unknown
  uint64_t graph_id = 0;
  uint64_t graph_node_id = 0;
  std::string_view sync_kind;
  uint64_t event_id = 0;
  // [memory] instants
  bool has_address = false;
  uint64_t address = 0;
  int64_t memory_bytes = 0;
  int64_t total_allocated = 0;
  int64_t total_reserved = 0;
  int64_t device_id = -1;
  int64_t device_type = 0;        // torch's c10::DeviceType: 0 CPU, 1 CUDA
  std::string_view memory_kind;   // profagent: "device", "pool", ... ("" when not written)
  bool has_allocated_ts = false;  // profagent: a free of memory made in the window
  int64_t allocated_ts_ns = 0;
  int64_t memory_error = 0;       // profagent: a failed allocation call's error
  std::string_view call_site;     // profagent, with stacks: the call's call site
  // metadata events
  std::string_view label;         // args.name of process_name / thread_name
  // operators with record_shapes
  std::vector<std::vector<int64_t>> input_dims;
  std::vector<std::string> input_types;
};

struct RawEvent {
  char ph = 0;
  std::string_view cat;
  std::string_view name;
  bool has_name = false;
  std::string cat_storage;        // cat and name decoded from escapes (json_string.h)
  std::string name_storage;
  bool has_pid = false;
  bool has_tid = false;
  uint64_t pid = 0;               // a text pid ("Spans", "") reads as 0
  uint64_t tid = 0;
  bool has_ts = false;
  bool has_dur = false;
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  uint64_t id = 0;                // flow events: the flow id
  uint64_t sf = 0;                // "sf": the event's leaf in "stackFrames" (trace_stacks.h), 0 none
  RawArgs args;
};

}  // namespace profagent::report
