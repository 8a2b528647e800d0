// The trace writer's state, shared by the files that write one part of the trace each
// (chrome_trace.h says where everything goes; trace_schema.h names every key):
//   chrome_trace.cpp           the order of the parts, top-level keys, the closing instant
//   chrome_trace_rows.cpp      deviceProperties, profagent_* objects, row names ('M' events)
//   chrome_trace_host.cpp      host events: calls, operators, ranges, steps
//   chrome_trace_device.cpp    device records: kernels, copies, sets, syncs, driver calls, and
//                              the gpu_user_annotation spans of scopes
//   chrome_trace_flows.cpp     the ac2g arrows from each launching call to its device work
//   memory_events.cpp          [memory] instants, memory counters, profagent_memory
//   chrome_trace_agent.cpp     profagent_overhead and the profagent track (the agent's work)
// Internal to exporters/: nothing outside includes it.
#pragma once

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collector/trace.h"
#include "exporters/chrome_trace.h"
#include "exporters/call_names.h"
#include "exporters/collective_args.h"
#include "exporters/json_writer.h"
#include "exporters/occupancy.h"
#include "exporters/stack_text.h"
#include "exporters/trace_links.h"
#include "exporters/trace_schema.h"
#include "exporters/torch_ops.h"
#include "exporters/trace_stack_frames.h"

namespace profagent::exporters::perfetto {
class TraceWalker;
}

namespace profagent::exporters::chrome {

// Which call a device record is drawn from, and the flow id of that arrow.
struct FlowStart {
  bool from_driver = false;  // index into Trace::device (a DriverApi record), else Trace::host
  uint64_t index = 0;
  uint64_t id = 0;
  bool operator<(const FlowStart& o) const {
    return std::tie(from_driver, index, id) < std::tie(o.from_driver, o.index, o.id);
  }
  bool operator==(const FlowStart& o) const {
    return from_driver == o.from_driver && index == o.index && id == o.id;
  }
};

// Small set of row keys; traces have few distinct threads and streams, so a linear scan
// with a last-hit shortcut beats a hash set on the per-event path.
class RowSet {
 public:
  void add(uint64_t a, uint64_t b) {
    if (!rows_.empty() && rows_[last_] == std::pair(a, b)) return;
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      if (rows_[i] == std::pair(a, b)) return void(last_ = i);
    }
    last_ = rows_.size();
    rows_.emplace_back(a, b);
  }
  std::vector<std::pair<uint64_t, uint64_t>> sorted() const {
    auto v = rows_;
    std::sort(v.begin(), v.end());
    return v;
  }

 private:
  std::vector<std::pair<uint64_t, uint64_t>> rows_;
  std::size_t last_ = 0;
};

// `,"pid":P,"tid":T` as text, kept for the last pair: consecutive events mostly share their
// row, and two numbers fewer per event is a tenth of the writer's work.
class RowText {
 public:
  std::string_view of(uint64_t pid, uint64_t tid) {
    if (size_ == 0 || pid != pid_ || tid != tid_) {
      pid_ = pid, tid_ = tid;
      char* p = text_;
      std::memcpy(p, ",\"pid\":", 7);
      p = write_u64(p + 7, pid);
      std::memcpy(p, ",\"tid\":", 7);
      p = write_u64(p + 7, tid);
      size_ = static_cast<std::size_t>(p - text_);
    }
    return {text_, size_};
  }

 private:
  uint64_t pid_ = 0, tid_ = 0;
  char text_[64];  // two 7-byte keys and two numbers of at most 20 digits
  std::size_t size_ = 0;
};

// A kernel's occupancy figures as written (floats formatted), for the launch shape of the last
// kernel asked about: kernels mostly repeat their shape, and formatting the floats and
// computing occupancy cost more than writing the rest of the event.
class OccupancyText {
 public:
  struct Text {
    Occupancy occupancy;
    char blocks_per_sm[32];
    std::size_t blocks_per_sm_size = 0;
    char warps_per_sm[32];
    std::size_t warps_per_sm_size = 0;
  };
  const Text& of(const DeviceInfo& info, const DeviceRecord& d) {
    const auto shape = std::make_tuple(&info, d.grid[0], d.grid[1], d.grid[2], d.block[0], d.block[1], d.block[2],
                                       d.registers_per_thread, d.shared_memory);
    if (!known_ || shape != shape_) {
      shape_ = shape;
      known_ = true;
      text_.occupancy = kernel_occupancy(info, d);
      text_.blocks_per_sm_size = std::size_t(write_real(text_.blocks_per_sm, text_.occupancy.blocks_per_sm) - text_.blocks_per_sm);
      text_.warps_per_sm_size = std::size_t(write_real(text_.warps_per_sm, text_.occupancy.warps_per_sm) - text_.warps_per_sm);
    }
    return text_;
  }

