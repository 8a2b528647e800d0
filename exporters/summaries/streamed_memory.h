// A streamed window's memory records and their calls (docs/streamed_windows.md). With
// PROFAGENT_PROFILE_MEMORY the window's memory records are bounded by the allocation ledger
// and come whole with its tail, but the calls that made them may have been written in earlier
// segments, where the tail's join cannot find them. So, as each segment is folded, the records
// booked since the last one (collector/memory_ledger.h memory_records_since) wait for their
// calls, and a segment that holds a record's call
//   - gets the record, joined with that call, for its own table (so the table's memory columns
//     count it in its call's row and the rows around it, as a whole window's do), and
//   - keeps where the call was (start, name, innermost operator or range, call site): one entry
//     per memory record at most, bounded as the records are.
// At the window's end the tail's records and live allocations whose calls are in earlier
// segments get those calls' call sites before the trace's tail is written (so the trace names
// them as a whole window's trace does), and the memory summary places them with the entries
// (memory_summary.h EarlierCalls). What a segment cannot join is counted (unplaced()).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "collector/trace.h"
#include "exporters/summaries/memory_summary.h"

namespace profagent::exporters {

class MemoryCallsFold {
 public:
  // Records booked since the last segment (those naming no call are left out).
  void want(std::vector<MemoryRecord> records);
  // A segment: the waiting records whose calls it holds, each joined with its call
  // (MemoryRecord::host), for the segment's table; where those calls were is kept.
  std::vector<MemoryRecord> add(const Trace& segment);
  // The tail, before it is written: its memory records and live allocations whose calls are in
  // earlier segments get those calls' call sites (Trace::memory.call_sites, LiveAllocation::
  // call_site and call_ns), as a whole window's trace has them.
  void complete(Trace& tail) const;
  const EarlierCalls& calls() const { return calls_; }
  // Allocation records of the window that count in no row of its table although a whole
  // window's might: those booked after their call's segment was folded (the device's echo of a
  // call can come late), and the tail's records the device reported with no hooked call, which
  // found no call in the tail (theirs may be in an earlier segment).
  uint64_t unplaced(const Trace& tail) const;

 private:
  std::unordered_map<uint64_t, std::vector<MemoryRecord>> waiting_;  // by their call's event id
  EarlierCalls calls_;
};

}  // namespace profagent::exporters
