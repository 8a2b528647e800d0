#include "agent/partial_writer.h"

#include <pthread.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "agent/log.h"
#include "agent/streamed_table.h"
#include "agent/threads.h"
#include "agent/windows.h"
#include "collector/interval_peek.h"
#include "collector/segment_stream.h"
#include "collector/thread_buffer.h"
#include "exporters/file_names.h"
#include "exporters/partial_perfetto.h"
#include "exporters/partial_trace.h"
#include "exporters/trace_format.h"

namespace profagent::agent {
namespace {

struct PartialWriter {
  const Config* config = nullptr;
  // Held only while an interval or a segment is appended to the files and the state below is
  // read or changed, and while a window's partial is finished, so a partial is never written
  // again after its window's final trace. Never held across a CUDA, CUPTI or loader call: an
  // interval is peeked, and a segment cut and symbolised, before it is taken (the segments'
  // order is their turns': collector/segment_stream.h StreamTurn; lock order: a turn, then
  // this, then the windows' and the collector's locks). Timed: a crash flush must not wait for ever.
  std::timed_mutex mutex;
  collector::IntervalCursor cursor;  // the partial-trace thread's alone (append_interval)
  // Partial traces by window: the one being recorded, and earlier ones until their files are written.
  std::map<uint32_t, std::unique_ptr<exporters::PartialTrace>> partials;
  uint32_t finished_through = 0;  // windows up to this one are finished
  bool failure_said = false;
  // Streamed windows: host events buffered past which the window is streamed, what a segment
  // may hold, and the window whose partial trace holds segments (0: none).
  size_t stream_after_events = SIZE_MAX;
  collector::StreamLimits limits;
  uint32_t streaming = 0;
  // The streamed window's json.gz and Perfetto traces, when those formats are asked for (the
  // JSON one is the window's partial trace in `partials`).
  std::unique_ptr<exporters::PartialTrace> gzip;
  std::unique_ptr<exporters::PerfettoPartial> perfetto;
  bool gzip_failure_said = false;
  bool perfetto_failure_said = false;
  // The streamed window's segments published so far, and when the last was (publish_segment).
  uint64_t segments_published = 0;
  uint64_t published_ms = 0;
};
PartialWriter* g_writer = nullptr;  // leaked: the exit flush may run while the thread works
std::atomic<bool> g_configured{false};
std::atomic<bool> g_thread_started{false};
std::atomic<uint64_t> g_first_due_ms{0};  // when the thread starts (the first interval's end)

uint64_t monotonic_ms() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return uint64_t(now.tv_sec) * 1000 + uint64_t(now.tv_nsec) / 1'000'000;
}

// The window's output folder, opened; nullptr when it cannot be (said once).
std::unique_ptr<exporters::OutputDir> open_output_dir(PartialWriter& p) {
  std::string dir_path = window_output_dir();
  if (dir_path.empty()) dir_path = p.config->output_dir;
  std::string error;
  std::unique_ptr<exporters::OutputDir> dir = exporters::OutputDir::create(dir_path, &error);
  if (!dir && !p.failure_said) log(LogLevel::Warn, "partial trace: " + error + "; no partial trace is kept");
  if (!dir) p.failure_said = true;
  return dir;
}

exporters::PartialTrace* partial_for(PartialWriter& p, const Trace& interval, uint64_t head_room = 0) {
  auto found = p.partials.find(interval.window);
  if (found != p.partials.end()) return found->second.get();
  std::unique_ptr<exporters::OutputDir> dir = open_output_dir(p);
  if (!dir) return nullptr;
  auto partial = std::make_unique<exporters::PartialTrace>(std::move(dir), exporters::file_stem(interval), head_room);
  return p.partials.emplace(interval.window, std::move(partial)).first->second.get();
}

bool stream_due(const PartialWriter& p) {
  return collector::buffered_host_events() >= p.stream_after_events || collector::streamed_window() != 0;
}

// One interval: peek and join (it flushes CUPTI: outside the writer's lock), then append under
// it, unless the window's files were finished meanwhile (finished_through, read under it).
void append_interval(PartialWriter& p) {
  // Checked again just before the peek: past the threshold the window is streamed instead (a
  // peek would copy and join up to the whole buffer).
  if (stream_due(p)) return;
  collector::PeekedInterval peeked;
  if (!collector::peek_interval(p.cursor, peeked) || !peeked.recording) return;
  std::lock_guard lock(p.mutex);
  Trace& interval = peeked.trace;
  if (interval.window <= p.finished_through || interval.window == p.streaming) return;
  if (interval.host.empty() && interval.device.empty()) return;
  exporters::PartialTrace* partial = partial_for(p, interval);
  if (partial == nullptr) return;
  const uint64_t start_ms = monotonic_ms();
  const std::string error = partial->append(interval);
  if (error.empty()) {
    log(LogLevel::Debug, "partial trace: interval " + std::to_string(partial->intervals()) + ", " +
                             std::to_string(interval.host.size()) + " host events and " +
                             std::to_string(interval.device.size()) + " device records appended in " +
                             std::to_string(monotonic_ms() - start_ms) + " ms to " + partial->location());
  }
  if (!error.empty() && !p.failure_said) {
    p.failure_said = true;
    log(LogLevel::Warn, "partial trace: " + error + "; it stays as it was (the final trace is still written)");
  }
}

// The window's streamed traces, opened at its first segment: the JSON one (when asked for) a
// fresh partial trace (intervals peeked before hold events the segments take again), json.gz
// and Perfetto ones when asked for. The JSON one, or nullptr when it is not asked for or
// cannot be opened (said once).
exporters::PartialTrace* streamed_partial(PartialWriter& p, const Trace& segment) {
  const exporters::TraceFormats& formats = p.config->trace_formats;
  if (p.streaming != segment.window) {
    auto found = p.partials.find(segment.window);
    if (found != p.partials.end()) {
      found->second->remove();
      p.partials.erase(found);
    }
    p.streaming = segment.window;
    p.segments_published = 0;
    p.gzip.reset();
    p.perfetto.reset();
    if (formats.has(exporters::TraceFormat::JsonGz)) {
      if (std::unique_ptr<exporters::OutputDir> dir = open_output_dir(p)) {
        p.gzip = std::make_unique<exporters::PartialTrace>(std::move(dir), exporters::file_stem(segment), 0, true);
      }
    }
    if (formats.has(exporters::TraceFormat::Perfetto)) {
      if (std::unique_ptr<exporters::OutputDir> dir = open_output_dir(p)) {
        p.perfetto = std::make_unique<exporters::PerfettoPartial>(std::move(dir), exporters::file_stem(segment));
      }
    }
  }
  if (!formats.has(exporters::TraceFormat::Json)) return nullptr;
  // Room for the final head (its drops, span, memory and cost are known at the window's end).
  constexpr uint64_t kHeadRoom = 64 << 10;
  return partial_for(p, segment, kHeadRoom);
}

// Whether a segment is published (tail, fsync, name exchange: exporters/swap_files.h): the
// window's first, then one each PROFAGENT_PARTIAL_INTERVAL_MS; the others go to the swap files
// only, so a segment costs one write of its events, not a copy of the file, a tail and two
// fsyncs (150-370 ms against 35-55 ms per 131,072-event segment on a loaded 2-core VM). With
// partial traces off, the window's traces are published by its end only.
bool publish_segment(PartialWriter& p) {
  const uint64_t interval_ms = p.config->partial_interval_ms;
  if (interval_ms == 0) return false;
  const uint64_t now_ms = monotonic_ms();
  if (p.segments_published != 0 && now_ms < p.published_ms + interval_ms) return false;
  ++p.segments_published;
  p.published_ms = now_ms;
  return true;
}

// The segment in the window's other formats' traces too (after the JSON one: the same unix offset).
template <typename Partial>
void append_to(Partial* partial, Trace& segment, bool publish, bool& failure_said, const char* what) {
  if (partial == nullptr) return;
  const std::string error = partial->append(segment, publish);
  if (!error.empty() && !failure_said) {
    failure_said = true;
    log(LogLevel::Warn, std::string("streamed ") + what + " trace: " + error + "; it will lack the window's later events");
  }
}

// A streamed window's trace in another format finished as the JSON one; its path added to `paths`.
template <typename Partial>
void finish_other(std::unique_ptr<Partial> partial, Trace& tail, exporters::TraceFormat format, const std::string& keys,
                  std::vector<std::string>& paths) {
  if (!partial) return;
  const std::string error = partial->finish(tail, exporters::file_stem(tail) + std::string(exporters::trace_format_suffix(format)), keys);
  if (error.empty()) paths.push_back(partial->location());
  else log(LogLevel::Error, "streamed " + std::string(exporters::trace_format_name(format)) + " trace: " + error);
}

void append_json(PartialWriter& p, exporters::PartialTrace& partial, Trace& events, uint64_t held_events, bool publish) {
  const uint64_t start_ms = monotonic_ms();
  const std::string error = partial.append(events, publish);
  if (error.empty()) {
    log(LogLevel::Debug, "streamed trace: segment " + std::to_string(partial.intervals()) + ", " +
                             std::to_string(events.host.size()) + " host events and " +
                             std::to_string(events.device.size()) + " device records appended in " +
                             std::to_string(monotonic_ms() - start_ms) + " ms (" + std::to_string(held_events) +
                             " held) to " + (publish ? partial.location() : "its swap file (published later)"));
  } else if (!p.failure_said) {
    p.failure_said = true;
    log(LogLevel::Warn, "streamed trace: " + error + "; the window's trace will lack its events");
  }
}

// One segment cut and symbolised (CUPTI and the loader: no lock held) is appended in its turn,
// under the writer's lock. False when nothing more is to be streamed now.
bool append_segment(PartialWriter& p, collector::StreamedSegment& segment) {
  std::lock_guard lock(p.mutex);
  Trace& events = segment.trace;
  if (events.window <= p.finished_through) return false;  // its window's trace is finished
  exporters::PartialTrace* partial = streamed_partial(p, events);
  if (partial == nullptr && !p.gzip && !p.perfetto) return false;
  if (!events.host.empty() || !events.device.empty()) {
    fold_streamed_segment(events, *p.config);  // the window's table, folded as it streams
    const bool publish = publish_segment(p);
    if (partial != nullptr) append_json(p, *partial, events, segment.held_events, publish);
    append_to(p.gzip.get(), events, publish, p.gzip_failure_said, "json.gz");
    append_to(p.perfetto.get(), events, publish, p.perfetto_failure_said, "Perfetto");
  }
  return segment.chunks != 0;
}

// Segments while the writers have left chunks: at most `max_segments` (the thread's calls are
// bounded, so a window's end waits for one segment at most). Two threads may stream at once
// (this one and a window's end, drain_streamed_window): each segment's turn, taken before it is
// cut and held until it is appended, keeps them cut and appended one at a time in order, each
// once, and the tail after them (finish_streamed_trace takes a turn after theirs).
void stream_segments(PartialWriter& p, uint64_t max_segments) {
  for (uint64_t i = 0; i < max_segments; ++i) {
    collector::StreamedSegment segment;  // its turn ends when it goes, after its append
    if (!collector::cut_segment(p.limits, segment) || !segment.recording) return;
    if (!append_segment(p, segment)) return;
  }
}

// Started at the first interval's end, or when the buffered events call for streaming: appends
// at once, then every interval; streams whenever due.
void write_partials(void*) noexcept {
  const uint64_t interval_ms = g_writer->config->partial_interval_ms;
  uint64_t next_ms = 0;
  const timespec tick{0, kAgentTickMs * 1'000'000};
  const timespec streaming_tick{0, 10'000'000};
  while (keep_running()) {
    try {
      if (stream_due(*g_writer)) {
        stream_segments(*g_writer, 64);
        nanosleep(&streaming_tick, nullptr);
        continue;
      }
      if (interval_ms != 0 && monotonic_ms() >= next_ms) {
        append_interval(*g_writer);
        next_ms = monotonic_ms() + interval_ms;
      }
    } catch (...) {
      static collector::SwallowedSite site{"out of memory while writing the partial trace; an interval is missing from it"};
      collector::note_swallowed(site);
    }
    nanosleep(&tick, nullptr);
  }
}

// A forked child: the parent's partial traces are not its own (never closed or removed here).
void forget_partials_in_child() noexcept { g_writer = nullptr; }

}  // namespace

