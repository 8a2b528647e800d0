// NVTX's marks and start/end ranges, and the forward->backward links of torch operators
// recorded from torch's NVTX ranges (hooks/nvtx): the events a plain slice cannot say.
#include "exporters/annotation_args.h"
#include "exporters/chrome_trace_writer.h"
#include "exporters/trace_schema.h"

namespace profagent::exporters::chrome {

// An NVTX mark: an instant on its thread, as Kineto writes instant events.
void ChromeTraceWriter::nvtx_mark(const HostRecord& h, uint64_t pid, uint64_t tid) {
  w_.raw("{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"");
  w_.raw(schema::cat::kUserAnnotation);
  w_.raw("\",\"name\":");
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
    w_.raw(begin ? "{\"ph\":\"b\",\"cat\":\"" : "{\"ph\":\"e\",\"cat\":\"");
    w_.raw(schema::cat::kUserAnnotation);
    w_.raw("\",\"id\":"), w_.u64(h.id);
    w_.raw(",\"name\":"), w_.string(h.name);
    w_.raw(row_text_.of(pid, begin ? start_tid : tid));
    w_.raw(",\"ts\":"), w_.us3(rel(begin ? h.start_ns : h.end_ns));
    if (begin) host_args(h);
    end_event();
  }
  last_ns_ = std::max(last_ns_, h.end_ns);
}

// Kineto's fwdbwd flow: from a forward torch operator to the backward function autograd ran
// for it (exporters/torch_ops.h); "bp":"e" binds the end to the backward function's slice.
void ChromeTraceWriter::fwdbwd_flow(std::size_t index, uint64_t pid, uint64_t tid) {
  if (index >= fwdbwd_.flow.size() || fwdbwd_.flow[index] == 0) return;
  const bool start = fwdbwd_.flow_starts[index];
  w_.raw(start ? "{\"ph\":\"s\",\"id\":" : "{\"ph\":\"f\",\"id\":"), w_.u64(fwdbwd_.flow[index]);
  w_.raw(row_text_.of(pid, tid));
  w_.raw(",\"ts\":"), w_.us3(rel(t_.host[index].start_ns));
  w_.raw(",\"cat\":\""), w_.raw(schema::cat::kFwdBwd);
  w_.raw("\",\"name\":\""), w_.raw(schema::cat::kFwdBwd);
  w_.raw(start ? "\"" : "\",\"bp\":\"e\"");
  end_event();
}

}  // namespace profagent::exporters::chrome
