#include "exporters/chrome_trace.h"
#include "exporters/memory_events.h"

#include "exporters/annotation_args.h"
#include "exporters/cupti_cbids.h"
#include "exporters/occupancy.h"
#include "exporters/stack_text.h"
#include "exporters/trace_links.h"
#include "exporters/torch_ops.h"
#include "exporters/trace_stack_frames.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <unordered_map>
#include <vector>

namespace profagent::exporters {
namespace {

bool is_runtime_kind(EventKind k) {
  return k != EventKind::Operator && k != EventKind::Range && k != EventKind::Step;
}

// Driver API functions are cu*, runtime ones cuda* (and nvcc's __cuda* launch entries).
bool is_driver_function(std::string_view name) {
  return name.substr(0, 2) == "cu" && name.substr(0, 4) != "cuda";
}

// Driver calls no hook saw reach the trace as host records flagged kFlagDriverApi (the
// collector's join), or named by their driver function (CUPTI callbacks); they are Kineto's
// `cuda_driver` events.
std::string_view host_category(const HostRecord& h) {
  if (h.kind == EventKind::Operator) return "cpu_op";
  if (h.kind == EventKind::Range || h.kind == EventKind::Step) return "user_annotation";
  return h.flags & kFlagDriverApi || is_driver_function(h.name) ? "cuda_driver" : "cuda_runtime";
}

uint32_t cbid_of(const HostRecord& h) {
  return h.flags & kFlagDriverApi || is_driver_function(h.name) ? driver_cbid(h.name) : runtime_cbid(h.name);
}

std::string_view device_category(DeviceKind k) {
  switch (k) {
    case DeviceKind::Kernel: return "kernel";
    case DeviceKind::Memcpy: return "gpu_memcpy";
    case DeviceKind::Memset: return "gpu_memset";
    case DeviceKind::Sync: return "cuda_sync";
    case DeviceKind::DriverApi: return "cuda_driver";
  }
  return "kernel";
}

// CUpti_ActivitySynchronizationType names as Kineto prints them.
std::string_view sync_name(uint32_t type) {
  switch (type) {
    case 1: return "Event Sync";
    case 2: return "Stream Wait Event";
    case 3: return "Stream Sync";
    case 4: return "Context Sync";
    default: return "Unknown Sync";
  }
}

constexpr uint32_t kSyncTypeEventSynchronize = 1;  // CUpti_ActivitySynchronizationType
constexpr uint32_t kSyncTypeStreamWaitEvent = 2;
constexpr uint32_t kSyncTypeStreamSynchronize = 3;

bool has_stream(const DeviceRecord& d) { return d.stream != kNoStream; }

bool is_event_wait(const DeviceRecord& d) {
  return d.kind == DeviceKind::Sync &&
         (d.sync_type == kSyncTypeEventSynchronize || d.sync_type == kSyncTypeStreamWaitEvent);
}

uint64_t stream_tid(uint32_t stream) { return stream == 0 ? kStreamZeroTid : stream; }

// As Kineto lays rows out: stream syncs on their stream's "(sync)" row, a sync without a stream
// (event, context synchronisation) on the device-wide row, everything else on its stream's row.
uint64_t device_tid(const DeviceRecord& d) {
  if (d.kind == DeviceKind::Sync && !has_stream(d)) return kDeviceRowTid;
  if (d.kind == DeviceKind::Sync && d.sync_type == kSyncTypeStreamSynchronize) {
    return d.stream + kSyncStreamTidOffset;
  }
  return stream_tid(d.stream);
}

// "stream" as Kineto writes it: -1 when CUPTI says no stream applies.
int64_t stream_arg(const DeviceRecord& d) { return has_stream(d) ? int64_t(d.stream) : -1; }

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
  ChromeTraceWriter(const Trace& t, JsonWriter& w)
      : t_(t), w_(w), base_(base_time_ns(t)), links_(t), stack_frames_(t), fwdbwd_(link_forward_backward(t)) {}
  void write(std::string_view trace_name);
  uint64_t events() const { return events_; }

 private:
  uint64_t rel(uint64_t ns) const;
  uint64_t host_pid(uint32_t pid) const { return pid ? pid : t_.process.pid; }
  uint64_t host_tid(uint32_t tid) const { return tid ? tid : t_.process.pid; }
  uint64_t flow_id(const DeviceRecord& d, const FlowStart& from) const;
  bool launcher_of(const DeviceRecord& d, FlowStart* from) const;

