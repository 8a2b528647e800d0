// The key_averages table of a streamed window (docs/streamed_windows.md), folded on the
// partial writer's thread as each segment is appended (exporters/summaries/streamed_table.h),
// and finished with the window's tail.
#pragma once

#include <string>

#include "agent/config.h"
#include "collector/trace.h"

namespace profagent::agent {

// Folds a segment of the window being streamed (a segment of a new window starts a new fold).
// Never throws: out of memory, the window's table is not made (said in its place).
void fold_streamed_segment(const Trace& segment, const Config& config) noexcept;

// The window's table from its segments and its tail: the text printed on stderr and written to
// <stem>.table.txt (the key_averages table, its row limit note, the memory note, the overhead
// line). "" with `error` set when it could not be made.
std::string finish_streamed_table(const Trace& tail, const Config& config, std::string& error) noexcept;

}  // namespace profagent::agent
