#include "agent/streamed_table.h"

#include <memory>
#include <mutex>
#include <new>

#include "agent/lifecycle.h"
#include "exporters/summaries/overhead_line.h"
#include "exporters/summaries/streamed_table.h"

namespace profagent::agent {
namespace {

// One window is streamed at a time; the partial writer's thread folds, the exporting thread
// finishes (after the last segment was appended, under the partial writer's lock).
struct StreamedTable {
  std::mutex mutex;
  uint32_t window = 0;
  bool failed = false;  // out of memory during the fold: the table is not made
  std::unique_ptr<exporters::TableFold> fold;
};

StreamedTable& table_state() {
  static StreamedTable* s = new StreamedTable;  // leaked: the exit flush may run late
  return *s;
}

void start_fold(StreamedTable& s, uint32_t window, const Config& config) {
  s.window = window;
  s.failed = false;
  s.fold = std::make_unique<exporters::TableFold>(export_options(config).table);
}

}  // namespace

void fold_streamed_segment(const Trace& segment, const Config& config) noexcept {
  StreamedTable& s = table_state();
  std::lock_guard lock(s.mutex);
  try {
    if (s.window != segment.window) start_fold(s, segment.window, config);
    if (s.fold) s.fold->add(segment);
  } catch (const std::bad_alloc&) {
    s.failed = true;
    s.fold.reset();
  }
}

std::string finish_streamed_table(const Trace& tail, const Config& config, std::string& error) noexcept {
  StreamedTable& s = table_state();
  std::lock_guard lock(s.mutex);
  try {
    if (s.window != tail.window || !s.fold) {
      error = s.failed ? "out of memory while folding its segments" : "its segments were not folded";
      s.fold.reset();
      return {};
    }
    s.fold->add(tail);
    const exporters::TableOptions options = export_options(config).table;
    const exporters::Table table = s.fold->table(tail.memory.enabled);
    s.fold.reset();
    return exporters::render_key_averages(table, options) + exporters::folded_memory_note(table.memory) +
           exporters::overhead_line(tail);
  } catch (const std::bad_alloc&) {
    s.fold.reset();
    error = "out of memory while making it";
    return {};
  }
}

}  // namespace profagent::agent
