// The trace's metadata: deviceProperties, the profagent_* objects, and the 'M' events that name
// and order the rows.
#include "exporters/chrome_trace_writer.h"
#include "exporters/drop_counters.h"
#include "exporters/field_writer.h"
#include "exporters/memory_events.h"
#include "exporters/trace_schema.h"

#include <string>

namespace profagent::exporters::chrome {
namespace {

// `  "key": ` at the start of a top-level member's line.
void top_key(JsonWriter& w, std::string_view key) { w.raw("  \""), w.raw(key), w.raw("\": "); }

// `,"key":` inside a compact object.
void key(JsonWriter& w, std::string_view key) { w.raw(",\""), w.raw(key), w.raw("\":"); }

}  // namespace

void ChromeTraceWriter::device_properties() {
  for (std::size_t i = 0; i < t_.devices.size(); ++i) {
    w_.raw(i ? ",\n    " : "\n    ");
    device_property(t_.devices[i]);
  }
  if (!t_.devices.empty()) w_.raw("\n  ");
}

void ChromeTraceWriter::device_property(const DeviceInfo& d) {
  w_.raw("{\""), w_.raw(schema::device::kId), w_.raw("\":"), w_.u64(d.id);
  key(w_, schema::device::kName), w_.string(d.name);
  write_fields(std::span(schema::kDeviceFields), d, w_, true);
  w_.raw("}");
}

void ChromeTraceWriter::metadata_keys(bool with_window_keys) {
  top_key(w_, schema::kConfig), w_.raw("{");
  for (std::size_t i = 0; i < t_.config.size(); ++i) {
    if (i) w_.raw(",");
    w_.string(t_.config[i].first);
    w_.raw(":");
    w_.string(t_.config[i].second);
  }
  w_.raw("},\n"), top_key(w_, schema::kCuptiVersion), w_.string(t_.cupti_version);
  w_.raw(",\n"), top_key(w_, schema::kCudaRuntimeVersion), w_.i64(t_.cuda_runtime_version);
  w_.raw(",\n"), top_key(w_, schema::kCudaDriverVersion), w_.i64(t_.cuda_driver_version);
  w_.raw(",\n"), top_key(w_, schema::kHostName), w_.string(t_.process.host_name);
  w_.raw(",\n"), top_key(w_, schema::kDeviceBackend), w_.string(t_.device_backend);
  w_.raw(",\n");
  if (with_window_keys) write_window_keys();
}

void ChromeTraceWriter::write_window_keys() {
  top_key(w_, schema::kDrops), write_drop_counters(t_, w_);
  w_.raw(",\n");
  write_memory_metadata(t_, w_);
  window_key();
  cpu_times();
  agent_cost_key();
}

// The window's bounds in Unix ns (the clock of baseTimeNanoseconds + ts): summaries place
// times relative to the window's start.
void ChromeTraceWriter::window_key() {
  top_key(w_, schema::kWindow);
  w_.raw("{\""), w_.raw(schema::window::kWindow), w_.raw("\":"), w_.u64(t_.window);
  key(w_, schema::window::kWholeRun), w_.boolean(t_.whole_run);
  key(w_, schema::window::kFirstStep), w_.u64(t_.first_step.number);
  key(w_, schema::window::kLastStep), w_.u64(t_.last_step.number);
  key(w_, schema::window::kJoinWaitMs), w_.fixed3(double(t_.join_wait_ns) / 1e6);
  key(w_, schema::window::kStartNs), w_.u64(unix_ns(t_.start_ns));
  key(w_, schema::window::kEndNs), w_.u64(unix_ns(t_.end_ns));
  w_.raw("},\n");
}

// The window's /proc CPU times, only when both ends were read. `ns` is Unix ns, the clock of
// baseTimeNanoseconds + ts, so a reader places them as it places events.
void ChromeTraceWriter::cpu_times() {
  if (!t_.cpu_start.valid || !t_.cpu_end.valid) return;
  top_key(w_, schema::kCpuTimes);
  w_.raw("{\""), w_.raw(schema::cpu_times::kStart), w_.raw("\":"), cpu_times_object(t_.cpu_start);
  key(w_, schema::cpu_times::kEnd), cpu_times_object(t_.cpu_end);
  w_.raw("},\n");
}

void ChromeTraceWriter::cpu_times_object(const CpuTimes& c) {
  w_.raw("{\""), w_.raw(schema::cpu_times::kNs), w_.raw("\":"), w_.u64(unix_ns(c.ns));
  write_fields(std::span(schema::kCpuTimesFields), c, w_, true);
  w_.raw("}");
}

void ChromeTraceWriter::metadata_event(std::string_view what, uint64_t pid, uint64_t tid, std::string_view key,
                                       std::string_view text, int64_t number) {
  w_.raw("{\"ph\":\"M\",\"name\":\"");
  w_.raw(what);
  w_.raw("\",\"pid\":"), w_.u64(pid);
  w_.raw(",\"tid\":"), w_.u64(tid);
  w_.raw(",\"ts\":0.000,\"args\":{\"");
  w_.raw(key);
  w_.raw("\":");
  if (key == schema::arg::kSortIndex) {
    w_.i64(number);
  } else {
    w_.string(text);
  }
  w_.raw("}");
  end_event();
}

void ChromeTraceWriter::row_metadata() {
  host_row_metadata();
  device_row_metadata();
  agent_row_metadata();
}

// Host rows: the process (labelled CPU, ordered by pid) and its threads, named with their
// native names when known.
void ChromeTraceWriter::host_row_metadata() {
  namespace name = schema::name;
  namespace arg = schema::arg;
  uint64_t last_pid = ~uint64_t{0};
  for (const auto& [pid, tid] : host_rows_.sorted()) {
    if (pid != last_pid) {
      last_pid = pid;
      metadata_event(name::kProcessName, pid, 0, arg::kName, t_.process.exe_name, 0);
      metadata_event(name::kProcessLabels, pid, 0, arg::kLabels, "CPU", 0);
      metadata_event(name::kProcessSortIndex, pid, 0, arg::kSortIndex, {}, int64_t(pid));
    }
    metadata_event(name::kThreadName, pid, tid, arg::kName, host_row_name(t_, tid), 0);
    metadata_event(name::kThreadSortIndex, pid, tid, arg::kSortIndex, {}, int64_t(tid));
  }
}

// Device rows: "GPU <d>" after every host process, its streams by number, the sync rows next to
// their stream, and Kineto's device-wide row first.
void ChromeTraceWriter::device_row_metadata() {
  namespace name = schema::name;
  namespace arg = schema::arg;
  uint64_t last_device = ~uint64_t{0};
  for (const auto& [device, tid] : device_rows_.sorted()) {
    if (device != last_device) {
      last_device = device;
      const std::string gpu = "GPU " + std::to_string(device);
      metadata_event(name::kProcessName, device, 0, arg::kName, gpu, 0);
      metadata_event(name::kProcessLabels, device, 0, arg::kLabels, gpu, 0);
      metadata_event(name::kProcessSortIndex, device, 0, arg::kSortIndex, {}, int64_t(device + kGpuSortIndexOffset));
    }
    metadata_event(name::kThreadName, device, tid, arg::kName, device_row_name(t_, device, tid), 0);
    if (tid == kDeviceRowTid) {  // Kineto's device-wide row (its resource id -1)
      metadata_event(name::kThreadSortIndex, device, tid, arg::kSortIndex, {}, -1);
      continue;
    }
    const bool sync = tid >= kSyncStreamTidOffset && tid < kStreamZeroTid;
    const uint64_t stream = tid == kStreamZeroTid ? 0 : sync ? tid - kSyncStreamTidOffset : tid;
    metadata_event(name::kThreadSortIndex, device, tid, arg::kSortIndex, {}, int64_t(stream));
  }
}

// A host thread's row: its native name when known.
std::string host_row_name(const Trace& t, uint64_t tid) {
  std::string_view native;
  for (const auto& [known, thread_name] : t.process.thread_names) {
    if (known == tid && !thread_name.empty()) native = thread_name;
  }
  return schema::thread_row_name(tid, native);
}

// "stream <s>[ <nvtx name>][ (sync)]", or Kineto's device-wide row "Device <d>".
std::string device_row_name(const Trace& t, uint64_t device, uint64_t tid) {
  if (tid == kDeviceRowTid) return "Device " + std::to_string(device);
  const bool sync = tid >= kSyncStreamTidOffset && tid < kStreamZeroTid;
  const uint64_t stream = tid == kStreamZeroTid ? 0 : sync ? tid - kSyncStreamTidOffset : tid;
  std::string row = "stream " + std::to_string(stream);
  const auto named = std::lower_bound(t.stream_names.begin(), t.stream_names.end(),
                                      std::pair<uint32_t, std::string>(uint32_t(stream), ""));
  if (named != t.stream_names.end() && named->first == stream) row += " " + named->second;  // nvtxNameCudaStream
  if (sync) row += " (sync)";
  return row;
}

}  // namespace profagent::exporters::chrome
