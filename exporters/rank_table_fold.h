// The per-rank table (rank_table.h) of a streamed window (docs/streamed_windows.md): its
// collective rows grow with the window's length (one per collective kernel), so they are not
// held. As each part (a segment, then the tail) is folded, its rows go to an unnamed temporary
// file (56 B a row, in $TMPDIR or /tmp, gone when the fold is); at the window's end the one-line
// object is written from the tail's head and steps (the window's), the Distributed Summary
// folded step by step (or null and why), and the rows read back from that file, 4,096 at a time.
// Rows keep agent-clock times and are converted to Unix ns with the window's offset at the end,
// the one its trace was written with. What is held: a 4 KiB file buffer, the read-back buffer
// (224 KiB, while the table is written) and the distinct collective names (a few) — nothing per row.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collector/trace.h"
#include "exporters/json_writer.h"
#include "exporters/summaries/summaries.h"

namespace profagent::exporters {

class RankTableFold {
 public:
  // Appends the collective rows of `part`; a failed write is kept (error()) and ends the fold.
  void add(const Trace& part);
  // Whether the window wants a table (rank_table.h wants_rank_table): a collective in any part,
  // or a job of more than one rank (`tail`: the window's last part).
  bool wanted(const Trace& tail) const;
  // The whole table; `distributed`: the window's Distributed Summary rows, unless `why_not` says
  // why it was not computed. False (and nothing sensible written) after error().
  bool write(const Trace& tail, const Summaries& distributed, std::string_view why_not, JsonWriter& out);
  const std::string& error() const { return error_; }
  uint64_t rows() const { return rows_; }

 private:
  struct Row {
    uint64_t comm_hash = 0, seq = 0, bytes = 0;
    uint64_t enqueue_ns = 0, start_ns = 0, end_ns = 0;  // agent clock
    uint32_t name = 0;                                  // into names_
  };
  bool open_file();
  uint32_t name_index(const char* collective);
  struct Close {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, Close> file_;
  std::vector<const char*> names_;  // CollectiveArgs::collective: static names
  uint64_t rows_ = 0;
  bool seen_collectives_ = false;
  std::string error_;
};

}  // namespace profagent::exporters
