// Device records on the device's rows (pid = device, tid = stream, chrome_trace.h): kernels,
// copies, sets and syncs with Kineto's args; CUPTI driver records of launches no hook saw on
// their host thread; and the gpu_user_annotation span of every scope that issued device work.
#include "exporters/chrome_trace_writer.h"
#include "exporters/cupti_cbids.h"
#include "exporters/occupancy.h"
#include "exporters/trace_schema.h"

#include <string>

namespace profagent::exporters::chrome {
namespace {

namespace arg = schema::arg;

bool has_stream(const DeviceRecord& d) { return d.stream != kNoStream; }

bool is_event_wait(const DeviceRecord& d) {
  return d.kind == DeviceKind::Sync &&
         (d.sync_type == schema::kSyncEventSynchronize || d.sync_type == schema::kSyncStreamWaitEvent);
}

uint64_t stream_tid(uint32_t stream) { return stream == 0 ? kStreamZeroTid : stream; }

// "stream" as Kineto writes it: -1 when CUPTI says no stream applies.
int64_t stream_arg(const DeviceRecord& d) { return has_stream(d) ? int64_t(d.stream) : -1; }

}  // namespace

uint64_t stream_row_tid(uint32_t stream) { return stream_tid(stream); }
bool waits_for_event(const DeviceRecord& d) { return is_event_wait(d); }

// As Kineto lays rows out: stream syncs on their stream's "(sync)" row, a sync without a stream
// (event, context synchronisation) on the device-wide row, everything else on its stream's row.
uint64_t device_tid(const DeviceRecord& d) {
  if (d.kind == DeviceKind::Sync && !has_stream(d)) return kDeviceRowTid;
  if (d.kind == DeviceKind::Sync && d.sync_type == schema::kSyncStreamSynchronize) {
    return d.stream + kSyncStreamTidOffset;
  }
  return stream_tid(d.stream);
}

// Kineto's gpu_user_annotation: each operator, range and step that issued device work, drawn on
// every stream row it used, from its first device start to its last device end.
void ChromeTraceWriter::gpu_annotations() {
  std::string unnamed_step;
  for (const DeviceSpan& span : links_.device_spans()) {
    const HostRecord& scope = t_.host[span.scope];
    std::string_view name = scope.name;
    if (scope.kind == EventKind::Step && name.empty()) name = unnamed_step = step_name(scope);
    const uint64_t tid = stream_tid(span.stream);
    device_rows_.add(span.device, tid);
    begin_x(schema::cat::kGpuUserAnnotation, name, span.device, tid, span.start_ns, span.end_ns);
    Args a(w_);
    a.key(arg::kExternalId).u64(scope.id);
    a.close();
    end_event();
  }
}

void ChromeTraceWriter::device_events() {
  for (std::size_t i = 0; i < t_.device.size(); ++i) {
    const DeviceRecord& d = t_.device[i];
    if (d.kind == DeviceKind::DriverApi) {
      driver_event(d);
      flow_starts(true, i, host_pid(d.pid), host_tid(d.tid), d.start_ns);
    } else {
      device_event(d, i);
    }
  }
}

void ChromeTraceWriter::driver_event(const DeviceRecord& d) {
  const uint64_t pid = host_pid(d.pid), tid = host_tid(d.tid);
  host_rows_.add(pid, tid);
  const CallName& call = call_names_.of(d.name);
  begin_x(schema::cat::kCudaDriver, call.api, pid, tid, d.start_ns, d.end_ns);
  Args a(w_);
  if (d.external_id != 0) a.key(arg::kExternalId).u64(d.external_id);
  if (d.cbid != 0) a.key(arg::kCbid).u64(d.cbid);
  a.key(arg::kCorrelation).u64(d.correlation);
  if (call.entry_point) a.key(arg::kEntryPoint), name_string(d.name);
  a.close();
  end_event();
}

void ChromeTraceWriter::device_event(const DeviceRecord& d, std::size_t index) {
  const uint64_t tid = device_tid(d);
  device_rows_.add(d.device, tid);
  if (d.kind == DeviceKind::Sync && d.name.empty()) {
    begin_x(schema::device_category(d.kind), schema::sync_name(d.sync_type), d.device, tid, d.start_ns, d.end_ns);
  } else {
    begin_x(schema::device_category(d.kind), d.name, d.device, tid, d.start_ns, d.end_ns);
  }
  Args a(w_);
  if (d.external_id != 0) a.key(arg::kExternalId).u64(d.external_id);
  gpu_args(d, a);
  // As Kineto copies them onto NCCL kernels: the kernel names its collective on every rank.
  if (const CollectiveArgs* c = collectives_.by_id(d.external_id)) {
    write_collective_args(*c, [&a](std::string_view k) -> JsonWriter& { return a.key(k); });
  }
  a.close();
  // The stack of the call that issued the work: clicking a kernel shows the line that launched it.
  if (d.host >= 0 && size_t(d.host) < t_.host.size()) stack_frame_id(stack_frames_.sf_of(t_.host[d.host]));
  end_event();
  flow_end(index);
}

// GPU args in Kineto's order; stream and correlation always, so HTA sees a GPU event.
void ChromeTraceWriter::gpu_args(const DeviceRecord& d, Args& a) {
  if (d.kind == DeviceKind::Kernel) return kernel_args(d, a);
  if (d.kind == DeviceKind::Sync) return sync_args(d, a);
  a.key(arg::kDevice).u64(d.device);
  a.key(arg::kContext).u64(d.context);
  a.key(arg::kStream).i64(stream_arg(d));
  a.key(arg::kCorrelation).u64(d.correlation);
  if (d.kind == DeviceKind::Memcpy || d.kind == DeviceKind::Memset) {
    a.key(arg::kBytes).u64(d.bytes);
    const uint64_t dur = d.end_ns > d.start_ns ? d.end_ns - d.start_ns : 0;
    // bytes per ns is GB/s.
    a.key(arg::kBandwidth).fixed3(dur ? static_cast<double>(d.bytes) / dur : 0.0);
  }
  graph_args(d, a);
}

// A graph replay's work names its graph and node, as CUPTI's records do (0: not from a graph).
void ChromeTraceWriter::graph_args(const DeviceRecord& d, Args& a) {
  if (d.graph_id != 0) a.key(arg::kGraphId).u64(d.graph_id);
  if (d.graph_node_id != 0) a.key(arg::kGraphNodeId).u64(d.graph_node_id);
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
  a.key(arg::kQueued).u64(d.queued_ns ? unix_ns(d.queued_ns) : 0);
  a.key(arg::kDevice).u64(d.device);
  a.key(arg::kContext).u64(d.context);
  a.key(arg::kStream).i64(stream_arg(d));
  a.key(arg::kCorrelation).u64(d.correlation);
  a.key(arg::kRegistersPerThread).u64(d.registers_per_thread);
  a.key(arg::kSharedMemory).u64(d.shared_memory);
  const DeviceInfo* info = device_info(d.device);
  const OccupancyText::Text* text = info ? &occupancy_text_.of(*info, d) : nullptr;
  const Occupancy occupancy = text ? text->occupancy : Occupancy{};
  if (info && info->num_sms > 0) {
    a.key(arg::kBlocksPerSm).raw(std::string_view(text->blocks_per_sm, text->blocks_per_sm_size));
    a.key(arg::kWarpsPerSm).raw(std::string_view(text->warps_per_sm, text->warps_per_sm_size));
  }
  a.key(arg::kGrid).raw(grid_text_.of(d.grid));
  a.key(arg::kBlock).raw(block_text_.of(d.block));
  if (info) a.key(arg::kOccupancy).i64(occupancy.achieved_percent());
  graph_args(d, a);
}

// Event waits name what they wait for as Kineto does (-1 when unknown), which HTA's critical
// path joins to the cudaEventRecord call by correlation.
void ChromeTraceWriter::sync_args(const DeviceRecord& d, Args& a) {
  a.key(arg::kSyncKind).string(schema::sync_name(d.sync_type));
  if (is_event_wait(d)) {
    const EventWait wait = links_.event_wait(d);
    a.key(arg::kWaitOnStream).i64(wait.stream);
    a.key(arg::kWaitOnRecordCorrelation).i64(wait.record_correlation);
    a.key(arg::kWaitOnEventId).u64(d.event_id);
  }
  a.key(arg::kStream).i64(stream_arg(d));
  a.key(arg::kCorrelation).u64(d.correlation);
  a.key(arg::kDevice).u64(d.device);
  a.key(arg::kContext).u64(d.context);
}

}  // namespace profagent::exporters::chrome
