#include "exporters/rank_table.h"

#include <unordered_map>


namespace profagent::exporters {
namespace {

int64_t unix_ns(const Trace& t, uint64_t ns) { return static_cast<int64_t>(ns) + t.unix_offset_ns; }

void header(const Trace& t, JsonWriter& w) {
  w.raw("{\"format\":\"profagent-rank\",\"version\":1,\"host_name\":"), w.string(t.process.host_name);
  w.raw(",\"pid\":"), w.u64(t.process.pid);
  w.raw(",\"rank\":"), w.i64(t.process.rank);
  w.raw(",\"local_rank\":"), w.i64(t.process.local_rank);
  w.raw(",\"world_size\":"), w.i64(t.process.world_size);
  w.raw(",\"backend\":"), w.string(t.process.backend);
  w.raw(",\"window\":"), w.u64(t.window);
}

void steps(const Trace& t, JsonWriter& w) {
  w.raw(",\"steps\":[");
  for (std::size_t i = 0; i < t.steps.size(); ++i) {
    const StepSpan& s = t.steps[i];
    w.raw(i ? ",[" : "["), w.u64(s.number), w.raw(","), w.i64(unix_ns(t, s.start_ns));
    w.raw(","), w.i64(unix_ns(t, s.end_ns)), w.raw("]");
  }
  w.raw("]");
}

uint64_t share(const Summaries& s, std::size_t row) { return row < s.distributed.size() ? s.distributed[row].time_ns : 0; }

void distributed(const Trace& t, const Summaries& window, JsonWriter& w) {
  Summaries computed;
  if (window.distributed.empty()) {  // PROFAGENT_SUMMARIES left it out: this file still needs it
    SummaryOptions options;
    options.names = {"distributed"};
    computed = compute_summaries(t, options);
  }
  const Summaries& s = window.distributed.empty() ? computed : window;
  // The Distributed Summary's rows: step time, Communication, Computation, Overlap.
  w.raw(",\"distributed\":{\"span_ns\":"), w.u64(share(s, 0));
  w.raw(",\"communication_ns\":"), w.u64(share(s, 1));
  w.raw(",\"computation_ns\":"), w.u64(share(s, 2));
  w.raw(",\"overlap_ns\":"), w.u64(share(s, 3));
  w.raw("}");
}

void collectives(const Trace& t, JsonWriter& w) {
  std::unordered_map<uint64_t, const HostRecord*> calls;  // operator id -> the NCCL call or group
  for (const HostRecord& h : t.host) {
    if (h.collective >= 0 && std::size_t(h.collective) < t.collectives.size()) calls.emplace(h.id, &h);
  }
  w.raw(",\"collectives\":[");
  bool first = true;
  for (const DeviceRecord& d : t.device) {
    auto found = d.kind == DeviceKind::Kernel ? calls.find(d.external_id) : calls.end();
    if (found == calls.end()) continue;
    const CollectiveArgs& c = t.collectives[std::size_t(found->second->collective)];
    w.raw(first ? "[" : ",["), w.u64(c.comm_hash), w.raw(","), w.u64(c.seq), w.raw(","), w.string(c.collective);
    w.raw(","), w.u64(c.bytes), w.raw(","), w.i64(unix_ns(t, found->second->start_ns));
    w.raw(","), w.i64(unix_ns(t, d.start_ns)), w.raw(","), w.i64(unix_ns(t, d.end_ns)), w.raw("]");
    first = false;
  }
  w.raw("]");
}

}  // namespace

bool wants_rank_table(const Trace& trace) { return !trace.collectives.empty() || trace.process.world_size > 1; }

bool write_rank_table(const Trace& trace, const Summaries& summaries, JsonWriter& out) {
  header(trace, out);
  steps(trace, out);
  distributed(trace, summaries, out);
  collectives(trace, out);
  out.raw("}\n");
  return out.flush();
}

}  // namespace profagent::exporters