  void header();
  void device_properties();
  void device_property(const DeviceInfo& d);
  void metadata_keys();
  void cpu_times();
  void cpu_times_object(const CpuTimes& c);
  void plan_flows();
  void host_events();
  void host_event(std::size_t index);
  void host_args(const HostRecord& h);
  void step_events();
  void nvtx_mark(const HostRecord& h, uint64_t pid, uint64_t tid);
  void nvtx_start_end(const HostRecord& h, uint64_t pid, uint64_t tid);
  void fwdbwd_flow(std::size_t index, uint64_t pid, uint64_t tid);
  void gpu_annotations();
  void device_events();
  void device_event(const DeviceRecord& d);
  void gpu_args(const DeviceRecord& d, Args& a);
  void kernel_args(const DeviceRecord& d, Args& a);
  void sync_args(const DeviceRecord& d, Args& a);
  const DeviceInfo* device_info(uint32_t id) const;
  void driver_event(const DeviceRecord& d);
  void flow_starts(bool from_driver, std::size_t index, uint64_t pid, uint64_t tid, uint64_t ts);
  void flow_start(uint64_t id, uint64_t pid, uint64_t tid, uint64_t ts);
  void flow_end(const DeviceRecord& d);
  void row_metadata();
  void metadata_event(std::string_view what, uint64_t pid, uint64_t tid, std::string_view key,
                      std::string_view text, int64_t number);
  void window_end();
  void begin_x(std::string_view cat, std::string_view name, uint64_t pid, uint64_t tid,
               uint64_t start, uint64_t end);
  void stack_frame_id(uint64_t sf) {
    if (sf == 0) return;
    w_.raw(",\"sf\":");
    w_.u64(sf);
  }
  void end_event() {
    w_.raw("},\n");
    ++events_;
  }

