#include "exporters/perfetto_trace.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <utility>
#include <vector>

#include "exporters/annotation_args.h"

#include "exporters/call_names.h"
#include "exporters/chrome_trace_writer.h"
#include "exporters/cupti_cbids.h"
#include "exporters/memory_events.h"
#include "exporters/perfetto_packets.h"
#include "exporters/perfetto_schema.h"
#include "exporters/stack_text.h"
#include "exporters/trace_schema.h"

namespace profagent::exporters::perfetto {

namespace arg = schema::arg;

// Walks the window as the Chrome writer does, with its plan (friend of ChromeTraceWriter), and
// hands every event to the PacketWriter.
class TraceWalker {
 public:
  // `fresh_ids_from` as ChromeTraceWriter's (a streamed window's segments continue each other's).
  TraceWalker(const Trace& t, PacketWriter& packets, uint32_t fresh_ids_from = 0)
      : t_(t), metadata_stream_(metadata_), metadata_writer_(metadata_stream_, 1 << 16),
        plan_(t, metadata_writer_, fresh_ids_from), packets_(packets) {}

  bool write(std::string_view trace_name, PerfettoFigures* figures) {
    plan(trace_name, {}, nullptr);
    packets_.metadata(kMetadataName, metadata_);
    events();
    window_end(std::max(t_.end_ns, last_ns_));
    const bool ok = packets_.finish();
    if (figures) figures->events = events_, figures->bytes = packets_.bytes_written();
    return ok;
  }

  // The top-level metadata (what plan_flows() needs too: nothing else is written), then the
  // flows. `base`: the Unix ns times are relative to (a streamed window's first segment's).
  void plan(std::string_view trace_name, std::string_view extra_keys, const uint64_t* base) {
    if (base) plan_.set_base(*base);
    plan_.write_metadata_only(trace_name, extra_keys);
    metadata_writer_.flush();
    plan_.plan_flows();
  }
  const std::string& metadata() const { return metadata_; }
  uint64_t base() const { return plan_.base_; }
  uint64_t next_fresh_id() const { return plan_.next_fresh_id(); }

  void events() {
    host_events();
    step_events();
    device_events();
    gpu_annotations();
    memory_events();
    agent_events();
  }

  // The closing instant, on the process's main row, where the JSON trace has it.
  void window_end(uint64_t end) {
    const uint64_t pid = t_.process.pid;
    packets_.instant(host_row(pid, pid), kNoCategory, schema::name::kWindowEnd, unix_ts(end), EventArgs{});
    ++events_;
  }

 private:
  uint64_t unix_ts(uint64_t ns) const { return plan_.base_ + plan_.rel(ns); }

  static RowNames host_names(const void* self, uint64_t pid, uint64_t tid) {
    const Trace& t = static_cast<const TraceWalker*>(self)->t_;
    return {t.process.exe_name, "CPU", chrome::host_row_name(t, tid)};
  }
  static RowNames device_names(const void* self, uint64_t device, uint64_t tid) {
    const Trace& t = static_cast<const TraceWalker*>(self)->t_;
    const std::string gpu = "GPU " + std::to_string(device);
    return {gpu, gpu, chrome::device_row_name(t, device, tid)};
  }
  static RowNames agent_names(const void* self, uint64_t, uint64_t tid) {
    const Trace& t = static_cast<const TraceWalker*>(self)->t_;
    const std::string agent(schema::kAgentTrackName);
    return {agent, agent, chrome::host_row_name(t, tid)};
  }
  uint32_t host_row(uint64_t pid, uint64_t tid) { return packets_.row(pid, tid, host_names, this); }
  uint32_t device_row(uint64_t device, uint64_t tid) { return packets_.row(device, tid, device_names, this); }

