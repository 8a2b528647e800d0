// Host events: runtime and driver calls (cuda_runtime / cuda_driver), operators (cpu_op),
// ranges and steps (user_annotation), each with the flows it starts.
#include "exporters/annotation_args.h"
#include "exporters/chrome_trace_writer.h"
#include "exporters/cupti_cbids.h"
#include "exporters/stack_text.h"
#include "exporters/trace_schema.h"

#include <string>

namespace profagent::exporters::chrome {
namespace {

namespace arg = schema::arg;

uint32_t cbid_of(const HostRecord& h, const CallName& call) {
  return is_driver_call(h, call) ? call.driver_cbid : call.runtime_cbid;
}

// Scopes (operators, ranges, steps) are not calls: they keep their own names.
const CallName kNotACall{};

}  // namespace

void ChromeTraceWriter::host_events() {
  for (std::size_t i = 0; i < t_.host.size(); ++i) host_event(i);
}

void ChromeTraceWriter::host_event(std::size_t index) {
  current_host_ = index;
  const HostRecord& h = t_.host[index];
  const uint64_t pid = host_pid(h.pid), tid = host_tid(h.tid);
  host_rows_.add(pid, tid);
  if (h.kind == EventKind::Range && (h.flags & kFlagRangeMark)) return nvtx_mark(h, pid, tid);
  if (h.kind == EventKind::Range && (h.flags & kFlagRangeStartEnd)) return nvtx_start_end(h, pid, tid);
  const CallName& call = is_runtime_call(h.kind) ? call_names_.of(h.name) : kNotACall;
  if (is_runtime_call(h.kind)) {
    begin_x(host_event_category(h, call), call.api, pid, tid, h.start_ns, h.end_ns);
  } else if (h.kind == EventKind::Step && h.name.empty()) {
    begin_x(host_event_category(h, call), std::string_view(step_name(h)), pid, tid, h.start_ns, h.end_ns);
  } else {
    begin_x(host_event_category(h, call), h.name, pid, tid, h.start_ns, h.end_ns);
  }
  host_args(h, call);
  stack_frame_id(stack_frames_.sf_of(h));
  end_event();
  flow_starts(false, index, pid, tid, h.start_ns);
  fwdbwd_flow(index, pid, tid);
}

// cuda_runtime / cuda_driver: External id (of the enclosing op, or the call's own id), cbid,
// a correlation unique to the call, and what the call did; never `stream` (HTA classes events
// with a stream arg as GPU events).
void ChromeTraceWriter::host_args(const HostRecord& h, const CallName& call) {
  Args a(w_);
  const bool runtime = is_runtime_call(h.kind);
  a.key(arg::kExternalId).u64(runtime ? h.external_id : h.id);
  if (runtime) {
    a.key(arg::kCbid).u64(cbid_of(h, call));
    a.key(arg::kCorrelation).u64(links_.call_correlation(current_host_));
    if (call.entry_point) a.key(arg::kEntryPoint), name_string(h.name);
  }
  if (runtime && (h.flags & kFlagFailed || h.result != 0)) a.key(arg::kCudaError).i64(h.result);
  // Work issued to a stream being captured into a graph runs only when the graph is launched:
  // the call has no device record of its own, and the trace says why.
  if (runtime && (h.flags & kFlagCaptured)) a.key(arg::kCaptured).i64(1);
  if (h.kind == EventKind::Memcpy || h.kind == EventKind::Memset || h.kind == EventKind::Alloc) {
    a.key(arg::kBytes).u64(h.arg0);
  }
  if (h.kind == EventKind::Launch && !h.kernel_name.empty()) a.key(arg::kKernel), name_string(h.kernel_name);
  if (h.kind == EventKind::Step) a.key(arg::kStep).u64(h.arg0);
  if (h.collective >= 0) {
    write_collective_args(t_.collectives[size_t(h.collective)], [&a](std::string_view k) -> JsonWriter& { return a.key(k); });
  }
  if (const std::string* site = call_sites_.of(h)) a.key(arg::kCallSite).string(*site);
  shape_args(h, a);
  annotation_args(t_, h, current_host_ < fwdbwd_.fwd_tid.size() ? fwdbwd_.fwd_tid[current_host_] : 0,
                  [&a](std::string_view key) -> JsonWriter& { return a.key(key); });
  a.close();
}

// PROFAGENT_RECORD_SHAPES: one dims list per input ([] for a scalar) and one type per input.
void ChromeTraceWriter::shape_args(const HostRecord& h, Args& a) {
  const InputShapes* shapes = shapes_of(t_, h);
  if (shapes == nullptr) return;
  if (!shapes->dims.empty()) {
    a.key(arg::kInputDims).raw("[");
    for (std::size_t i = 0; i < shapes->dims.size(); ++i) {
      w_.raw(i ? ",[" : "[");
      for (std::size_t j = 0; j < shapes->dims[i].size(); ++j) {
        if (j) w_.raw(",");
        w_.i64(shapes->dims[i][j]);
      }
      w_.raw("]");
    }
    w_.raw("]");
  }
  if (!shapes->types.empty()) {
    a.key(arg::kInputType).raw("[");
    for (std::size_t i = 0; i < shapes->types.size(); ++i) {
      if (i) w_.raw(",");
      w_.string(shapes->types[i]);
    }
    w_.raw("]");
  }
}

// Steps come as Step host records; when the collector only filled Trace::steps, they are
// drawn on the main thread's row so HTA still finds ProfilerStep#N (its iterations).
void ChromeTraceWriter::step_events() {
  if (!draws_step_spans(t_)) return;
  const uint64_t pid = t_.process.pid;
  for (const StepSpan& s : t_.steps) {
    host_rows_.add(pid, pid);
    begin_x(schema::cat::kUserAnnotation, std::string_view(std::string(schema::name::kStepPrefix) + std::to_string(s.number)), pid, pid,
            s.start_ns, s.end_ns);
    Args a(w_);
    a.key(arg::kStep).u64(s.number);
    a.close();
    end_event();
  }
}

}  // namespace profagent::exporters::chrome