void start_partial_writer(const Config& config) noexcept {
  // Without host activity an interval's device records cannot be found (they are found
  // through its calls), and there is nothing to stream.
  if (!config.activity_cpu || g_configured.exchange(true)) return;
  g_writer = new (std::nothrow) PartialWriter;
  if (g_writer == nullptr) return;
  g_writer->config = &config;
  const size_t chunk_events = collector::kEventsPerChunk;
  g_writer->stream_after_events = config.stream_after_bytes() / collector::kChunkBytes * chunk_events;
  pthread_atfork(nullptr, nullptr, forget_partials_in_child);
  if (config.partial_interval_ms != 0) g_first_due_ms.store(monotonic_ms() + config.partial_interval_ms);
}

void partial_writer_tick() noexcept {
  if (g_writer == nullptr || g_thread_started.load(std::memory_order_relaxed)) return;
  const uint64_t due = g_first_due_ms.load(std::memory_order_relaxed);
  const bool interval_due = due != 0 && monotonic_ms() >= due;
  if (!interval_due && collector::buffered_host_events() < g_writer->stream_after_events) return;
  if (g_thread_started.exchange(true)) return;
  if (!start_agent_thread("profagent-part", write_partials, nullptr)) {
    log(LogLevel::Warn, "could not start the partial trace thread; no partial trace is kept");
  }
}