  // The ac2g flows a launching call (host record or CUPTI driver record) starts: the test inline
  // (most calls start none), the flows in flows_from().
  void flow_starts(bool from_driver, std::size_t index, EventFlows& flows) {
    const std::vector<uint64_t>& ids = from_driver ? plan_.driver_flow_ : plan_.host_flow_;
    const uint64_t id = index < ids.size() ? ids[index] : 0;
    if (id != 0) flows_from(id, from_driver, index, flows);
  }
  void flows_from(uint64_t id, bool from_driver, std::size_t index, EventFlows& flows) {
    flows.start(id);
    const chrome::FlowStart key{from_driver, index, 0};
    for (auto it = std::lower_bound(plan_.extra_flows_.begin(), plan_.extra_flows_.end(), key);
         it != plan_.extra_flows_.end() && it->from_driver == from_driver && it->index == index; ++it) {
      flows.start(it->id);
    }
  }

  // torch's forward -> backward link of host record `index`, if it has one.
  void fwdbwd_flow(std::size_t index, EventFlows& flows) {
    if (index >= plan_.fwdbwd_.flow.size() || plan_.fwdbwd_.flow[index] == 0) return;
    const uint64_t id = plan_.fwdbwd_.flow[index] | kFwdBwdFlowBit;
    plan_.fwdbwd_.flow_starts[index] ? flows.start(id) : flows.end(id);
  }

  void slice(uint32_t row, std::string_view cat, std::string_view name, uint64_t start, uint64_t end,
             const EventArgs& args, const EventFlows& flows) {
    slice(row, cat, packets_.string_id(name), start, end, args, flows);
  }
  // `name`: a string id of the packet writer (a record's interned name: name_id()).
  void slice(uint32_t row, std::string_view cat, uint32_t name, uint64_t start, uint64_t end, const EventArgs& args,
             const EventFlows& flows) {
    packets_.slice(row, cat, name, unix_ts(start), unix_ts(end > start ? end : start), args, flows);
    events_ += 1 + flows.start_count + flows.end_count;
    last_ns_ = std::max(last_ns_, end);
  }

  // The agent's own work on its process row, as the Chrome writer draws it (chrome_trace_agent.cpp):
  // slices that end after the window's last event do not move its closing instant.
  void agent_events() {
    const uint64_t pid = schema::agent_track_pid(t_.process.pid);
    const uint64_t window_last = last_ns_;
    for (const AgentSlice& s : t_.agent_cost.slices) {
      const uint64_t tid = plan_.host_tid(s.tid);
      slice(packets_.row(pid, tid, agent_names, this), schema::cat::kProfagent, s.name, s.start_ns, s.end_ns,
            EventArgs{}, EventFlows{});
    }
    last_ns_ = window_last;
  }

  void host_events() {
    std::string unnamed_step;
    const std::size_t count = t_.host.size();
    for (std::size_t i = 0; i < count; ++i) {
      const HostRecord& h = t_.host[i];
      const uint64_t pid = plan_.host_pid(h.pid), tid = plan_.host_tid(h.tid);
      const CallName& call = plan_.call_names_.of(h.name);  // what a call's name means, found once
      uint32_t name = 0;
      if (chrome::is_runtime_call(h.kind)) {
        name = packets_.name_id(call.api);
      } else if (h.kind == EventKind::Step && h.name.empty()) {
        name = packets_.string_id(unnamed_step = chrome::step_name(h));
      } else {
        name = packets_.name_id(h.name);
      }
      EventFlows flows;
      flow_starts(false, i, flows);
      fwdbwd_flow(i, flows);
      EventArgs args;
      host_args(i, h, call, flows, args);
      if (h.kind == EventKind::Range && (h.flags & kFlagRangeMark)) {
        packets_.instant(host_row(pid, tid), schema::cat::kUserAnnotation, h.name, unix_ts(h.start_ns), args);
        ++events_;
      } else if (h.kind == EventKind::Range && (h.flags & kFlagRangeStartEnd)) {
        packets_.slice(packets_.async_row(pid, host_names, this), schema::cat::kUserAnnotation, h.name,
                       unix_ts(h.start_ns), unix_ts(std::max(h.start_ns, h.end_ns)), args, EventFlows{});
        events_ += 2;  // 'b' and 'e'
        last_ns_ = std::max(last_ns_, h.end_ns);
      } else {
        slice(host_row(pid, tid), chrome::host_event_category(h, call), name, h.start_ns, h.end_ns, args, flows);
      }
    }
  }

