#include "exporters/rank_table.h"


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

void collectives(const Trace& t, JsonWriter& w) {
  w.raw(",\"collectives\":[");
  bool first = true;
  for_each_collective_kernel(t, [&](const CollectiveArgs& c, const HostRecord& call, const DeviceRecord& d) {
    write_collective_row(c, unix_ns(t, call.start_ns), unix_ns(t, d.start_ns), unix_ns(t, d.end_ns), first, w);
    first = false;
  });
  w.raw("]");
}

}  // namespace

bool wants_rank_table(const Trace& trace) { return !trace.collectives.empty() || trace.process.world_size > 1; }

void write_rank_table_head(const Trace& trace, JsonWriter& out) {
  header(trace, out);
  steps(trace, out);
}

void write_rank_distributed(const Summaries& s, std::string_view why_not, JsonWriter& w) {
  if (!why_not.empty()) {
    w.raw(",\"distributed\":null,\"distributed_not_computed\":"), w.string(why_not);
    return;
  }
  // The Distributed Summary's rows: step time, Communication, Computation, Overlap.
  w.raw(",\"distributed\":{\"span_ns\":"), w.u64(share(s, 0));
  w.raw(",\"communication_ns\":"), w.u64(share(s, 1));
  w.raw(",\"computation_ns\":"), w.u64(share(s, 2));
  w.raw(",\"overlap_ns\":"), w.u64(share(s, 3));
  w.raw("}");
}

void write_collective_row(const CollectiveArgs& c, int64_t enqueue_unix_ns, int64_t start_unix_ns, int64_t end_unix_ns,
                          bool first, JsonWriter& w) {
  w.raw(first ? "[" : ",["), w.u64(c.comm_hash), w.raw(","), w.u64(c.seq), w.raw(","), w.string(c.collective);
  w.raw(","), w.u64(c.bytes), w.raw(","), w.i64(enqueue_unix_ns);
  w.raw(","), w.i64(start_unix_ns), w.raw(","), w.i64(end_unix_ns), w.raw("]");
}

bool write_rank_table(const Trace& trace, const Summaries& summaries, JsonWriter& out) {
  write_rank_table_head(trace, out);
  if (summaries.distributed.empty()) {  // PROFAGENT_SUMMARIES left it out: this file still needs it
    SummaryOptions options;
    options.names = {"distributed"};
    write_rank_distributed(compute_summaries(trace, options), {}, out);
  } else {
    write_rank_distributed(summaries, {}, out);
  }
  collectives(trace, out);
  out.raw("}\n");
  return out.flush();
}

}  // namespace profagent::exporters
