// The key_averages table of a streamed window, folded part by part while the window is
// recorded (collector/segment_stream.h): each segment's joined Trace, then the tail, is made
// into its own table (tables.h build_table) and its rows are added by name (and input shapes)
// to the rows folded so far. What is held is one row per distinct name and shapes, whatever
// the window's length.
//
// Why this equals the table of the whole window joined at once: a row's numbers are sums over
// its records of figures that depend on a record and the records nested in it (its duration,
// its self time, the device work it and what it encloses issued); a segment holds every scope
// with what it encloses, and each call with its device records (a scope still open is held
// for a later segment with everything after its start), so each record's figures are those of
// the whole window. Rows whose sort keys are equal are ordered as the whole trace orders them:
// by where they first appear (TableRow::first_tid, first_start_ns).
// Memory columns (PROFAGENT_PROFILE_MEMORY): each segment is folded with the memory records of
// its calls (streamed_memory.h), the tail with its own, so each allocation counts in its call's
// row as in a whole window's table — but for records that came after their call's segment was
// folded: folded_memory_note() says how many under the table.
// group_by_stack_n rows are split by source line as a whole window's: every part numbers
// its stacks in the window's one list (collector/stack_symbols.h StreamedStacks), and a row's key
// is its Source Location's text.
#pragma once

#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "collector/trace.h"
#include "exporters/summaries/tables.h"

namespace profagent::exporters {

class TableFold {
 public:
  explicit TableFold(TableOptions options) : options_(std::move(options)) {}
  // Adds one part of the window (a segment or the tail); `costs`: host_costs(part), when made already.
  void add(const Trace& part);
  void add(const Trace& part, const HostCosts& costs);
  // The table of every part added, as build_table makes it; `memory`: the window profiled memory.
  Table table(bool memory) const;
  std::size_t rows() const { return rows_.size(); }
  uint64_t parts() const { return parts_; }

 private:
  struct Folded {
    TableRow row;
    // Its first host record (thread, start, longest first), if any, and first device record's
    // start: where the whole trace makes the row.
    std::tuple<uint32_t, uint64_t, uint64_t> first_on_host{UINT32_MAX, UINT64_MAX, UINT64_MAX};
    uint64_t first_on_device = UINT64_MAX;
    bool on_host() const { return std::get<0>(first_on_host) != UINT32_MAX || std::get<1>(first_on_host) != UINT64_MAX; }
  };
  TableOptions options_;
  std::unordered_map<std::string, Folded> rows_;  // by name '\0' shapes (or source location)
  uint64_t parts_ = 0;
};

// The line under a folded table whose memory columns leave out `unplaced` allocation records
// (MemoryCallsFold::unplaced(); "" when none).
std::string folded_memory_note(uint64_t unplaced);

}  // namespace profagent::exporters