 private:
  bool known_ = false;
  std::tuple<const DeviceInfo*, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t, uint32_t, uint32_t> shape_;
  Text text_;
};

// The JSON string (quoted, escaped) of each distinct interned name, escaped once: a window has
// millions of events but few names.
class JsonNames {
 public:
  // nullptr for a name too long to keep a second copy of (a name can be megabytes): the caller
  // escapes it in place.
  const std::string* of(InternedName name) {
    if (name.size() > kLongest) return nullptr;
    const uint32_t id = name.id();
    if (id >= known_.size()) {
      known_.resize(id + 1, false);
      text_.resize(id + 1);
    }
    if (!known_[id]) {
      std::string& text = text_[id];
      text.resize(escaped_size_bound(name.size()));
      text.resize(std::size_t(write_json_string(text.data(), name) - text.data()));
      known_[id] = true;
    }
    return &text_[id];
  }

 private:
  static constexpr std::size_t kLongest = 4096;
  std::vector<std::string> text_;  // by InternedName::id()
  std::vector<bool> known_;
};

// "[x,y,z]" of a grid or block shape (as the JSON trace writes it), made again only when the shape
// differs from the last one: kernels mostly repeat their launch shape, and formatting six numbers
// per kernel was a tenth of a kernel's writing.
class TripleText {
 public:
  std::string_view of(const int32_t (&v)[3]) {
    if (size_ == 0 || !std::equal(v, v + 3, last_)) {
      std::copy(v, v + 3, last_);
      char* p = text_;
      *p++ = '[';
      for (int i = 0; i < 3; ++i) {
        if (i) *p++ = ',';
        if (v[i] < 0) *p++ = '-';
        p = write_u64(p, v[i] < 0 ? uint64_t(-int64_t(v[i])) : uint64_t(v[i]));
      }
      *p++ = ']';
      size_ = std::size_t(p - text_);
    }
    return {text_, size_};
  }

 private:
  int32_t last_[3] = {};
  char text_[3 * 12 + 4];
  std::size_t size_ = 0;
};

// Writes `"args":{...}` lazily: nothing at all when no key is added (Kineto omits empty args).
class Args {
 public:
  explicit Args(JsonWriter& w) : w_(w) {}
  JsonWriter& key(std::string_view k) {
    w_.raw(first_ ? ",\"args\":{\"" : ",\"");
    first_ = false;
    w_.raw(k);
    w_.raw("\":");
    return w_;
  }
  void close() {
    if (!first_) w_.raw("}");
  }

 private:
  JsonWriter& w_;
  bool first_ = true;
};

class ChromeTraceWriter {
 public:
  // The Perfetto writer draws the same trace from the same plan (rows, flows, links, stack
  // frames, the top-level metadata): it reads the members below rather than planning again.
  friend class perfetto::TraceWalker;
  // `fresh_ids_from`: where ids made up for calls without a CUPTI correlation start at least
  // (trace_links.h); 0: above every id in `t`.
  ChromeTraceWriter(const Trace& t, JsonWriter& w, uint32_t fresh_ids_from = 0)
      : t_(t), w_(w), links_(t, fresh_ids_from), base_(base_time_ns(t, links_.earliest_record_ns())), stack_frames_(t),
        collectives_(t),
        fwdbwd_(link_forward_backward(t)) {}
  void write(std::string_view trace_name);
  // Only the top-level object around the events (`"traceEvents": []`): what a Perfetto trace
  // keeps as its metadata (perfetto_schema.h), with `extra_keys` as write_tail's.
  void write_metadata_only(std::string_view trace_name, std::string_view extra_keys = {});
  uint64_t events() const { return events_; }