  // What the report reads back (agent/report/raw_event.h); the correlation of a call is left
  // out when it is the id of the first flow the call starts (the reader takes it from there).
  void host_args(std::size_t index, const HostRecord& h, const CallName& call, const EventFlows& flows,
                 EventArgs& a) {
    const bool runtime = chrome::is_runtime_call(h.kind);
    // A call outside every scope has its own id as External id: a reader numbers it afresh.
    if (!runtime || h.external_id != h.id) a.u(arg::kExternalId, runtime ? h.external_id : h.id);
    if (runtime) {
      const uint64_t correlation = plan_.links_.call_correlation(index);
      if (flows.start_count == 0 || flows.starts[0] != correlation) a.u(arg::kCorrelation, correlation);
      if (call.entry_point) a.interned_name(arg::kEntryPoint, h.name);
    }
    if (runtime && (h.flags & kFlagFailed || h.result != 0)) a.i(arg::kCudaError, h.result);
    if (runtime && (h.flags & kFlagCaptured)) a.i(arg::kCaptured, 1);
    if (h.kind == EventKind::Memcpy || h.kind == EventKind::Memset || h.kind == EventKind::Alloc) a.u(arg::kBytes, h.arg0);
    if (h.kind == EventKind::Launch && !h.kernel_name.empty()) a.interned_name(arg::kKernel, h.kernel_name);
    if (h.kind == EventKind::Step) a.u(arg::kStep, h.arg0);
    if (const std::vector<uint32_t>* stack = stack_of(t_, h)) call_site_arg(*stack, a);
    if (const uint64_t sf = plan_.stack_frames_.sf_of(h)) a.u(kStackFrameArg, sf);
    // The rare args below are tested here and written out of line: inlined, they made every
    // call's frame heavier.
    if (const InputShapes* shapes = shapes_of(t_, h)) shape_args(*shapes, a);
    if (annotation_of(t_, h) != nullptr) annotation_args_of(index, a);
  }

  __attribute__((noinline)) void call_site_arg(const std::vector<uint32_t>& stack, EventArgs& a) {
    call_site_ = call_site(t_, stack);
    a.interned(arg::kCallSite, call_site_);
  }

