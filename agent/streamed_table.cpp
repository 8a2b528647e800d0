#include "agent/streamed_table.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <new>
#include <utility>

#include "agent/lifecycle.h"
#include "agent/windows.h"
#include "collector/memory_ledger.h"
#include "exporters/file_names.h"
#include "exporters/folded_stacks.h"
#include "exporters/json_writer.h"
#include "exporters/output_stream.h"
#include "exporters/rank_table.h"
#include "exporters/summary_json.h"
#include "exporters/summaries/host_costs.h"
#include "exporters/summaries/overhead_line.h"
#include "exporters/summaries/step_summary.h"
#include "exporters/summaries/streamed_memory.h"
#include "exporters/summaries/streamed_step_lines.h"
#include "exporters/summaries/streamed_summaries.h"
#include "exporters/summaries/streamed_table.h"
#include "exporters/summaries/trace_scope.h"

namespace profagent::agent {
namespace {

// One window is streamed at a time; the partial writer's thread folds, the exporting thread
// finishes (after the last segment was appended, under the partial writer's lock).
struct StreamedFolds {
  std::mutex mutex;
  uint32_t window = 0;
  bool failed = false;  // out of memory during the fold: the table is not made
  std::unique_ptr<exporters::TableFold> table;
  std::unique_ptr<exporters::SummaryFold> summaries;  // null when no summary is asked for
  std::unique_ptr<exporters::FoldedStacks> folded;    // null when folded files are not asked for
  std::unique_ptr<exporters::StepLinesFold> step_lines;
  // The rank table's rows, and its Distributed Summary when the summaries asked for do not
  // fold it (rank_distributed: a fold of that summary alone, started with the window's first
  // part that wants a table; one started later cannot be the window's: rank_distributed_late).
  std::unique_ptr<exporters::RankTableFold> ranks;
  std::unique_ptr<exporters::SummaryFold> rank_distributed;
  bool rank_distributed_late = false;
  bool parts_folded = false;
  bool summaries_distributed = false;  // the Distributed Summary is among the summaries asked for
  // PROFAGENT_PROFILE_MEMORY: where the calls of its memory records were, and how far the
  // ledger's records were read.
  std::unique_ptr<exporters::MemoryCallsFold> memory;
  collector::MemoryCallCursor memory_cursor;
};

StreamedFolds& fold_state() {
  static StreamedFolds* s = new StreamedFolds;  // leaked: the exit flush may run late
  return *s;
}

void start_fold(StreamedFolds& s, uint32_t window, const Config& config) {
  const exporters::ExportOptions options = export_options(config);
  s.window = window;
  s.failed = false;
  s.table = std::make_unique<exporters::TableFold>(options.table);
  s.step_lines = std::make_unique<exporters::StepLinesFold>();
  s.summaries.reset();
  if (!options.summaries.names.empty()) s.summaries = std::make_unique<exporters::SummaryFold>(options.summaries);
  s.folded.reset();
  if (options.write_folded) s.folded = std::make_unique<exporters::FoldedStacks>();
  s.ranks.reset();
  if (options.write_summary) s.ranks = std::make_unique<exporters::RankTableFold>();
  s.rank_distributed.reset();
  s.rank_distributed_late = false;
  s.parts_folded = false;
  s.memory.reset();
  if (config.profile_memory) s.memory = std::make_unique<exporters::MemoryCallsFold>();
  s.memory_cursor = {};
  const std::vector<std::string>& names = options.summaries.names;
  s.summaries_distributed = std::find(names.begin(), names.end(), "distributed") != names.end();
}

bool summaries_fold_distributed(const StreamedFolds& s) { return s.summaries && s.summaries_distributed; }

// The Distributed Summary of the rank table, folded alone when the summaries asked for leave it
// out, from the first part of a window that wants a table (a job of several ranks: its first).
void start_rank_distributed(StreamedFolds& s, const Trace& part) {
  if (!s.ranks || s.rank_distributed || s.rank_distributed_late || summaries_fold_distributed(s)) return;
  if (!exporters::wants_rank_table(part)) return;
  if (s.parts_folded) {
    s.rank_distributed_late = true;
    return;
  }
  exporters::SummaryOptions options;
  options.names = {"distributed"};
  s.rank_distributed = std::make_unique<exporters::SummaryFold>(options);
}

void fold_rank_distributed(StreamedFolds& s, const Trace& part, const exporters::TraceScope& scope, bool last) {
  if (last) return s.rank_distributed->add_last(part, scope);
  exporters::StepsSoFar steps;
  streamed_steps_so_far(part.window, s.rank_distributed->known_steps(), steps);
  s.rank_distributed->add(part, scope, std::move(steps));
}

// One part into both folds: the part is scoped once (its costs are the table's too). A
// segment's records are sorted into the steps known now (agent/windows.h); the tail's into the
// window's (its Trace::steps).
// The folded stacks add the part's costs too (a part without stacks has no line).
// The segment's memory records: those booked since the last segment wait for their calls, and
// the waiting ones whose calls it holds join it (memory records are booked before their calls
// are committed, so before a segment takes them). The segment's own memory part, while it is
// folded (its trace is written without them: they are the tail's).
MemoryReport segment_memory(StreamedFolds& s, const Trace& segment) {
  std::vector<MemoryRecord> booked;
  collector::memory_records_since(s.memory_cursor, booked);
  s.memory->want(std::move(booked));
  MemoryReport memory;
  memory.enabled = true;
  memory.records = s.memory->add(segment);
  return memory;
}

void fold_part(StreamedFolds& s, const Trace& part, bool last) {
  if (s.ranks) s.ranks->add(part);
  start_rank_distributed(s, part);
  s.parts_folded = true;
  if (last) {
    s.step_lines->add_last(part);
  } else {
    exporters::StepsSoFar steps;
    streamed_steps_so_far(part.window, s.step_lines->known_steps(), steps);
    s.step_lines->add(part, std::move(steps));
  }
  const bool stacks = s.folded && !part.stacks.empty();
  if (!s.summaries && !s.rank_distributed) {
    if (!stacks) return s.table->add(part);
    const exporters::HostCosts costs = exporters::host_costs(part);
    s.table->add(part, costs);
    return s.folded->add(part, costs);
  }
  const exporters::TraceScope scope = exporters::scope_trace(part, /*phases=*/false);
  s.table->add(part, scope.costs);
  if (stacks) s.folded->add(part, scope.costs);
  if (s.rank_distributed) fold_rank_distributed(s, part, scope, last);
  if (!s.summaries) return;
  if (last) return s.summaries->add_last(part, scope);
  exporters::StepsSoFar steps;
  streamed_steps_so_far(part.window, s.summaries->known_steps(), steps);
  s.summaries->add(part, scope, std::move(steps));
}

void drop_folds(StreamedFolds& s) {
  s.table.reset();
  s.step_lines.reset();
  s.summaries.reset();
  s.folded.reset();
  s.ranks.reset();
  s.rank_distributed.reset();
  s.memory.reset();
}

// The rank table of the window, when it wants one: its rows' fold and its Distributed Summary
// (from the summaries' fold, or its own), or why that is not computed.
void finish_rank_table(StreamedFolds& s, const Trace& tail, StreamedOutputs& out) {
  if (!s.ranks || !s.ranks->wanted(tail)) return;
  if (!s.ranks->error().empty()) {
    out.rank_table_error = s.ranks->error();
    return;
  }
  auto table = std::make_unique<StreamedRankTable>();
  const exporters::SummaryFold* fold = summaries_fold_distributed(s) ? s.summaries.get() : s.rank_distributed.get();
  if (fold == nullptr) {
    table->why_not = "the window's first parts were streamed before it was known to want a rank table";
  } else {
    table->why_not = fold->not_made("distributed");
    if (table->why_not.empty()) table->distributed = fold->summaries(tail);
  }
  table->fold = std::move(s.ranks);
  out.rank_table = std::move(table);
}

// The window's memory summary: its records are the tail's, their calls in it or in the
// segments (MemoryCallsFold).
exporters::MemorySummary memory_summary(const StreamedFolds& s, const Trace& tail) {
  if (!tail.memory.enabled) return {};
  return exporters::summarize_memory(tail, exporters::host_costs(tail), s.memory ? &s.memory->calls() : nullptr);
}

}  // namespace

void complete_streamed_memory(Trace& tail) noexcept {
  StreamedFolds& s = fold_state();
  std::lock_guard lock(s.mutex);
  try {
    if (s.window == tail.window && s.memory) s.memory->complete(tail);
  } catch (const std::bad_alloc&) {
    static collector::SwallowedSite site{"out of memory while naming the call sites of a streamed window's allocations"};
    collector::note_swallowed(site);
  }
}

void fold_streamed_segment(Trace& segment, const Config& config) noexcept {
  StreamedFolds& s = fold_state();
  std::lock_guard lock(s.mutex);
  MemoryReport own;  // the segment's memory part as it came (none: its records are the tail's)
  bool joined = false;
  try {
    if (s.window != segment.window) start_fold(s, segment.window, config);
    if (s.memory) own = std::exchange(segment.memory, segment_memory(s, segment)), joined = true;
    if (s.table) fold_part(s, segment, /*last=*/false);
  } catch (const std::bad_alloc&) {
    s.failed = true;
    drop_folds(s);
  }
  if (joined) segment.memory = std::move(own);
}

StreamedOutputs finish_streamed_outputs(const Trace& tail, const Config& config) noexcept {
  StreamedFolds& s = fold_state();
  std::lock_guard lock(s.mutex);
  StreamedOutputs out;
  try {
    if (s.window != tail.window || !s.table) {
      out.error = s.failed ? "out of memory while folding its segments" : "its segments were not folded";
      drop_folds(s);
      return out;
    }
    fold_part(s, tail, /*last=*/true);
    const exporters::ExportOptions options = export_options(config);
    const exporters::Table table = s.table->table(tail.memory.enabled);
    const exporters::MemorySummary memory = memory_summary(s, tail);
    const uint64_t unplaced = tail.memory.enabled && s.memory ? s.memory->unplaced(tail) : 0;
    const std::string head = exporters::render_key_averages(table, options.table) +
                             exporters::folded_memory_note(unplaced) + exporters::render_memory_summary(tail, memory);
    const std::vector<exporters::StepFigures>& steps = s.step_lines->figures();
    const std::string& note = s.step_lines->note();
    const std::string overhead = exporters::overhead_line(tail);
    out.table = head + exporters::render_step_summary_brief(steps, exporters::table_file_name(tail)) + note + overhead;
    out.table_file = head + exporters::render_step_summary(steps) + note + overhead;
    if (options.write_summary) {
      exporters::StringStream stream(out.summary_json);
      exporters::JsonWriter writer(stream, std::size_t{1} << 16);
      exporters::write_streamed_summary_json(tail, table, memory, unplaced, writer);
    }
    if (s.summaries) {
      out.summaries = exporters::render_streamed_summaries(tail, *s.summaries, table, memory, options.summaries);
      out.summaries_given_up = s.summaries->not_folded().empty() ? s.summaries->per_step_not_folded() : s.summaries->not_folded();
    }
    finish_rank_table(s, tail, out);
    // As a whole window's: both files when the window has stacks (the tail has them all).
    if (s.folded && !tail.stacks.empty()) {
      for (exporters::FoldedMetric metric : {exporters::FoldedMetric::SelfCudaTimeTotal, exporters::FoldedMetric::SelfCpuTimeTotal}) {
        out.folded.emplace_back(exporters::folded_suffix(metric), s.folded->render(tail.stacks, metric));
      }
    }
  } catch (const std::bad_alloc&) {
    out.table.clear(), out.table_file.clear(), out.summaries.clear(), out.summary_json.clear(), out.folded.clear();
    out.rank_table.reset();
    out.error = "out of memory while making it";
  }
  drop_folds(s);
  return out;
}

}  // namespace profagent::agent