  // write() in its three parts, for a trace written an interval at a time (partial_trace.h):
  // the head once, then each interval's events by a writer of that interval's Trace, and a
  // tail (row names, the closing instant, `extra_keys` as raw `"key": value,\n` text) after.
  // `with_window_keys` false: without the keys only known at the window's end (drops, memory,
  // the window's bounds, CPU times, the agent's cost): a trace that cannot be written over
  // (a streamed json.gz) has them in its closing part, by write_window_keys().
  void write_head(bool with_window_keys = true);
  void write_window_keys();  // each key as `  "key": value,\n`
  void write_events();
  void write_tail(std::string_view trace_name, std::string_view extra_keys = {});
  void set_base(uint64_t base) { base_ = base; }  // ts relative to the trace being continued
  uint64_t base() const { return base_; }
  uint64_t next_fresh_id() const { return links_.next_fresh_id(); }
  // The rows the events written so far used (the tail names them).
  RowSet& host_rows() { return host_rows_; }
  RowSet& device_rows() { return device_rows_; }

 private:
  // chrome_trace.cpp
  uint64_t rel(uint64_t ns) const {  // inline: two per event
    const int64_t unix_ns = static_cast<int64_t>(ns) + t_.unix_offset_ns;
    return unix_ns <= static_cast<int64_t>(base_) ? 0 : static_cast<uint64_t>(unix_ns) - base_;
  }
  uint64_t unix_ns(uint64_t ns) const;  // agent clock -> Unix ns, 0 before the epoch
  uint64_t host_pid(uint32_t pid) const { return pid ? pid : t_.process.pid; }
  uint64_t host_tid(uint32_t tid) const { return tid ? tid : t_.process.pid; }
  void header(bool with_window_keys = true);
  void begin_x(std::string_view cat, std::string_view name, uint64_t pid, uint64_t tid, uint64_t start,
               uint64_t end);
  // The same for a record's interned name, escaped once per distinct name (JsonNames).
  void begin_x(std::string_view cat, InternedName name, uint64_t pid, uint64_t tid, uint64_t start,
               uint64_t end);
  void open_x(std::string_view cat);
  // A record's interned name as a JSON string, escaped once per distinct name (JsonNames).
  void name_string(InternedName name);
  void x_times(uint64_t pid, uint64_t tid, uint64_t start, uint64_t end);
  void stack_frame_id(uint64_t sf) {
    if (sf == 0) return;
    w_.raw(",\"sf\":");
    w_.u64(sf);
  }
  void end_event() {
    w_.raw("},\n");
    ++events_;
  }
  void window_end();
  // stackFrames, `extra_keys` (the partial trace's own object), traceName, the closing brace
  void top_level_end(std::string_view trace_name, std::string_view extra_keys = {});

  // chrome_trace_rows.cpp
  void device_properties();
  void device_property(const DeviceInfo& d);
  void metadata_keys(bool with_window_keys);
  void window_key();
  void cpu_times();
  void cpu_times_object(const CpuTimes& c);
  void row_metadata();
  void host_row_metadata();
  void device_row_metadata();
  void metadata_event(std::string_view what, uint64_t pid, uint64_t tid, std::string_view key,
                      std::string_view text, int64_t number);

  // chrome_trace_host.cpp
  void host_events();
  void host_event(std::size_t index);
  // `call`: what the record's name means as a call (CallNames), for runtime and driver calls.
  void host_args(const HostRecord& h, const CallName& call);
  void host_args(const HostRecord& scope) { host_args(scope, CallName{}); }
  void shape_args(const HostRecord& h, Args& a);
  void step_events();
  // NVTX marks and start/end ranges, torch's forward->backward links (chrome_trace_nvtx.cpp).
  void nvtx_mark(const HostRecord& h, uint64_t pid, uint64_t tid);
  void nvtx_start_end(const HostRecord& h, uint64_t pid, uint64_t tid);
  void fwdbwd_flow(std::size_t index, uint64_t pid, uint64_t tid);

  // chrome_trace_device.cpp
  void gpu_annotations();
  void device_events();
  void device_event(const DeviceRecord& d, std::size_t index);
  void gpu_args(const DeviceRecord& d, Args& a);
  void kernel_args(const DeviceRecord& d, Args& a);
  void graph_args(const DeviceRecord& d, Args& a);
  void sync_args(const DeviceRecord& d, Args& a);
  const DeviceInfo* device_info(uint32_t id) const;
  void driver_event(const DeviceRecord& d);

