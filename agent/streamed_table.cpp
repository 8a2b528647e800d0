#include "agent/streamed_table.h"

#include <memory>
#include <mutex>
#include <new>

#include "agent/lifecycle.h"
#include "agent/windows.h"
#include "exporters/file_names.h"
#include "exporters/summaries/overhead_line.h"
#include "exporters/summaries/step_summary.h"
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
  std::unique_ptr<exporters::StepLinesFold> step_lines;
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
}

// One part into both folds: the part is scoped once (its costs are the table's too). A
// segment's records are sorted into the steps known now (agent/windows.h); the tail's into the
// window's (its Trace::steps).
void fold_part(StreamedFolds& s, const Trace& part, bool last) {
  if (last) {
    s.step_lines->add_last(part);
  } else {
    exporters::StepsSoFar steps;
    streamed_steps_so_far(part.window, s.step_lines->known_steps(), steps);
    s.step_lines->add(part, std::move(steps));
  }
  if (!s.summaries) return s.table->add(part);
  const exporters::TraceScope scope = exporters::scope_trace(part, /*phases=*/false);
  s.table->add(part, scope.costs);
  if (last) return s.summaries->add_last(part, scope);
  exporters::StepsSoFar steps;
  streamed_steps_so_far(part.window, s.summaries->known_steps(), steps);
  s.summaries->add(part, scope, std::move(steps));
}

void drop_folds(StreamedFolds& s) {
  s.table.reset();
  s.step_lines.reset();
  s.summaries.reset();
}

}  // namespace

void fold_streamed_segment(const Trace& segment, const Config& config) noexcept {
  StreamedFolds& s = fold_state();
  std::lock_guard lock(s.mutex);
  try {
    if (s.window != segment.window) start_fold(s, segment.window, config);
    if (s.table) fold_part(s, segment, /*last=*/false);
  } catch (const std::bad_alloc&) {
    s.failed = true;
    drop_folds(s);
  }
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
    const std::string head = exporters::render_key_averages(table, options.table) + exporters::folded_memory_note(table.memory);
    const std::vector<exporters::StepFigures>& steps = s.step_lines->figures();
    const std::string& note = s.step_lines->note();
    const std::string overhead = exporters::overhead_line(tail);
    out.table = head + exporters::render_step_summary_brief(steps, exporters::table_file_name(tail)) + note + overhead;
    out.table_file = head + exporters::render_step_summary(steps) + note + overhead;
    if (s.summaries) {
      out.summaries = exporters::render_streamed_summaries(tail, *s.summaries, table, options.summaries);
      out.summaries_given_up = s.summaries->not_folded().empty() ? s.summaries->per_step_not_folded() : s.summaries->not_folded();
    }
  } catch (const std::bad_alloc&) {
    out.table.clear(), out.table_file.clear(), out.summaries.clear();
    out.error = "out of memory while making it";
  }
  drop_folds(s);
  return out;
}

}  // namespace profagent::agent