  const Trace& t_;
  JsonWriter& w_;
  uint64_t base_;
  TraceLinks links_;
  TraceStackFrames stack_frames_;
  ForwardBackward fwdbwd_;  // torch operators from NVTX: backward ops linked to forward ones
  uint64_t events_ = 0;
  std::unordered_map<uint64_t, uint64_t> fallback_flow_;  // flow ids of launchers without one
  std::unordered_map<uint32_t, std::size_t> driver_by_correlation_;
  std::vector<uint64_t> host_flow_;    // flow id started by each host record, 0 if none
  std::vector<uint64_t> driver_flow_;  // the same per device record (driver records only)
  std::vector<FlowStart> extra_flows_;  // second and later ids of one call, sorted
  RowSet host_rows_;    // (pid, tid)
  RowSet device_rows_;  // (device, tid)
  RowText row_text_;
  uint64_t last_ns_ = 0;
  std::size_t current_host_ = 0;  // the host record host_args() writes
};

uint64_t ChromeTraceWriter::rel(uint64_t ns) const {
  const int64_t unix_ns = static_cast<int64_t>(ns) + t_.unix_offset_ns;
  return unix_ns <= static_cast<int64_t>(base_) ? 0 : static_cast<uint64_t>(unix_ns) - base_;
}

void ChromeTraceWriter::write(std::string_view trace_name) {
  plan_flows();
  header();
  w_.raw("  \"traceEvents\": [\n");
  host_events();
  step_events();
  gpu_annotations();
  device_events();
  events_ += write_memory_events(t_, w_, [this](uint64_t ns) { return rel(ns); });
  host_rows_.add(t_.process.pid, t_.process.pid);  // the row of "Record Window End"
  row_metadata();
  window_end();
  w_.raw("],\n");
  if (!stack_frames_.empty()) {
    stack_frames_.write(w_);
    w_.raw(",\n");
  }
  w_.raw("  \"traceName\": ");
  w_.string(trace_name);
  w_.raw("\n}\n");
}

void ChromeTraceWriter::header() {
  w_.raw("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [");
  device_properties();
  w_.raw("],\n");
  metadata_keys();
  w_.raw("  \"distributedInfo\": {\"backend\": \"unknown\", \"rank\": ");
  w_.i64(t_.process.rank);
  w_.raw(", \"world_size\": ");
  w_.i64(t_.process.world_size);
  w_.raw("},\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": ");
  w_.u64(base_);
  w_.raw(",\n");
}

void ChromeTraceWriter::device_properties() {
  for (std::size_t i = 0; i < t_.devices.size(); ++i) {
    w_.raw(i ? ",\n    " : "\n    ");
    device_property(t_.devices[i]);
  }
  if (!t_.devices.empty()) w_.raw("\n  ");
}

void ChromeTraceWriter::device_property(const DeviceInfo& d) {
  w_.raw("{\"id\":"), w_.u64(d.id);
  w_.raw(",\"name\":"), w_.string(d.name);
  w_.raw(",\"totalGlobalMem\":"), w_.u64(d.total_global_mem);
  w_.raw(",\"computeMajor\":"), w_.i64(d.compute_major);
  w_.raw(",\"computeMinor\":"), w_.i64(d.compute_minor);
  w_.raw(",\"maxThreadsPerBlock\":"), w_.i64(d.max_threads_per_block);
  w_.raw(",\"maxThreadsPerMultiprocessor\":"), w_.i64(d.max_threads_per_multiprocessor);
  w_.raw(",\"regsPerBlock\":"), w_.i64(d.regs_per_block);
  w_.raw(",\"warpSize\":"), w_.i64(d.warp_size);
  w_.raw(",\"sharedMemPerBlock\":"), w_.u64(d.shared_mem_per_block);
  w_.raw(",\"numSms\":"), w_.i64(d.num_sms);
  w_.raw(",\"regsPerMultiprocessor\":"), w_.i64(d.regs_per_multiprocessor);
  w_.raw(",\"sharedMemPerBlockOptin\":"), w_.u64(d.shared_mem_per_block_optin);
  w_.raw(",\"sharedMemPerMultiprocessor\":"), w_.u64(d.shared_mem_per_multiprocessor);
  w_.raw(",\"maxSharedMemoryPerMultiProcessor\":"), w_.u64(d.shared_mem_per_multiprocessor);
  w_.raw("}");
}

void ChromeTraceWriter::metadata_keys() {
  w_.raw("  \"profagent_config\": {");
  for (std::size_t i = 0; i < t_.config.size(); ++i) {
    if (i) w_.raw(",");
    w_.string(t_.config[i].first);
    w_.raw(":");
    w_.string(t_.config[i].second);
  }
  w_.raw("},\n  \"cupti_version\": "), w_.string(t_.cupti_version);
  w_.raw(",\n  \"cuda_runtime_version\": "), w_.i64(t_.cuda_runtime_version);
  w_.raw(",\n  \"cuda_driver_version\": "), w_.i64(t_.cuda_driver_version);
  w_.raw(",\n  \"host_name\": "), w_.string(t_.process.host_name);
  w_.raw(",\n  \"device_backend\": "), w_.string(t_.device_backend);
  w_.raw(",\n  \"profagent_drops\": {\"host_events\":"), w_.u64(t_.drops.host_events);
  w_.raw(",\"device_records\":"), w_.u64(t_.drops.device_records);
  w_.raw(",\"late_device_records\":"), w_.u64(t_.drops.late_device_records);
  w_.raw(",\"unmatched_device_records\":"), w_.u64(t_.drops.unmatched_device_records);
  w_.raw(",\"host_events_cause\":"), w_.string(host_drop_cause(t_.drops));
  w_.raw(",\"host_buffer_requested_bytes\":"), w_.u64(t_.drops.host_buffer_requested_bytes);
  w_.raw(",\"host_buffer_reserved_bytes\":"), w_.u64(t_.drops.host_buffer_reserved_bytes);
  w_.raw(",\"log_lines\":"), w_.u64(t_.drops.log_lines);
  w_.raw(",\"stderr_replaced\":"), w_.boolean(t_.drops.stderr_replaced);
  w_.raw(",\"plain_dlopen_calls\":"), w_.u64(t_.drops.plain_dlopen_calls);
  w_.raw(",\"shape_records\":"), w_.u64(t_.drops.shape_records);
  w_.raw(",\"stacks_truncated\":"), w_.u64(t_.drops.stacks_truncated);
  w_.raw(",\"stacks_lost\":"), w_.u64(t_.drops.stacks_lost);
  w_.raw(",\"python_frames_lost\":"), w_.u64(t_.drops.python_frames_lost);
  w_.raw(",\"timer_periods_missed\":"), w_.u64(t_.drops.timer_periods_missed);
  w_.raw(",\"memory_records\":"), w_.u64(t_.memory.dropped_records);
  w_.raw(",\"left_out_host_events\":"), w_.u64(t_.drops.left_out_host_events);
  w_.raw(",\"left_out_device_records\":"), w_.u64(t_.drops.left_out_device_records);
  w_.raw(",\"memory_room_bytes\":"), w_.u64(t_.drops.memory_room_bytes);
  w_.raw(",\"memory_needed_bytes\":"), w_.u64(t_.drops.memory_needed_bytes);
  w_.raw("},\n");
  write_memory_metadata(t_, w_);
  w_.raw("  \"profagent_window\": {\"window\":"), w_.u64(t_.window);
  w_.raw(",\"whole_run\":"), w_.boolean(t_.whole_run);
  w_.raw(",\"first_step\":"), w_.u64(t_.first_step.number);
  w_.raw(",\"last_step\":"), w_.u64(t_.last_step.number);
  w_.raw(",\"join_wait_ms\":"), w_.fixed3(double(t_.join_wait_ns) / 1e6);
  // The window's bounds in Unix ns (the clock of baseTimeNanoseconds + ts): summaries place
  // times relative to the window's start.
  w_.raw(",\"start_ns\":"), w_.u64(uint64_t(std::max<int64_t>(0, int64_t(t_.start_ns) + t_.unix_offset_ns)));
  w_.raw(",\"end_ns\":"), w_.u64(uint64_t(std::max<int64_t>(0, int64_t(t_.end_ns) + t_.unix_offset_ns)));
  w_.raw("},\n");
  cpu_times();
}

// "profagent_cpu_times": the window's /proc CPU times, only when both ends were read. `ns` is
// Unix ns, the clock of baseTimeNanoseconds + ts, so a reader places them as it places events.
void ChromeTraceWriter::cpu_times() {
  if (!t_.cpu_start.valid || !t_.cpu_end.valid) return;
  w_.raw("  \"profagent_cpu_times\": {\"start\":"), cpu_times_object(t_.cpu_start);
  w_.raw(",\"end\":"), cpu_times_object(t_.cpu_end);
  w_.raw("},\n");
}

void ChromeTraceWriter::cpu_times_object(const CpuTimes& c) {
  const int64_t unix_ns = static_cast<int64_t>(c.ns) + t_.unix_offset_ns;
  w_.raw("{\"ns\":"), w_.u64(unix_ns < 0 ? 0 : static_cast<uint64_t>(unix_ns));
  w_.raw(",\"process_ns\":"), w_.u64(c.process_ns);
  w_.raw(",\"system_busy_ns\":"), w_.u64(c.system_busy_ns);
  w_.raw(",\"system_idle_ns\":"), w_.u64(c.system_idle_ns);
  w_.raw(",\"cpus\":"), w_.u64(c.cpus);
  w_.raw("}");
}

// A device record is drawn from the CUPTI driver record with its correlation id when there
// is one (a library's cuLaunchKernel no hook saw), else from the host call that issued it.
bool ChromeTraceWriter::launcher_of(const DeviceRecord& d, FlowStart* from) const {
  if (d.kind == DeviceKind::DriverApi) return false;
  if (d.correlation != 0 && !driver_by_correlation_.empty()) {
    const auto it = driver_by_correlation_.find(d.correlation);
    if (it != driver_by_correlation_.end()) {
      *from = {true, it->second, 0};
      from->id = flow_id(d, *from);
      return true;
    }
  }
  if (d.host < 0 || static_cast<std::size_t>(d.host) >= t_.host.size()) return false;
  *from = {false, static_cast<uint64_t>(d.host), 0};
  from->id = flow_id(d, *from);
  return true;
}

uint64_t fallback_key(const FlowStart& from) { return uint64_t{from.from_driver} << 63 | from.index; }

// The device record's correlation, else its launching call's; else (work linked only to an
// operator) an id of the launcher's own, fresh so it stays within 32 bits and unique.
uint64_t ChromeTraceWriter::flow_id(const DeviceRecord& d, const FlowStart& from) const {
  if (d.correlation != 0) return d.correlation;
  if (!from.from_driver && links_.call_correlation(from.index) != 0) return links_.call_correlation(from.index);
  const auto it = fallback_flow_.find(fallback_key(from));
  return it == fallback_flow_.end() ? 0 : it->second;
}

// Flow ids per launching call, by index: no sort of a million-entry list. A call with more
// than one distinct id (an operator hosting several driver-level launches without driver
// records) keeps the others in the small sorted `extra_flows_`.
void ChromeTraceWriter::plan_flows() {
  for (std::size_t i = 0; i < t_.device.size(); ++i) {
    const DeviceRecord& d = t_.device[i];
    if (d.kind == DeviceKind::DriverApi && d.correlation != 0) {
      driver_by_correlation_.emplace(d.correlation, i);
    }
  }
  if (t_.device.empty()) return;  // no flows: no per-record table either
  host_flow_.assign(t_.host.size(), 0);
  driver_flow_.assign(t_.device.size(), 0);
  for (const DeviceRecord& d : t_.device) {
    FlowStart from;
    if (!launcher_of(d, &from)) continue;
    if (from.id == 0) {
      auto [it, inserted] = fallback_flow_.try_emplace(fallback_key(from), 0);
      if (inserted) it->second = links_.fresh_id();
      from.id = it->second;
    }
    uint64_t& slot = (from.from_driver ? driver_flow_ : host_flow_)[from.index];
    if (slot == 0) {
      slot = from.id;
    } else if (slot != from.id) {
      extra_flows_.push_back(from);
    }
  }
  std::sort(extra_flows_.begin(), extra_flows_.end());
  extra_flows_.erase(std::unique(extra_flows_.begin(), extra_flows_.end()), extra_flows_.end());
}

void ChromeTraceWriter::begin_x(std::string_view cat, std::string_view name, uint64_t pid,
                                uint64_t tid, uint64_t start, uint64_t end) {
  const uint64_t ts = rel(start);
  const uint64_t te = end > start ? rel(end) : ts;
  last_ns_ = std::max(last_ns_, end);
  w_.raw("{\"ph\":\"X\",\"cat\":\"");
  w_.raw(cat);
  w_.raw("\",\"name\":");
  w_.string(name);
  w_.raw(row_text_.of(pid, tid));
  w_.raw(",\"ts\":"), w_.us3(ts);
  w_.raw(",\"dur\":"), w_.us3(te - ts);
}

void ChromeTraceWriter::host_events() {
  for (std::size_t i = 0; i < t_.host.size(); ++i) host_event(i);
}

void ChromeTraceWriter::host_event(std::size_t index) {
  current_host_ = index;
  const HostRecord& h = t_.host[index];
  const uint64_t pid = host_pid(h.pid), tid = host_tid(h.tid);
  host_rows_.add(pid, tid);
  std::string step_name;
  std::string_view name = h.name;
  if (h.kind == EventKind::Step && name.empty()) {
    step_name = "ProfilerStep#" + std::to_string(h.arg0);
    name = step_name;
  }
  if (is_runtime_kind(h.kind)) name = api_name(name);
  if (h.kind == EventKind::Range && (h.flags & kFlagRangeMark)) return nvtx_mark(h, pid, tid);
  if (h.kind == EventKind::Range && (h.flags & kFlagRangeStartEnd)) return nvtx_start_end(h, pid, tid);
  begin_x(host_category(h), name, pid, tid, h.start_ns, h.end_ns);
  host_args(h);
  stack_frame_id(stack_frames_.sf_of(h));
  end_event();
  flow_starts(false, index, pid, tid, h.start_ns);
  fwdbwd_flow(index, pid, tid);
}

// An NVTX mark: an instant on its thread, as Kineto writes instant events.
void ChromeTraceWriter::nvtx_mark(const HostRecord& h, uint64_t pid, uint64_t tid) {
  w_.raw("{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"user_annotation\",\"name\":");
  w_.string(h.name);
  w_.raw(row_text_.of(pid, tid));
  w_.raw(",\"ts\":"), w_.us3(rel(h.start_ns));
  host_args(h);
  end_event();
}

// An NVTX start/end range: an async slice from the thread that started it to the one that
// ended it (a slice on one thread could not say both).
void ChromeTraceWriter::nvtx_start_end(const HostRecord& h, uint64_t pid, uint64_t tid) {
  const Annotation* a = annotation_of(t_, h);
  const uint64_t start_tid = a != nullptr && a->start_tid != 0 ? host_tid(a->start_tid) : tid;
  host_rows_.add(pid, start_tid);
  for (const bool begin : {true, false}) {
    w_.raw(begin ? "{\"ph\":\"b\"" : "{\"ph\":\"e\"");
    w_.raw(",\"cat\":\"user_annotation\",\"id\":"), w_.u64(h.id);
    w_.raw(",\"name\":"), w_.string(h.name);
    w_.raw(row_text_.of(pid, begin ? start_tid : tid));
    w_.raw(",\"ts\":"), w_.us3(rel(begin ? h.start_ns : h.end_ns));
    if (begin) host_args(h);
    end_event();
  }
  last_ns_ = std::max(last_ns_, h.end_ns);
}

// Kineto's fwdbwd flow: from a forward torch operator to the backward function autograd ran
// for it (exporters/torch_ops.h).
void ChromeTraceWriter::fwdbwd_flow(std::size_t index, uint64_t pid, uint64_t tid) {
  if (index >= fwdbwd_.flow.size() || fwdbwd_.flow[index] == 0) return;
  const HostRecord& h = t_.host[index];
  const bool start = fwdbwd_.flow_starts[index];
  w_.raw(start ? "{\"ph\":\"s\",\"id\":" : "{\"ph\":\"f\",\"id\":"), w_.u64(fwdbwd_.flow[index]);
  w_.raw(row_text_.of(pid, tid));
  w_.raw(",\"ts\":"), w_.us3(rel(h.start_ns));
  w_.raw(start ? ",\"cat\":\"fwdbwd\",\"name\":\"fwdbwd\"" : ",\"cat\":\"fwdbwd\",\"name\":\"fwdbwd\",\"bp\":\"e\"");
  end_event();
}

// cuda_runtime / cuda_driver: External id (of the enclosing op, or the call's own id), cbid,
// a correlation unique to the call, and what the call did; never `stream` (HTA classes events
// with a stream arg as GPU events).
void ChromeTraceWriter::host_args(const HostRecord& h) {
  Args a(w_);
  const bool runtime = is_runtime_kind(h.kind);
  a.key("External id").u64(runtime ? h.external_id : h.id);
  if (runtime) {
    a.key("cbid").u64(cbid_of(h));
    a.key("correlation").u64(links_.call_correlation(current_host_));
    if (api_name(h.name) != h.name) a.key("entry point").string(h.name);
  }
  if (runtime && (h.flags & kFlagFailed || h.result != 0)) a.key("cuda_error").i64(h.result);
  // Work issued to a stream being captured into a graph runs only when the graph is launched:
  // the call has no device record of its own, and the trace says why.
  if (runtime && (h.flags & kFlagCaptured)) a.key("captured").i64(1);
  if (h.kind == EventKind::Memcpy || h.kind == EventKind::Memset || h.kind == EventKind::Alloc) {
    a.key("bytes").u64(h.arg0);
  }
  if (h.kind == EventKind::Launch && !h.kernel_name.empty()) a.key("kernel").string(h.kernel_name);
  if (h.kind == EventKind::Step) a.key("step").u64(h.arg0);
  annotation_args(t_, h, current_host_ < fwdbwd_.fwd_tid.size() ? fwdbwd_.fwd_tid[current_host_] : 0,
                  [&a](std::string_view key) -> JsonWriter& { return a.key(key); });
  if (const std::vector<uint32_t>* stack = stack_of(t_, h)) a.key("Call site").string(call_site(t_, *stack));
  if (!h.input_dims.empty()) {
    a.key("Input Dims").raw("[");
    for (std::size_t i = 0; i < h.input_dims.size(); ++i) {
      w_.raw(i ? ",[" : "[");
      for (std::size_t j = 0; j < h.input_dims[i].size(); ++j) {
        if (j) w_.raw(",");
        w_.i64(h.input_dims[i][j]);
      }
      w_.raw("]");
    }
    w_.raw("]");
  }
  if (!h.input_types.empty()) {
    a.key("Input type").raw("[");
    for (std::size_t i = 0; i < h.input_types.size(); ++i) {
      if (i) w_.raw(",");
      w_.string(h.input_types[i]);
    }
    w_.raw("]");
  }
  a.close();
}

// Steps come as Step host records; when the collector only filled Trace::steps, they are
// drawn on the main thread's row so HTA still finds ProfilerStep#N (its iterations).
void ChromeTraceWriter::step_events() {
  for (const HostRecord& h : t_.host) {
    if (h.kind == EventKind::Step) return;
  }
  const uint64_t pid = t_.process.pid;
  for (const StepSpan& s : t_.steps) {
    host_rows_.add(pid, pid);
    begin_x("user_annotation", "ProfilerStep#" + std::to_string(s.number), pid, pid, s.start_ns,
            s.end_ns);
    Args a(w_);
    a.key("step").u64(s.number);
    a.close();
    end_event();
  }
}

void ChromeTraceWriter::flow_starts(bool from_driver, std::size_t index, uint64_t pid,
                                    uint64_t tid, uint64_t ts) {
  const std::vector<uint64_t>& flows = from_driver ? driver_flow_ : host_flow_;
  const uint64_t id = index < flows.size() ? flows[index] : 0;
  if (id == 0) return;
  flow_start(id, pid, tid, ts);
  if (extra_flows_.empty()) return;
  const FlowStart key{from_driver, index, 0};
  for (auto it = std::lower_bound(extra_flows_.begin(), extra_flows_.end(), key);
       it != extra_flows_.end() && it->from_driver == from_driver && it->index == index; ++it) {
    flow_start(it->id, pid, tid, ts);
  }
}

void ChromeTraceWriter::flow_start(uint64_t id, uint64_t pid, uint64_t tid, uint64_t ts) {
  w_.raw("{\"ph\":\"s\",\"id\":"), w_.u64(id);
  w_.raw(row_text_.of(pid, tid));
  w_.raw(",\"ts\":"), w_.us3(rel(ts));
  w_.raw(",\"cat\":\"ac2g\",\"name\":\"ac2g\"");
  end_event();
}

void ChromeTraceWriter::device_events() {
  for (std::size_t i = 0; i < t_.device.size(); ++i) {
    const DeviceRecord& d = t_.device[i];
    if (d.kind == DeviceKind::DriverApi) {
      driver_event(d);
      const uint64_t pid = host_pid(d.pid), tid = host_tid(d.tid);
      flow_starts(true, i, pid, tid, d.start_ns);
    } else {
      device_event(d);
    }
  }
}

void ChromeTraceWriter::driver_event(const DeviceRecord& d) {
  const uint64_t pid = host_pid(d.pid), tid = host_tid(d.tid);
  host_rows_.add(pid, tid);
  begin_x("cuda_driver", api_name(d.name), pid, tid, d.start_ns, d.end_ns);
  Args a(w_);
  if (d.external_id != 0) a.key("External id").u64(d.external_id);
  if (d.cbid != 0) a.key("cbid").u64(d.cbid);
  a.key("correlation").u64(d.correlation);
  if (api_name(d.name) != d.name) a.key("entry point").string(d.name);
  a.close();
  end_event();
}

void ChromeTraceWriter::device_event(const DeviceRecord& d) {
  const uint64_t tid = device_tid(d);
  device_rows_.add(d.device, tid);
  std::string_view name = d.name;
  if (d.kind == DeviceKind::Sync && name.empty()) name = sync_name(d.sync_type);
  begin_x(device_category(d.kind), name, d.device, tid, d.start_ns, d.end_ns);
  Args a(w_);
  if (d.external_id != 0) a.key("External id").u64(d.external_id);
  gpu_args(d, a);
  a.close();
  // The stack of the call that issued the work: clicking a kernel shows the line that launched it.
  if (d.host >= 0 && size_t(d.host) < t_.host.size()) stack_frame_id(stack_frames_.sf_of(t_.host[d.host]));
  end_event();
  flow_end(d);
}

// GPU args in Kineto's order; stream and correlation always, so HTA sees a GPU event.
void ChromeTraceWriter::gpu_args(const DeviceRecord& d, Args& a) {
  if (d.kind == DeviceKind::Kernel) return kernel_args(d, a);
  if (d.kind == DeviceKind::Sync) return sync_args(d, a);
  a.key("device").u64(d.device);
  a.key("context").u64(d.context);
  a.key("stream").i64(stream_arg(d));
  a.key("correlation").u64(d.correlation);
  if (d.kind == DeviceKind::Memcpy || d.kind == DeviceKind::Memset) {
    a.key("bytes").u64(d.bytes);
    const uint64_t dur = d.end_ns > d.start_ns ? d.end_ns - d.start_ns : 0;
    // bytes per ns is GB/s.
    a.key("memory bandwidth (GB/s)").fixed3(dur ? static_cast<double>(d.bytes) / dur : 0.0);
  }
}

const DeviceInfo* ChromeTraceWriter::device_info(uint32_t id) const {
  for (const DeviceInfo& info : t_.devices) {
    if (info.id == id) return &info;
  }
  return nullptr;
}

// `queued` is Kineto's raw CUPTI timestamp (Unix ns here), 0 when CUPTI did not give one. The
// occupancy figures need the device's properties; without them they are left out.
void ChromeTraceWriter::kernel_args(const DeviceRecord& d, Args& a) {
  const int64_t queued = d.queued_ns ? int64_t(d.queued_ns) + t_.unix_offset_ns : 0;
  a.key("queued").u64(queued > 0 ? uint64_t(queued) : 0);
  a.key("device").u64(d.device);
  a.key("context").u64(d.context);
  a.key("stream").i64(stream_arg(d));
  a.key("correlation").u64(d.correlation);
  a.key("registers per thread").u64(d.registers_per_thread);
  a.key("shared memory").u64(d.shared_memory);
  const DeviceInfo* info = device_info(d.device);
  const Occupancy occupancy = info ? kernel_occupancy(*info, d) : Occupancy{};
  if (info && info->num_sms > 0) {
    a.key("blocks per SM").real(occupancy.blocks_per_sm);
    a.key("warps per SM").real(occupancy.warps_per_sm);
  }
  a.key("grid").raw("["), w_.i64(d.grid[0]), w_.raw(","), w_.i64(d.grid[1]), w_.raw(",");
  w_.i64(d.grid[2]), w_.raw("]");
  a.key("block").raw("["), w_.i64(d.block[0]), w_.raw(","), w_.i64(d.block[1]), w_.raw(",");
  w_.i64(d.block[2]), w_.raw("]");
  if (info) a.key("est. achieved occupancy %").i64(occupancy.achieved_percent());
  if (d.graph_id != 0) a.key("graph id").u64(d.graph_id);
  if (d.graph_node_id != 0) a.key("graph node id").u64(d.graph_node_id);
}

// Event waits name what they wait for as Kineto does (-1 when unknown), which HTA's critical
// path joins to the cudaEventRecord call by correlation.
void ChromeTraceWriter::sync_args(const DeviceRecord& d, Args& a) {
  a.key("cuda_sync_kind").string(sync_name(d.sync_type));
  if (is_event_wait(d)) {
    const EventWait wait = links_.event_wait(d);
    a.key("wait_on_stream").i64(wait.stream);
    a.key("wait_on_cuda_event_record_corr_id").i64(wait.record_correlation);
    a.key("wait_on_cuda_event_id").u64(d.event_id);
  }
  a.key("stream").i64(stream_arg(d));
  a.key("correlation").u64(d.correlation);
  a.key("device").u64(d.device);
  a.key("context").u64(d.context);
}

// Kineto's gpu_user_annotation: each operator, range and step that issued device work, drawn on
// every stream row it used, from its first device start to its last device end.
void ChromeTraceWriter::gpu_annotations() {
  std::string step_name;
  for (const DeviceSpan& span : links_.device_spans()) {
    const HostRecord& scope = t_.host[span.scope];
    std::string_view name = scope.name;
    if (scope.kind == EventKind::Step && name.empty()) {
      step_name = "ProfilerStep#" + std::to_string(scope.arg0);
      name = step_name;
    }
    const uint64_t tid = stream_tid(span.stream);
    device_rows_.add(span.device, tid);
    begin_x("gpu_user_annotation", name, span.device, tid, span.start_ns, span.end_ns);
    Args a(w_);
    a.key("External id").u64(scope.id);
    a.close();
    end_event();
  }
}

void ChromeTraceWriter::flow_end(const DeviceRecord& d) {
  FlowStart from;
  if (!launcher_of(d, &from)) return;
  w_.raw("{\"ph\":\"f\",\"id\":"), w_.u64(from.id);
  w_.raw(row_text_.of(d.device, device_tid(d)));
  w_.raw(",\"ts\":"), w_.us3(rel(d.start_ns));
  w_.raw(",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"");
  end_event();
}

void ChromeTraceWriter::metadata_event(std::string_view what, uint64_t pid, uint64_t tid,
                                       std::string_view key, std::string_view text,
                                       int64_t number) {
  w_.raw("{\"ph\":\"M\",\"name\":\"");
  w_.raw(what);
  w_.raw("\",\"pid\":"), w_.u64(pid);
  w_.raw(",\"tid\":"), w_.u64(tid);
  w_.raw(",\"ts\":0.000,\"args\":{\"");
  w_.raw(key);
  w_.raw("\":");
  if (key == "sort_index") {
    w_.i64(number);
  } else {
    w_.string(text);
  }
  w_.raw("}");
  end_event();
}

void ChromeTraceWriter::row_metadata() {
  std::string thread_names;
  uint64_t last_pid = ~uint64_t{0};
  for (const auto& [pid, tid] : host_rows_.sorted()) {
    if (pid != last_pid) {
      last_pid = pid;
      metadata_event("process_name", pid, 0, "name", t_.process.exe_name, 0);
      metadata_event("process_labels", pid, 0, "labels", "CPU", 0);
      metadata_event("process_sort_index", pid, 0, "sort_index", {}, int64_t(pid));
    }
    std::string name = "thread " + std::to_string(tid);
    for (const auto& [known, native] : t_.process.thread_names) {
      if (known == tid && !native.empty()) name += " (" + native + ")";
    }
    metadata_event("thread_name", pid, tid, "name", name, 0);
    metadata_event("thread_sort_index", pid, tid, "sort_index", {}, int64_t(tid));
  }
  last_pid = ~uint64_t{0};
  for (const auto& [device, tid] : device_rows_.sorted()) {
    if (device != last_pid) {
      last_pid = device;
      const std::string gpu = "GPU " + std::to_string(device);
      metadata_event("process_name", device, 0, "name", gpu, 0);
      metadata_event("process_labels", device, 0, "labels", gpu, 0);
      metadata_event("process_sort_index", device, 0, "sort_index", {}, int64_t(device + kGpuSortIndexOffset));
    }
    if (tid == kDeviceRowTid) {  // Kineto's device-wide row (its resource id -1)
      metadata_event("thread_name", device, tid, "name", "Device " + std::to_string(device), 0);
      metadata_event("thread_sort_index", device, tid, "sort_index", {}, -1);
      continue;
    }
    const bool sync = tid >= kSyncStreamTidOffset && tid < kStreamZeroTid;
    const uint64_t stream = tid == kStreamZeroTid ? 0 : sync ? tid - kSyncStreamTidOffset : tid;
    std::string name = "stream " + std::to_string(stream);
    auto named = std::lower_bound(t_.stream_names.begin(), t_.stream_names.end(), std::pair<uint32_t, std::string>(uint32_t(stream), ""));
    if (named != t_.stream_names.end() && named->first == stream) name += " " + named->second;  // nvtxNameCudaStream
    if (sync) name += " (sync)";
    metadata_event("thread_name", device, tid, "name", name, 0);
    metadata_event("thread_sort_index", device, tid, "sort_index", {}, int64_t(stream));
  }
}

void ChromeTraceWriter::window_end() {
  const uint64_t end = std::max(t_.end_ns, last_ns_);
  w_.raw("{\"ph\":\"i\",\"s\":\"g\",\"name\":\"Record Window End\",\"pid\":");
  w_.u64(t_.process.pid);
  w_.raw(",\"tid\":"), w_.u64(t_.process.pid);
  w_.raw(",\"ts\":"), w_.us3(rel(end));
  w_.raw("}\n");
  ++events_;
}

}  // namespace

uint64_t base_time_ns(const Trace& t) {
  uint64_t first = t.start_ns ? t.start_ns : ~uint64_t{0};
  for (const HostRecord& h : t.host) first = std::min(first, h.start_ns);
  for (const DeviceRecord& d : t.device) first = std::min(first, d.start_ns);
  for (const StepSpan& s : t.steps) first = std::min(first, s.start_ns);
  if (first == ~uint64_t{0}) first = t.end_ns;
  const int64_t unix_ns = static_cast<int64_t>(first) + t.unix_offset_ns;
  if (unix_ns <= 0) return 0;
  return static_cast<uint64_t>(unix_ns) / kBaseTimeIntervalNs * kBaseTimeIntervalNs;
}

bool write_chrome_trace(const Trace& trace, std::string_view trace_name, JsonWriter& out,
                        uint64_t* events) {
  ChromeTraceWriter writer(trace, out);
  writer.write(trace_name);
  if (events) *events = writer.events();
  return out.flush();
}

}  // namespace profagent::exporters