  // NVTX's domain, category, colour and payload, torch's operator ids (annotation_args.h, the
  // JSON writer's own code): captured as JSON text, whole numbers kept as numbers, the rest as
  // the JSON text (is_json_text_arg). Only for a record with an annotation (host_args tests it).
  __attribute__((noinline)) void annotation_args_of(std::size_t index, EventArgs& a) {
    const HostRecord& h = t_.host[index];
    annotation_text_.clear();
    annotation_keys_.clear();
    StringStream text(annotation_text_);
    JsonWriter w(text, 1024);
    const uint32_t fwd_tid = index < plan_.fwdbwd_.fwd_tid.size() ? plan_.fwdbwd_.fwd_tid[index] : 0;
    annotation_args(t_, h, fwd_tid, [&](std::string_view key) -> JsonWriter& {
      annotation_keys_.emplace_back(key, w.bytes_written());
      return w;
    });
    w.flush();
    for (std::size_t i = 0; i < annotation_keys_.size(); ++i) {
      const auto& [key, at] = annotation_keys_[i];
      const std::size_t end = i + 1 < annotation_keys_.size() ? annotation_keys_[i + 1].second : annotation_text_.size();
      const std::string_view value = std::string_view(annotation_text_).substr(at, end - at);
      int64_t number = 0;
      const auto [last, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
      if (ec == std::errc{} && last == value.data() + value.size()) a.i(key, number);
      else a.interned(key, value);
    }
  }

  // PROFAGENT_RECORD_SHAPES: the JSON trace's arrays as their JSON text (is_json_text_arg).
  __attribute__((noinline)) void shape_args(const InputShapes& shapes, EventArgs& a) {
    if (!shapes.dims.empty()) {
      dims_text_ = "[";
      for (std::size_t i = 0; i < shapes.dims.size(); ++i) {
        dims_text_ += i ? ",[" : "[";
        for (std::size_t j = 0; j < shapes.dims[i].size(); ++j) {
          dims_text_ += (j ? "," : "") + std::to_string(shapes.dims[i][j]);
        }
        dims_text_ += "]";
      }
      a.interned(arg::kInputDims, dims_text_ += "]");
    }
    if (!shapes.types.empty()) {
      types_text_ = "[";
      for (std::size_t i = 0; i < shapes.types.size(); ++i) {
        if (i) types_text_ += ",";
        const std::size_t at = types_text_.size();
        types_text_.resize(at + escaped_size_bound(shapes.types[i].size()));
        types_text_.resize(std::size_t(write_json_string(types_text_.data() + at, shapes.types[i]) - types_text_.data()));
      }
      a.interned(arg::kInputType, types_text_ += "]");
    }
  }

  // Steps the collector only knows as spans, on the main thread's row (as the JSON trace).
  void step_events() {
    if (!chrome::draws_step_spans(t_)) return;
    const uint64_t pid = t_.process.pid;
    for (const StepSpan& s : t_.steps) {
      EventArgs args;
      args.u(arg::kStep, s.number);
      slice(host_row(pid, pid), schema::cat::kUserAnnotation, std::string(schema::name::kStepPrefix) + std::to_string(s.number),
            s.start_ns, s.end_ns, args, EventFlows{});
    }
  }

  void device_events() {
    for (std::size_t i = 0; i < t_.device.size(); ++i) {
      const DeviceRecord& d = t_.device[i];
      EventFlows flows;
      EventArgs args;
      if (d.kind == DeviceKind::DriverApi) {
        flow_starts(true, i, flows);
        if (d.external_id != 0) args.u(arg::kExternalId, d.external_id);
        if (flows.start_count == 0 || flows.starts[0] != d.correlation) args.u(arg::kCorrelation, d.correlation);
        const CallName& call = plan_.call_names_.of(d.name);
        if (call.entry_point) args.interned_name(arg::kEntryPoint, d.name);
        slice(host_row(plan_.host_pid(d.pid), plan_.host_tid(d.tid)), schema::cat::kCudaDriver,
              packets_.name_id(call.api), d.start_ns, d.end_ns, args, flows);
        continue;
      }
      chrome::FlowStart from;
      if (plan_.launcher_of(d, &from)) flows.end(from.id);
      device_args(d, flows, args);
      const uint32_t name = d.kind == DeviceKind::Sync && d.name.empty() ? packets_.string_id(schema::sync_name(d.sync_type))
                                                                        : packets_.name_id(d.name);
      slice(device_row(d.device, chrome::device_tid(d)), schema::device_category(d.kind), name, d.start_ns, d.end_ns,
            args, flows);
    }
  }

  // The device and stream are the row's (pid = device; tid: chrome_trace.h), except for a
  // synchronisation, whose row does not always tell its stream; the correlation is left out when
  // it is the id of the flow that ends here; zeros are left out.
  void device_args(const DeviceRecord& d, const EventFlows& flows, EventArgs& a) {
    // Left out when it is its launching call's: a reader takes it from the call it links.
    const bool launcher_has_it = d.host >= 0 && size_t(d.host) < t_.host.size() && t_.host[size_t(d.host)].external_id == d.external_id;
    if (d.external_id != 0 && !launcher_has_it) a.u(arg::kExternalId, d.external_id);
    if (flows.end_count == 0 || flows.ends[0] != d.correlation) a.u(arg::kCorrelation, d.correlation);
    if (d.context != 0) a.u(arg::kContext, d.context);
    if (d.kind == DeviceKind::Sync) {
      a.i(arg::kStream, d.stream == kNoStream ? -1 : int64_t(d.stream));
      a.interned(arg::kSyncKind, schema::sync_name(d.sync_type));
      if (chrome::waits_for_event(d)) a.u(arg::kWaitOnEventId, d.event_id);
    }
    if (d.kind == DeviceKind::Memcpy || d.kind == DeviceKind::Memset) a.u(arg::kBytes, d.bytes);
    if (d.kind == DeviceKind::Kernel) kernel_args(d, a);
    if (d.host >= 0 && size_t(d.host) < t_.host.size()) {
      if (const uint64_t sf = plan_.stack_frames_.sf_of(t_.host[size_t(d.host)])) a.u(kStackFrameArg, sf);
    }
  }

  void kernel_args(const DeviceRecord& d, EventArgs& a) {
    if (d.queued_ns) a.u(arg::kQueued, plan_.unix_ns(d.queued_ns));
    if (d.registers_per_thread) a.u(arg::kRegistersPerThread, d.registers_per_thread);
    if (d.shared_memory) a.u(arg::kSharedMemory, d.shared_memory);
    a.interned(arg::kGrid, grid_text_.of(d.grid));
    a.interned(arg::kBlock, block_text_.of(d.block));
    if (d.graph_id != 0) a.u(arg::kGraphId, d.graph_id);
    if (d.graph_node_id != 0) a.u(arg::kGraphNodeId, d.graph_node_id);
  }

  // Kineto's gpu_user_annotation spans of each scope on each stream it used.
  void gpu_annotations() {
    std::string unnamed_step;
    for (const DeviceSpan& span : plan_.links_.device_spans()) {
      const HostRecord& scope = t_.host[span.scope];
      std::string_view name = scope.name;
      if (scope.kind == EventKind::Step && name.empty()) name = unnamed_step = chrome::step_name(scope);
      EventArgs args;
      args.u(arg::kExternalId, scope.id);
      slice(device_row(span.device, chrome::stream_row_tid(span.stream)), schema::cat::kGpuUserAnnotation, name,
            span.start_ns, span.end_ns, args, EventFlows{});
    }
  }

  void memory_events() {
    if (!t_.memory.enabled) return;
    for (const MemoryTotals& totals : t_.memory.start) counter(totals.device, t_.start_ns, totals.allocated, totals.reserved);
    for (std::size_t i = 0; i < t_.memory.records.size(); ++i) memory_record(t_.memory.records[i]);
    for (const MemoryTotals& totals : t_.memory.end) counter(totals.device, t_.end_ns, totals.allocated, totals.reserved);
  }

  void memory_record(const MemoryRecord& r) {
    EventArgs a;
    a.i(arg::kTotalReserved, r.total_reserved);
    a.i(arg::kTotalAllocated, r.total_allocated);
    a.i(arg::kMemoryBytes, r.bytes);
    if (!r.failed || r.refused) a.u(arg::kAddress, r.address);
    a.i(arg::kDeviceId, r.device);
    a.i(arg::kDeviceType, r.device == kHostDevice ? schema::kTorchCpu : schema::kTorchCuda);
    a.interned(arg::kMemoryKind, memory_kind_name(r.kind));
    if (r.bytes < 0 && !r.failed && r.allocated_ns >= t_.start_ns && r.allocated_ns != 0) {
      a.u(arg::kAllocatedTs, unix_ts(r.allocated_ns));
    }
    if (r.failed) a.i(arg::kError, r.error);
    std::string site = memory_call_site(t_, r);
    if (!site.empty()) a.interned(arg::kCallSite, site);
    const uint64_t pid = t_.process.pid;
    packets_.instant(host_row(pid, r.tid != 0 ? r.tid : pid), schema::cat::kCpuInstant, memory_event_name(r),
                     unix_ts(r.ns), a);
    ++events_;
    if (!r.failed) counter(r.device, r.ns, r.total_allocated, r.total_reserved);
  }

  void counter(int32_t device, uint64_t ns, int64_t allocated, int64_t reserved) {
    packets_.counter(packets_.counter_row(memory_track_name(device)), unix_ts(ns), allocated, reserved);
    ++events_;
  }

  const Trace& t_;
  std::string metadata_;
  StringStream metadata_stream_;
  JsonWriter metadata_writer_;
  chrome::ChromeTraceWriter plan_;
  PacketWriter& packets_;
  uint64_t events_ = 0;
  uint64_t last_ns_ = 0;  // the latest slice end, as the JSON writer keeps it for the closing instant
  chrome::TripleText grid_text_, block_text_;  // one interned string per shape
  std::string call_site_, dims_text_, types_text_;  // texts an EventArgs points to
  std::string annotation_text_;
  std::vector<std::pair<std::string_view, uint64_t>> annotation_keys_;  // key, where its value starts
};

}  // namespace profagent::exporters::perfetto

namespace profagent::exporters {

bool write_perfetto_trace(const Trace& trace, std::string_view trace_name, OutputStream& out, PerfettoFigures* figures) {
  perfetto::PacketWriter packets(out);
  perfetto::TraceWalker walker(trace, packets);
  return walker.write(trace_name, figures);
}

namespace {

// The packet writer's stream: each segment's packets go where that segment is written.
class Redirect final : public OutputStream {
 public:
  bool write(const char* data, std::size_t size) override { return target_ != nullptr && target_->write(data, size); }
  std::string commit() override { return {}; }
  void to(OutputStream* target) { target_ = target; }

