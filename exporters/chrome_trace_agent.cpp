// The agent's own cost: the profagent_overhead object (its figures, read back by `profagent
// report` for the overhead line) and the profagent track (its work as slices, cat "profagent",
// on a process row of its own: trace_schema.h agent_track_pid).
#include "exporters/chrome_trace_writer.h"
#include "exporters/field_writer.h"
#include "exporters/trace_schema.h"

namespace profagent::exporters::chrome {

void ChromeTraceWriter::agent_cost_key() {
  if (!t_.agent_cost.measured) return;
  w_.raw("  \""), w_.raw(schema::kOverhead), w_.raw("\": {");
  write_fields(std::span(schema::kOverheadFields), t_.agent_cost, w_, false);
  w_.raw("},\n");
}

// Slices of agent work may end after the window (its own join): they do not move the
// window's closing instant, which stays where the program's last event ended.
void ChromeTraceWriter::agent_events() {
  const uint64_t pid = schema::agent_track_pid(t_.process.pid);
  const uint64_t window_last = last_ns_;
  for (const AgentSlice& s : t_.agent_cost.slices) {
    const uint64_t tid = host_tid(s.tid);
    begin_x(schema::cat::kProfagent, std::string_view(s.name), pid, tid, s.start_ns, s.end_ns);
    end_event();
    agent_rows_.add(pid, tid);
  }
  last_ns_ = window_last;
}

// "profagent" after the host processes and the devices; its rows named as the threads are.
void ChromeTraceWriter::agent_row_metadata() {
  namespace name = schema::name;
  namespace arg = schema::arg;
  bool first = true;
  for (const auto& [pid, tid] : agent_rows_.sorted()) {
    if (first) {
      first = false;
      metadata_event(name::kProcessName, pid, 0, arg::kName, schema::kAgentTrackName, 0);
      metadata_event(name::kProcessLabels, pid, 0, arg::kLabels, schema::kAgentTrackName, 0);
      metadata_event(name::kProcessSortIndex, pid, 0, arg::kSortIndex, {}, int64_t(kAgentTrackSortIndex));
    }
    metadata_event(name::kThreadName, pid, tid, arg::kName, host_row_name(t_, tid), 0);
    metadata_event(name::kThreadSortIndex, pid, tid, arg::kSortIndex, {}, int64_t(tid));
  }
}

}  // namespace profagent::exporters::chrome
