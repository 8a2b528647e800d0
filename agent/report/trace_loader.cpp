#include "agent/report/trace_loader.h"

#include "agent/report/event_reader.h"
#include "agent/report/perfetto_reader.h"
#include "agent/report/trace_builder.h"
#include "agent/report/trace_stream.h"
#include "exporters/printable_text.h"

#include <map>

namespace profagent::report {
namespace {

// An event's name in an error line: its start (a name may be hundreds of MB).
std::string name_excerpt(std::string_view name) {
  constexpr std::size_t kShown = 64;
  const std::string_view shown = exporters::utf8_prefix(name, kShown);
  return std::string(shown) + (shown.size() < name.size() ? "..." : "");
}

bool read_events(const std::string& path, const StreamLimits& limits, TraceBuilder& builder, std::string& metadata,
                 uint64_t& events, std::string& error) {
  EventReader reader;
  uint64_t first = 0;
  const EventFn on_event = [&](const RawEvent& e, uint64_t index, std::string& err) {
    if (builder.add(e, err)) return true;
    err = "event " + std::to_string(index) + (e.has_name ? " (\"" + name_excerpt(e.name) + "\")" : "") + ": " + err;
    return false;
  };
  const BatchFn on_batch = [&](std::string_view batch, uint64_t count, std::string& err) {
    const bool ok = reader.read_batch(batch, kBatchPadding, first, on_event, err);
    first += count;
    return ok;
  };
  if (looks_like_perfetto(path)) return stream_perfetto_trace(path, limits, on_batch, metadata, events, error);
  return stream_trace(path, limits, on_batch, metadata, events, error);
}

// Steps covered, for a trace that does not say (Kineto's): its ProfilerStep ranges.
void default_window(LoadedTrace& loaded) {
  Trace& t = loaded.trace;
  t.window = 1;
  t.whole_run = t.steps.empty();
  if (t.steps.empty()) return;
  t.first_step = t.steps.front();
  t.last_step = t.steps.back();
}

}  // namespace

// The window's own bounds (the builder only knows the records' span), and each live
// allocation's link to the call that made it (same thread, same start).
static void apply_window_and_live(const TraceHeader& header, Trace& t) {
  if (header.window_start_ns && header.window_end_ns >= header.window_start_ns) {
    t.start_ns = header.window_start_ns;
    t.end_ns = header.window_end_ns;
  }
  if (t.memory.live.empty()) return;
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> calls;  // (tid, start) -> the first call's id
  for (const HostRecord& h : t.host) {
    if (h.kind == EventKind::Alloc) calls.emplace(std::pair(h.tid, h.start_ns), h.id);
  }
  for (std::size_t i = 0; i < t.memory.live.size() && i < header.live_call_ns.size(); ++i) {
    LiveAllocation& a = t.memory.live[i];
    const auto it = header.live_call_ns[i] ? calls.find(std::pair(a.tid, header.live_call_ns[i])) : calls.end();
    if (it != calls.end()) a.event_id = it->second;
  }
}

std::optional<LoadedTrace> load_trace(const std::string& path, std::string& error, const StreamLimits& limits) {
  LoadedTrace loaded;
  TraceBuilder builder(loaded.trace);
  std::string metadata, why;
  uint64_t events = 0;
  TraceHeader header;
  if (!read_events(path, limits, builder, metadata, events, why) || !read_metadata(metadata, loaded.trace, header, why)) {
    error = path + ": " + why;
    return std::nullopt;
  }
  if (!header.has_events_key) {
    error = path + ": not a trace: no \"traceEvents\" array";
    return std::nullopt;
  }
  if (events == 0) {
    error = path + ": the trace has no events";
    return std::nullopt;
  }
  builder.finish();
  attach_stacks(header.stack_frames, loaded.trace);
  apply_window_and_live(header, loaded.trace);
  loaded.source = header.profagent ? "profagent" : "kineto";
  if (!header.has_window) default_window(loaded);
  loaded.skipped.assign(builder.skipped().begin(), builder.skipped().end());
  return loaded;
}

}  // namespace profagent::report