 private:
  OutputStream* target_ = nullptr;
};

}  // namespace

struct PerfettoSegments::State {
  Redirect out;
  perfetto::PacketWriter packets{out};
  uint64_t base = 0;
  bool started = false;
  bool ok = true;

  // What the packet writer writes goes to `to` (it writes whenever its buffer fills) ...
  void to(OutputStream& to) { out.to(&to); }
  // ... and everything it holds at the part's end; then it waits for the next part.
  bool flush() {
    ok = packets.finish() && ok;
    out.to(nullptr);
    return ok;
  }
};

PerfettoSegments::PerfettoSegments() : state_(std::make_unique<State>()) {}
PerfettoSegments::~PerfettoSegments() = default;

bool PerfettoSegments::write_segment(const Trace& segment, uint32_t fresh_ids_from, OutputStream& out,
                                     uint64_t* next_fresh_id) {
  State& s = *state_;
  s.to(out);
  perfetto::TraceWalker walker(segment, s.packets, fresh_ids_from);
  walker.plan({}, {}, s.started ? &s.base : nullptr);
  if (!s.started) {
    // A reader needs the metadata (baseTimeNanoseconds) first; the closing one replaces it.
    s.base = walker.base();
    s.started = true;
    s.packets.metadata(perfetto::kMetadataName, walker.metadata());
  }
  walker.events();
  if (next_fresh_id) *next_fresh_id = walker.next_fresh_id();
  return s.flush();  // every slice ended: the segment is whole on its own
}

bool PerfettoSegments::write_metadata(const Trace& t, std::string_view trace_name, std::string_view extra_keys,
                                      OutputStream& out) {
  State& s = *state_;
  s.to(out);
  perfetto::TraceWalker walker(t, s.packets);
  walker.plan(trace_name, extra_keys, s.started ? &s.base : nullptr);
  s.packets.metadata(perfetto::kMetadataName, walker.metadata());
  return s.flush();
}

bool PerfettoSegments::write_window_end(const Trace& t, OutputStream& out) {
  State& s = *state_;
  s.to(out);
  perfetto::TraceWalker walker(t, s.packets);
  if (s.started) walker.plan({}, {}, &s.base);
  walker.window_end(t.end_ns);
  return s.flush();
}

}  // namespace profagent::exporters