  // chrome_trace_agent.cpp
  void agent_cost_key();
  void agent_events();
  void agent_row_metadata();
  static constexpr uint64_t kAgentTrackSortIndex = kGpuSortIndexOffset * 2;  // after every GPU

  // chrome_trace_flows.cpp
  void plan_flows();
  uint64_t flow_id(const DeviceRecord& d, const FlowStart& from) const;
  bool launcher_of(const DeviceRecord& d, FlowStart* from) const;
  void flow_starts(bool from_driver, std::size_t index, uint64_t pid, uint64_t tid, uint64_t ts);
  void flow_start(uint64_t id, uint64_t pid, uint64_t tid, uint64_t ts);
  void flow_end(std::size_t index);  // of the device record at `index`

  const Trace& t_;
  JsonWriter& w_;
  TraceLinks links_;  // before base_: it finds the earliest record on its way
  uint64_t base_;
  CallNames call_names_;  // what each distinct call name means, found once
  CallSites call_sites_{t_};  // each distinct stack's call site, rendered once
  TraceStackFrames stack_frames_;
  CollectiveLookup collectives_;  // NCCL calls' communication args, by operator id
  ForwardBackward fwdbwd_;  // torch operators from NVTX: backward functions linked to forward ops
  uint64_t events_ = 0;
  std::unordered_map<uint64_t, uint64_t> fallback_flow_;  // flow ids of launchers without one
  std::unordered_map<uint32_t, std::size_t> driver_by_correlation_;
  std::vector<uint64_t> host_flow_;    // flow id started by each host record, 0 if none
  std::vector<uint64_t> driver_flow_;  // the same per device record (driver records only)
  std::vector<FlowStart> extra_flows_;  // second and later ids of one call, sorted
  std::vector<uint64_t> record_flow_;   // the id of each device record's arrow, 0 if none
  RowSet host_rows_;    // (pid, tid)
  RowSet device_rows_;  // (device, tid)
  RowSet agent_rows_;   // (profagent track pid, tid)
  RowText row_text_;
  JsonNames json_names_;
  OccupancyText occupancy_text_;
  TripleText grid_text_, block_text_;
  uint64_t last_ns_ = 0;
  std::size_t current_host_ = 0;  // the host record host_args() writes
};

// A step's name: its record's, or ProfilerStep#N when it has none.
std::string step_name(const HostRecord& step);
// Whether the trace's steps are drawn from Trace::steps: it has steps and no Step host record
// (the collector only knew them as spans). Looks at the host records only when there are steps.
bool draws_step_spans(const Trace& t);

// The row (tid) a device record is drawn on, under its device's pid (chrome_trace_device.cpp).
uint64_t device_tid(const DeviceRecord& d);
// The row of a stream's work (gpu_user_annotation spans; chrome_trace_device.cpp).
uint64_t stream_row_tid(uint32_t stream);
// A synchronisation on an event (it names the event it waits for).
bool waits_for_event(const DeviceRecord& d);
// A CUDA call, not an operator, range or step (inline: both writers ask for every host record).
inline bool is_runtime_call(EventKind k) {
  return k != EventKind::Operator && k != EventKind::Range && k != EventKind::Step;
}
// Driver calls no hook saw reach the trace as host records flagged kFlagDriverApi (the
// collector's join), or named by their driver function (CUPTI callbacks); they are Kineto's
// `cuda_driver` events.
inline bool is_driver_call(const HostRecord& h, const CallName& call) {
  return h.flags & kFlagDriverApi || call.driver_function;
}
// cuda_runtime / cuda_driver / cpu_op / user_annotation.
inline std::string_view host_event_category(const HostRecord& h, const CallName& call) {
  if (h.kind == EventKind::Operator) return schema::cat::kCpuOp;
  if (h.kind == EventKind::Range || h.kind == EventKind::Step) return schema::cat::kUserAnnotation;
  return is_driver_call(h, call) ? schema::cat::kCudaDriver : schema::cat::kCudaRuntime;
}
// Row names (thread_name of the row's 'M' events; chrome_trace_rows.cpp).
std::string host_row_name(const Trace& t, uint64_t tid);
std::string device_row_name(const Trace& t, uint64_t device, uint64_t tid);

}  // namespace profagent::exporters::chrome