void drain_streamed_window() noexcept {
  PartialWriter* p = g_writer;
  if (p == nullptr || !stream_due(*p)) return;
  try {
    stream_segments(*p, UINT64_MAX);
  } catch (...) {
    static collector::SwallowedSite site{"out of memory while streaming the window's last segments: its tail is joined whole"};
    collector::note_swallowed(site);
  }
}

std::string finish_streamed_trace(Trace& tail, std::vector<std::string>& paths) noexcept {
  PartialWriter* p = g_writer;
  if (p == nullptr) {  // a forked child (no writer, and a turn its parent held would never end)
    collector::adopt_streamed_stacks(tail, collector::StreamTurn{});  // its stacks symbolised alone
    return "its segments' trace is missing";
  }
  // A turn after every segment cut so far, the window's last included (all were cut before its
  // end), waited for (bounded): the trace is nothing without them.
  const collector::StreamTurn turn = collector::take_stream_turn();
  // The tail's stacks symbolised by its segments' symbolizer and numbered as theirs (the table
  // and the folded files fold them alike, also when the trace below is missing): the loader is
  // called, so before the writer's lock.
  collector::adopt_streamed_stacks(tail, turn);
  if (!turn.held()) return "its segments' trace was busy for a minute";
  try {
    std::unique_lock lock(p->mutex, std::defer_lock);
    if (!lock.try_lock_for(std::chrono::seconds(60))) return "its segments' trace was busy for a minute";
    if (tail.window > p->finished_through) p->finished_through = tail.window;
    if (p->streaming != tail.window) return "its segments' trace is missing";
    auto found = p->partials.find(tail.window);
    exporters::PartialTrace* json = found != p->partials.end() ? found->second.get() : nullptr;
    // What the files hold before the tail (the segments', unless an append failed).
    if (json) {
      tail.streamed.host_events = json->host_events();
      tail.streamed.device_records = json->device_records();
    } else if (p->gzip) {
      tail.streamed.host_events = p->gzip->host_events();
      tail.streamed.device_records = p->gzip->device_records();
    } else if (p->perfetto) {
      tail.streamed.host_events = p->perfetto->host_events();
      tail.streamed.device_records = p->perfetto->device_records();
    }
    const std::string stem = exporters::file_stem(tail);
    const std::string keys = exporters::streamed_trace_keys(tail);
    std::string error;
    if (json) {
      error = json->finish(tail, stem + std::string(exporters::trace_format_suffix(exporters::TraceFormat::Json)), keys);
      if (error.empty()) paths.push_back(json->location());
    }
    p->partials.erase(p->partials.begin(), p->partials.upper_bound(tail.window));
    finish_other(std::move(p->gzip), tail, exporters::TraceFormat::JsonGz, keys, paths);
    finish_other(std::move(p->perfetto), tail, exporters::TraceFormat::Perfetto, keys, paths);
    if (!json && paths.empty()) return "none of its streamed traces could be finished";
    return error;
  } catch (...) {
    return "out of memory while finishing its streamed trace";
  }
}

bool finish_partial(uint32_t window, bool trace_written) noexcept {
  PartialWriter* p = g_writer;
  if (p == nullptr) return true;
  std::unique_lock lock(p->mutex, std::defer_lock);
  if (!lock.try_lock_for(std::chrono::seconds(2))) return false;  // left on disk, stale but valid
  if (window > p->finished_through) p->finished_through = window;
  for (auto it = p->partials.begin(); it != p->partials.end() && it->first <= window;) {
    if (trace_written && it->first == window) it->second->remove();
    it = p->partials.erase(it);
  }
  return true;
}

}  // namespace profagent::agent
