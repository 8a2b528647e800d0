// The key_averages table, the summaries and the folded stacks of a streamed window (docs/streamed_windows.md),
// folded on the partial writer's thread as each segment is appended
// (exporters/summaries/streamed_table.h, exporters/summaries/streamed_summaries.h), and
// finished with the window's tail.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent/config.h"
#include "collector/trace.h"
#include "exporters/json_writer.h"
#include "exporters/rank_table_fold.h"
#include "exporters/summaries/summaries.h"

namespace profagent::agent {

// Folds a segment of the window being streamed (a segment of a new window starts a new fold).
// Never throws: out of memory, the window's table is not made (said in its place). With
// PROFAGENT_PROFILE_MEMORY the segment's memory records are joined with it while it is folded
// (exporters/summaries/streamed_memory.h); it is given back as it came.
void fold_streamed_segment(Trace& segment, const Config& config) noexcept;

// Before the window's tail is written: its memory records and live allocations made by calls
// its segments wrote get those calls' call sites (exporters/summaries/streamed_memory.h).
void complete_streamed_memory(Trace& tail) noexcept;

// <stem>.rank.ndjson of a streamed window (exporters/rank_table_fold.h): its rows are in a
// temporary file until the table is written.
struct StreamedRankTable {
  std::unique_ptr<exporters::RankTableFold> fold;
  exporters::Summaries distributed;  // its Distributed Summary's rows, unless why_not says why not
  std::string why_not;
  bool write(const Trace& tail, exporters::JsonWriter& out) { return fold->write(tail, distributed, why_not, out); }
};

struct StreamedOutputs {
  // What is printed on stderr (the key_averages table, its row limit note, the memory note, the
  // step lines, brief, the overhead line); "" with `error` set when not made.
  std::string table;
  // <stem>.table.txt: the same with every step's line.
  std::string table_file;
  std::string error;
  // <stem>.summary.txt (streamed_summaries.h render_streamed_summaries); "" when no summary
  // is asked for (PROFAGENT_SUMMARIES=off) or the table was not made.
  std::string summaries;
  // The folded stacks files (exporters/folded_stacks.h), when asked for and the window has
  // stacks: (the suffix after "<stem>.", the text), as a whole window writes them.
  std::vector<std::pair<std::string, std::string>> folded;
  // <stem>.summary.ndjson (exporters/summary_json.h write_streamed_summary_json): the folded
  // table's rows and totals; "" when the table was not made (or ExportOptions::write_summary
  // is off).
  std::string summary_json;
  // Why summaries folded while it streamed were given up ("" when none was): the fold's bound,
  // steps that differ, a record that came after its step was made (streamed_summaries.h).
  std::string summaries_given_up;
  // The window's rank table, when it wants one (exporters/rank_table.h wants_rank_table) and
  // ExportOptions::write_summary is on; null otherwise or when its fold failed (rank_table_error).
  std::unique_ptr<StreamedRankTable> rank_table;
  std::string rank_table_error;
};

// The window's table and summaries from its segments and its tail.
StreamedOutputs finish_streamed_outputs(const Trace& tail, const Config& config) noexcept;

}  // namespace profagent::agent
